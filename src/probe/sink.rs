//! `bytepath probe`'s sink row: whether `--sink` works here, tried as a run uses it. A sink is
//! built (two namespaces and a veth pair, no route off the machine), one UDP datagram is sent
//! into it with MSG_ZEROCOPY, its completion is read from the error queue (copied or not:
//! `SO_EE_CODE_ZEROCOPY_COPIED`) and the peer veth's receive counter says it arrived. This
//! goes through `sys` directly, so it answers whatever the zero-copy mechanisms allow on UDP.
use crate::sys::netns::in_netns;
use crate::sys::socket::{enable_zerocopy, send, MSG_ZEROCOPY};
use crate::sys::zerocopy::{read_error_queue, ErrorQueueEntry};
use crate::transport::network::SINK_MTU;
use crate::transport::sink::{SinkLink, DISCARD_PORT, ETHERNET_HEADER, IPV4_HEADER, UDP_HEADER};
use serde::Serialize;
use std::net::UdpSocket;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// The payload of the one datagram sent.
const PROBE_BYTES: usize = 8192;
/// How long the completion may take to arrive (it comes when the veth frees the buffer).
const COMPLETION_WAIT: Duration = Duration::from_secs(1);

const TRIED: &str = "one UDP datagram of 8 KiB sent with MSG_ZEROCOPY (SO_ZEROCOPY set) into a sink of MTU 65535 (--sink's namespaces and veth pair), its completion read from the error queue and the peer veth's receive counter read";

/// Whether a sink works here, and whether the kernel copied its zero-copy send.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SinkProbe {
    pub available: bool,
    /// The send's completion flagged the bytes copied (`SO_EE_CODE_ZEROCOPY_COPIED`); `null`
    /// when no completion arrived.
    pub zero_copy_copied: Option<bool>,
    /// What the peer veth received for the datagram (payload and 42 B of headers).
    pub peer_rx_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    pub tried: &'static str,
}

/// Builds a sink, sends into it once, removes it. Never fails: what did not work says why.
pub fn measure() -> SinkProbe {
    let mut probe = SinkProbe {
        available: false,
        zero_copy_copied: None,
        peer_rx_bytes: None,
        unavailable_reason: None,
        tried: TRIED,
    };
    match send_once() {
        Ok((copied, rx)) => {
            let expected = PROBE_BYTES as u64 + ETHERNET_HEADER + IPV4_HEADER + UDP_HEADER;
            probe.zero_copy_copied = copied;
            probe.peer_rx_bytes = Some(rx);
            probe.unavailable_reason = match (rx == expected, copied) {
                (false, _) => Some(format!(
                    "the peer veth received {rx} B for one datagram of {expected} B with its headers"
                )),
                (true, None) => Some(format!(
                    "the datagram reached the sink but no zero-copy completion arrived within {} s",
                    COMPLETION_WAIT.as_secs()
                )),
                (true, Some(_)) => None,
            };
            probe.available = probe.unavailable_reason.is_none();
        }
        Err(why) => probe.unavailable_reason = Some(why),
    }
    probe
}

/// The send: whether its completion said copied, and the peer's received bytes.
fn send_once() -> Result<(Option<bool>, u64), String> {
    if !crate::sys::is_root() {
        return Err("a sink needs root to create network namespaces".into());
    }
    let sink = SinkLink::create(SINK_MTU).map_err(|e| e.to_string())?;
    let n = &sink.pair.names;
    let socket = in_netns(&sink.pair.sender_ns, || {
        let socket = UdpSocket::bind((n.sender_addr, 0))?;
        socket.connect((n.receiver_addr, DISCARD_PORT))?;
        Ok(socket)
    })
    .map_err(|e| format!("a UDP socket in the sink's namespace: {e}"))?;
    enable_zerocopy(socket.as_fd()).map_err(|e| format!("setsockopt(SO_ZEROCOPY): {e}"))?;
    let before = sink
        .counters()
        .map_err(|e| format!("the veth counters: {e}"))?;
    send(socket.as_fd(), &[7u8; PROBE_BYTES], MSG_ZEROCOPY)
        .map_err(|e| format!("send with MSG_ZEROCOPY: {e}"))?;
    let copied = completion(&socket)?;
    let after = sink
        .counters()
        .map_err(|e| format!("the veth counters: {e}"))?;
    Ok((copied, after.since(&before).peer.rx_bytes))
}

/// The one completion's copied flag, or `None` when none arrived in time.
fn completion(socket: &UdpSocket) -> Result<Option<bool>, String> {
    let start = Instant::now();
    while start.elapsed() < COMPLETION_WAIT {
        match read_error_queue(socket.as_fd()) {
            Ok(Some(ErrorQueueEntry::Completion(range))) => return Ok(Some(range.copied)),
            Ok(Some(ErrorQueueEntry::Other { origin, errno })) => {
                return Err(format!(
                    "the error queue held a socket error (origin {origin}, errno {errno}), not a completion"
                ))
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => return Err(format!("reading the error queue: {e}")),
        }
    }
    Ok(None)
}

/// The probe's line: works, and copied or not, or why not.
pub fn describe(p: &SinkProbe) -> String {
    match (&p.unavailable_reason, p.zero_copy_copied) {
        (None, Some(false)) => "yes (a zero-copy send reached the sink and was not copied)".into(),
        (None, _) => "yes, but the kernel copied the zero-copy send (see docs/sink.md)".into(),
        (Some(why), _) => format!("no ({why})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_copied_or_not_or_why_not() {
        let p = |copied, why: Option<&str>| SinkProbe {
            available: why.is_none(),
            zero_copy_copied: copied,
            peer_rx_bytes: None,
            unavailable_reason: why.map(String::from),
            tried: TRIED,
        };
        assert!(describe(&p(Some(false), None)).contains("was not copied"));
        assert!(describe(&p(Some(true), None)).contains("copied the zero-copy send"));
        assert_eq!(
            describe(&p(None, Some("a sink needs root"))),
            "no (a sink needs root)"
        );
    }

    #[test]
    fn a_zero_copy_send_into_a_sink_reaches_it_and_is_not_copied() {
        if !crate::sys::is_root() {
            crate::skip_test(None, "a sink needs root to create network namespaces");
            return;
        }
        let p = measure();
        if let Some(why) = p
            .unavailable_reason
            .as_deref()
            .filter(|w| w.contains("ip command"))
        {
            crate::skip_test(None, why);
            return;
        }
        assert_eq!(p.peer_rx_bytes, Some(8192 + 42), "{p:?}");
        assert_eq!(p.zero_copy_copied, Some(false), "{p:?}");
        assert!(p.available, "{p:?}");
    }
}
