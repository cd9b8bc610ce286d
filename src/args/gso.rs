//! `--gso SIZE` (run, sweep): UDP GSO's segment size, checked against what the kernel takes
//! (UDP_SEGMENT in udp(7)): a segment is one datagram's payload, so at most the IPv4 limit and,
//! in a network namespace, what fits the veth's MTU; one send carries at most 65507 B and the
//! kernel's UDP_MAX_SEGMENTS segments (more needs --udp-split); and every datagram, the last
//! one included, must hold its 4-byte sequence number. And what zero copy over udp may pin.
use crate::cli::GsoArgs;
use crate::config::{parse_bytes, Network};
use crate::error::{bad, ConfigError};
use crate::transport::framing::{Framing, SEQ_BYTES, UDP_MAX_PAYLOAD};
use crate::transport::Transport;

/// `run`'s `--gso` and message size: with GSO the size is checked against the segments, without
/// it against one datagram (`config::check_datagram_size`).
pub fn run_gso(
    args: &GsoArgs,
    transport: Transport,
    network: &Network,
    message_size: usize,
    split: bool,
) -> Result<Option<usize>, ConfigError> {
    let gso = gso(args, transport, network, &[message_size], split)?;
    if gso.is_none() {
        crate::config::check_datagram_size(transport, message_size, split)?;
    }
    Ok(gso)
}

/// IPv4 and UDP header bytes every segment carries on the wire.
const HEADERS: usize = 28;
/// What the point's mechanism needs of its datagram sends (its descriptor's `datagram_sends`:
/// zerocopy's pages), refused before the run in the mechanism's words.
pub fn check_datagram_sends(spec: &crate::config::RunSpec) -> Result<(), ConfigError> {
    match spec.framing() {
        Some(framing) => (spec.mechanism.datagram_sends)(&framing, spec.message_size).map_err(bad),
        None => Ok(()),
    }
}

