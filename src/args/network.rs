//! `--netns`, `--mtu`, `--netem` -> a validated `Network`: where the two sides of every flow
//! run. One parser for every command (run, sweep, ipc, file), so the flags mean the same
//! everywhere and each refusal is the same one line; run and sweep also take `--sink`
//! (`placement`).
use crate::cli::{NetworkArgs, SinkArgs};
use crate::config::network::{
    Network, Placement, DEFAULT_MTU, MTU_RANGE, SINK_MTU, SINK_MTU_WITH_GSO,
};
use crate::config::Pattern;
use crate::error::ConfigError;
use crate::mechanism::{MechanismKind, Transports};
use crate::transport::framing::{SEQ_BYTES, UDP_MAX_PAYLOAD};
use crate::transport::Transport;

/// The placement run and sweep ask for: `--sink`, or what `network` makes of the other flags.
/// `gso_given` says whether UDP GSO (`--gso`) is asked for, which makes the sink's default MTU
/// an Ethernet one, as a NIC would have; run and sweep pass `false` until that flag exists.
pub fn placement(
    args: &NetworkArgs,
    sink: &SinkArgs,
    gso_given: bool,
) -> Result<Network, ConfigError> {
    if !sink.sink {
        return network(args);
    }
    if args.netns {
        return Err(ConfigError(
            "--sink with --netns: the sink builds its own pair of namespaces (the sender's, and a peer's where nothing listens); give one of them".into(),
        ));
    }
    if let Some(netem) = &args.netem {
        return Err(ConfigError(format!(
            "--netem {netem:?} with --sink: nothing answers or acknowledges on a sink, so delay and loss would change nothing the sender sees; leave out --netem"
        )));
    }
    let mtu = match &args.mtu {
        None if gso_given => SINK_MTU_WITH_GSO,
        None => SINK_MTU,
        Some(text) => parse_mtu(text)?,
    };
    Ok(Network {
        placement: Placement::Sink,
        mtu: Some(mtu),
        netem: None,
    })
}

/// The placement `--netns`, `--mtu` and `--netem` ask for.
pub fn network(args: &NetworkArgs) -> Result<Network, ConfigError> {
    if !args.netns {
        let given = [("--mtu", &args.mtu), ("--netem", &args.netem)];
        if let Some((flag, Some(value))) = given.iter().find(|(_, v)| v.is_some()) {
            return Err(ConfigError(format!(
                "{flag} {value:?}: applies to the veth pair of --netns only; add --netns or leave it out"
            )));
        }
        return Ok(Network::default());
    }
    let mtu = match &args.mtu {
        None => DEFAULT_MTU,
        Some(text) => parse_mtu(text)?,
    };
    let netem = match &args.netem {
        None => None,
        Some(text) => Some(parse_netem(text)?),
    };
    Ok(Network {
        placement: Placement::Netns,
        mtu: Some(mtu),
        netem,
    })
}