/// The segment size `--gso` asks for, checked for `transport` and every message size, or
/// `None` without the flag.
pub fn gso(
    args: &GsoArgs,
    transport: Transport,
    network: &Network,
    sizes: &[usize],
    split: bool,
) -> Result<Option<usize>, ConfigError> {
    let Some(text) = args.gso.as_deref() else {
        return Ok(None);
    };
    let segment = parse_bytes(text)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            bad::<ConfigError>(format!(
                "--gso {text:?}: not a size; allowed: {SEQ_BYTES} to {UDP_MAX_PAYLOAD} B (e.g. 1472, 8K)"
            ))
        })?;
    if transport != Transport::Udp {
        return Err(bad(format!(
            "--gso {text} with --transport {}: UDP GSO (UDP_SEGMENT) cuts UDP sends into datagrams; allowed only with udp",
            transport.name()
        )));
    }
    let veth = match (network.is_netns(), network.is_sink()) {
        (true, _) => Some("--netns"),
        (_, true) => Some("--sink"),
        _ => None,
    };
    let mtu = veth.map(|_| network.mtu.unwrap_or(crate::config::network::DEFAULT_MTU) as usize);
    if let Some(mtu) = mtu.filter(|&mtu| segment + HEADERS > mtu) {
        let veth = veth.unwrap_or_default();
        return Err(bad(format!(
            "--gso {text} with {veth} at MTU {mtu}: a segment leaves as one datagram, {HEADERS} B of IPv4 and UDP header included, and the kernel refuses one above the MTU (EINVAL); allowed: {SEQ_BYTES} to {} B, or a larger --mtu",
            mtu - HEADERS
        )));
    }
    for &size in sizes {
        Framing::segmented(
            size,
            segment,
            crate::transport::framing::gso_max_segments(),
            split,
        )
        .map_err(|e| bad::<ConfigError>(format!("--size {e}")))?;
    }
    Ok(Some(segment))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gso_of(text: &str, transport: Transport, sizes: &[usize]) -> Result<Option<usize>, String> {
        let args = GsoArgs {
            gso: Some(text.into()),
        };
        gso(&args, transport, &Network::default(), sizes, false).map_err(|e| e.0)
    }

    #[test]
    fn a_segment_size_is_taken_for_udp_and_every_size() {
        assert_eq!(
            gso_of("1472", Transport::Udp, &[4096, 65_536 - 1472 * 3]),
            Ok(Some(1472))
        );
        // 64 KiB in 8 KiB segments is two sends (7 segments fit 65507 B): refused without
        // --udp-split, as the line says.
        let e = gso_of("8K", Transport::Udp, &[64 << 10]).unwrap_err();
        assert!(
            e.contains("at most 7 segments") && e.contains("as 2 sends"),
            "{e}"
        );
        let none = gso(
            &GsoArgs::default(),
            Transport::Tcp,
            &Network::default(),
            &[8],
            false,
        );
        assert_eq!(none.unwrap(), None);
    }

    #[test]
    fn bounds_are_refused_with_the_reason() {
        let e = gso_of("1472", Transport::Tcp, &[4096]).unwrap_err();
        assert!(
            e.contains("--transport tcp") && e.contains("allowed only with udp"),
            "{e}"
        );
        let e = gso_of("65508", Transport::Udp, &[4096]).unwrap_err();
        assert!(e.contains("allowed: 4 to 65507 B"), "{e}");
        let e = gso_of("ten", Transport::Udp, &[4096]).unwrap_err();
        assert!(e.starts_with("--gso \"ten\": not a size"), "{e}");
        let e = gso_of("1472", Transport::Udp, &[1 << 20]).unwrap_err();
        assert!(
            e.starts_with("--size 1048576 B with --gso 1472") && e.contains("--udp-split"),
            "{e}"
        );
        let e = gso_of("1000", Transport::Udp, &[2002]).unwrap_err();
        assert!(e.contains("last datagram would carry 2 B"), "{e}");
    }

    #[test]
    fn zerocopy_sends_that_would_pin_more_pages_than_the_kernel_takes_are_refused() {
        let udp_with = |mechanism, size: usize, gso: Option<usize>| crate::config::RunSpec {
            transport: Transport::Udp,
            mechanism,
            gso,
            ..crate::config::RunSpec::plain(size, std::time::Duration::from_secs(1))
        };
        let udp = |size, gso| udp_with(crate::mechanism::MechanismKind::ZEROCOPY, size, gso);
        assert!(check_datagram_sends(&udp(32 << 10, None)).is_ok());
        let e = check_datagram_sends(&udp(40 << 10, None)).unwrap_err().0;
        assert!(
            e.contains("may pin 24 pages") && e.contains("at most 17"),
            "{e}"
        );
        assert!(check_datagram_sends(&udp(40 << 10, Some(1472))).is_err());
        // uring-zc's one buffer fits: the check is the mechanism's own.
        let uring_zc = udp_with(crate::mechanism::MechanismKind::URING_ZC, 40 << 10, None);
        assert!(check_datagram_sends(&uring_zc).is_ok());
        let tcp = crate::config::RunSpec {
            mechanism: crate::mechanism::MechanismKind::ZEROCOPY,
            ..crate::config::RunSpec::plain(1 << 20, std::time::Duration::from_secs(1))
        };
        assert!(check_datagram_sends(&tcp).is_ok());
    }

    #[test]
    fn in_a_namespace_a_segment_must_fit_the_veth_mtu() {
        let netns = Network {
            placement: crate::transport::network::Placement::Netns,
            mtu: Some(1500),
            netem: None,
        };
        let args = GsoArgs {
            gso: Some("1473".into()),
        };
        let e = gso(&args, Transport::Udp, &netns, &[4096], false)
            .unwrap_err()
            .0;
        assert!(
            e.contains("MTU 1500") && e.contains("allowed: 4 to 1472 B"),
            "{e}"
        );
        let args = GsoArgs {
            gso: Some("1472".into()),
        };
        assert_eq!(
            gso(&args, Transport::Udp, &netns, &[4096], false).unwrap(),
            Some(1472)
        );
    }
}