/// `sweep --sink`: what only a sweep names (its lists of patterns and mechanisms), refused in
/// the sweep's own words before each point is checked as a run would be (`check_sink`). The
/// sizes are refused per point, as `run --size`.
pub fn check_sweep_sink(
    patterns: &[Pattern],
    mechanisms: &[MechanismKind],
    known: &[MechanismKind],
) -> Result<(), ConfigError> {
    if let Some(p) = patterns.iter().find(|p| **p != Pattern::Stream) {
        return Err(ConfigError(format!(
            "--patterns {p} with --sink: nothing answers on a sink, and {p} needs an answer to every request; allowed with --sink: --patterns stream"
        )));
    }
    let on_udp = |m: &MechanismKind| match m.transports {
        Transports::Only {
            transports,
            because,
        } if !transports.contains(&Transport::Udp) => Err(because),
        _ => Ok(()),
    };
    for m in mechanisms {
        if let Err(because) = on_udp(m) {
            let allowed: Vec<&str> = known
                .iter()
                .filter(|k| on_udp(k).is_ok())
                .map(|k| k.name())
                .collect();
            return Err(ConfigError(format!(
                "--mechanisms {} with --sink: a sink's flows are udp, and {because}; allowed with --sink: {}",
                m.name(),
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

/// `sweep --sink --sizes`: every size one UDP datagram carries whole (a sweep has no
/// `--udp-split`).
pub fn check_sweep_sink_sizes(sizes: &[usize]) -> Result<(), ConfigError> {
    let carried = SEQ_BYTES..=UDP_MAX_PAYLOAD;
    match sizes.iter().find(|s| !carried.contains(s)) {
        Some(size) => Err(ConfigError(format!(
            "--sizes {size} with --sink: one UDP datagram carries a message whole, and holds {SEQ_BYTES} B (its sequence number) to {UDP_MAX_PAYLOAD} B (65535 less 28 B of IP and UDP header); allowed with --sink: sizes from {SEQ_BYTES} to {UDP_MAX_PAYLOAD} B, or add --udp-split to send a larger message as several datagrams"
        ))),
        None => Ok(()),
    }
}

fn parse_mtu(text: &str) -> Result<u32, ConfigError> {
    match text.trim().parse::<u32>() {
        Ok(n) if MTU_RANGE.contains(&n) => Ok(n),
        _ => Err(ConfigError(format!(
            "--mtu {text:?}: allowed: a whole number of bytes from {} to {} (1500 is Ethernet, 9000 jumbo frames)",
            MTU_RANGE.start(),
            MTU_RANGE.end()
        ))),
    }
}

/// netem's own grammar is checked by `tc` when the link is set up; here only what would break
/// the command line handed to it: nothing empty, no control characters.
fn parse_netem(text: &str) -> Result<String, ConfigError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() || text.chars().any(char::is_control) {
        return Err(ConfigError(format!(
            "--netem {text:?}: allowed: tc netem parameters such as \"delay 1ms rate 10gbit loss 0.1%\" (see tc-netem(8))"
        )));
    }
    Ok(words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Transport;

    fn args(netns: bool, mtu: Option<&str>, netem: Option<&str>) -> NetworkArgs {
        NetworkArgs {
            netns,
            mtu: mtu.map(String::from),
            netem: netem.map(String::from),
        }
    }

    #[test]
    fn netns_defaults_to_an_ethernet_mtu_and_loopback_records_none() {
        let n = network(&args(true, None, None)).unwrap();
        assert_eq!(
            (n.placement, n.mtu, n.netem),
            (Placement::Netns, Some(1500), None)
        );
        let n = network(&args(false, None, None)).unwrap();
        assert_eq!((n.placement, n.mtu), (Placement::Loopback, None));
    }

    #[test]
    fn mtu_outside_what_ipv4_allows_is_refused_with_the_range() {
        for text in ["5", "67", "65536", "big", ""] {
            let e = network(&args(true, Some(text), None)).unwrap_err().0;
            assert!(e.starts_with("--mtu") && e.contains("68 to 65535"), "{e}");
        }
        let n = network(&args(true, Some("65520"), None)).unwrap();
        assert_eq!(n.mtu, Some(65520));
    }

    #[test]
    fn mtu_and_netem_without_netns_are_refused_naming_the_flag() {
        let e = network(&args(false, Some("9000"), None)).unwrap_err().0;
        assert!(
            e.starts_with("--mtu \"9000\"") && e.contains("add --netns"),
            "{e}"
        );
        let e = network(&args(false, None, Some("delay 1ms")))
            .unwrap_err()
            .0;
        assert!(e.starts_with("--netem \"delay 1ms\""), "{e}");
    }

    #[test]
    fn netem_is_kept_as_words_and_an_empty_one_is_refused() {
        let n = network(&args(true, None, Some("  delay 1ms   loss 0.1% "))).unwrap();
        assert_eq!(n.netem.as_deref(), Some("delay 1ms loss 0.1%"));
        let e = network(&args(true, None, Some(" "))).unwrap_err().0;
        assert!(e.contains("tc-netem(8)"), "{e}");
    }

    #[test]
    fn the_sink_defaults_to_the_largest_mtu_and_refuses_netns_and_netem() {
        let sink = SinkArgs { sink: true };
        let n = placement(&args(false, None, None), &sink, false).unwrap();
        assert_eq!((n.placement, n.mtu), (Placement::Sink, Some(65_535)));
        let n = placement(&args(false, None, None), &sink, true).unwrap();
        assert_eq!(n.mtu, Some(1500), "with UDP GSO, an Ethernet MTU");
        let n = placement(&args(false, Some("9000"), None), &sink, true).unwrap();
        assert_eq!(n.mtu, Some(9000));
        let e = placement(&args(true, None, None), &sink, false)
            .unwrap_err()
            .0;
        assert!(e.starts_with("--sink with --netns:"), "{e}");
        let e = placement(&args(false, None, Some("delay 1ms")), &sink, false)
            .unwrap_err()
            .0;
        assert!(e.starts_with("--netem \"delay 1ms\" with --sink:"), "{e}");
        let e = placement(&args(false, Some("5"), None), &sink, false)
            .unwrap_err()
            .0;
        assert!(e.contains("68 to 65535"), "{e}");
        let plain = placement(&args(true, None, None), &SinkArgs::default(), false).unwrap();
        assert_eq!(plain.placement, Placement::Netns);
    }

    #[test]
    fn only_ip_transports_cross_namespaces() {
        let netns = network(&args(true, None, None)).unwrap();
        assert!(netns.check_transport(Transport::Tcp).is_ok());
        assert!(netns.check_transport(Transport::Udp).is_ok());
        for t in [
            Transport::Unix,
            Transport::UnixDgram,
            Transport::Pipe,
            Transport::Shm,
        ] {
            let e = netns.check_transport(t).unwrap_err().0;
            assert!(e.contains("allowed with --netns: tcp, udp"), "{e}");
            assert!(Network::default().check_transport(t).is_ok());
        }
    }
}
