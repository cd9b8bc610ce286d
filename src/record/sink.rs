//! The `sink` block of a record made on a sink (`--sink`): where the sender's bytes went and
//! what the sink cost. The sender's own figures (Gbit/s and messages/s the kernel accepted,
//! CPU-ns per byte) are the record's one side; this block adds the proof that every byte left
//! the socket (the peer veth's receive counters against what the sender handed over, headers
//! accounted), the softirq on the sending threads' CPUs, and what the zero-copy completions say
//! on a path with no local receiver.
use super::{RunRecord, ZerocopyReport};
use crate::config::RunSpec;
use crate::engine::worker::Role;
use crate::engine::RunOutcome;
use crate::transport::datagram::Framing;
use crate::transport::sink::{ETHERNET_HEADER, IPV4_HEADER, UDP_HEADER};
use serde::{Deserialize, Serialize};

/// What a sink's veth counted, against what the sender sent, over the whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SinkReport {
    pub mtu_bytes: u32,
    /// Messages the sending threads handed to the kernel over the whole run (warm-up and
    /// drain included), every flow.
    pub messages_sent: u64,
    /// Their bytes: the message payload, each datagram's sequence number inside it.
    pub payload_bytes_sent: u64,
    /// The UDP datagrams those messages went out as, with one zero-length end marker per flow.
    pub datagrams_expected: u64,
    /// The IP packets those datagrams make on the veth (more where one is fragmented).
    pub packets_expected: u64,
    /// The bytes the veth counts for them: the payload, 8 B of UDP header per datagram, and
    /// 20 B of IPv4 and 14 B of Ethernet header per packet.
    pub veth_bytes_expected: u64,
    /// What the peer end of the veth received, read inside the peer namespace before and
    /// after the run (the counters `/sys/class/net/<dev>/statistics` shows there).
    pub peer_rx_bytes: Option<u64>,
    pub peer_rx_packets: Option<u64>,
    /// Packets the peer end dropped on receive, and the sending end could not pass on.
    pub peer_rx_dropped: Option<u64>,
    pub sender_tx_dropped: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters_unavailable_reason: Option<String>,
    /// The peer end counted exactly the expected bytes and packets: every byte the sender
    /// handed over left its socket and was dropped at the sink, none went elsewhere.
    pub every_byte_reached_the_sink: Option<bool>,
    /// The CPUs the sending threads were pinned to.
    pub sender_cpus: Vec<usize>,
    /// Softirq time on those CPUs over the measured phase (/proc/stat).
    pub sender_cpus_softirq_s: Option<f64>,
    /// The same per payload byte the sender handed over in the measured phase.
    pub sender_cpus_softirq_ns_per_byte: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softirq_unavailable_reason: Option<String>,
    /// What the softirq figure covers.
    pub softirq_covers: String,
    pub summary: String,
}

/// What the softirq figure covers, as every sink record states it.
pub const SOFTIRQ_COVERS: &str = "softirq time on the CPUs the sending threads were pinned to, over the measured phase (/proc/stat): the veth's receive processing and the drop at the peer end run there, in softirq on the CPU that sent; any other softirq work of those CPUs (timers, RCU) is in it too. Where the kernel accounts CPU by ticks without CONFIG_IRQ_TIME_ACCOUNTING, softirq run inside a sending thread's system call is also in that thread's CPU sys time, so the two figures overlap and are not to be added";

/// Bytes of header a packet adds on the veth beyond its IP payload, and the IPv4 header.
const PACKET_HEADERS: u64 = ETHERNET_HEADER + IPV4_HEADER;

/// The packets one UDP datagram of `payload` bytes makes at `mtu`, and the bytes the veth
/// counts for them (each fragment carries at most the MTU less the IPv4 header, a multiple
/// of 8, of the UDP datagram).
pub fn on_the_veth(payload: u64, mtu: u32) -> (u64, u64) {
    let datagram = payload + UDP_HEADER;
    let room = u64::from(mtu).saturating_sub(IPV4_HEADER);
    // A datagram that fits goes whole; only fragments (all but the last) carry a multiple of 8.
    let per_fragment = (room / 8 * 8).max(8);
    let packets = match datagram <= room {
        true => 1,
        false => datagram.div_ceil(per_fragment),
    };
    (packets, datagram + packets * PACKET_HEADERS)
}

/// The datagrams, packets and veth bytes one message makes. With UDP GSO (`--gso`) a send
/// crosses the veth whole, as one packet with one set of headers (the peer counts it so, and
/// drops it before anything would cut it into its datagrams), though it stands for a datagram
/// per segment.
fn per_message(framing: &Framing, mtu: u32) -> (u64, u64, u64) {
    if framing.gso.is_some() {
        return (0..framing.sends()).fold((0, 0, 0), |(d, p, b), send| {
            let payload = framing.send_range(send).len() as u64;
            let datagrams = framing.send_parts(send).len() as u64;
            (
                d + datagrams,
                p + 1,
                b + payload + UDP_HEADER + PACKET_HEADERS,
            )
        });
    }
    (0..framing.parts).fold((0, 0, 0), |(d, p, b), part| {
        let (packets, bytes) = on_the_veth(framing.part_range(part).len() as u64, mtu);
        (d + 1, p + packets, b + bytes)
    })
}

/// The block of a run on a sink; `None` off one.
pub(super) fn report(
    spec: &RunSpec,
    outcome: &RunOutcome,
    measured_payload: u64,
) -> Option<SinkReport> {
    let counted = outcome.sink.as_ref()?;
    let mtu = spec
        .network
        .mtu
        .unwrap_or(crate::transport::network::SINK_MTU);
    let senders: Vec<_> = outcome
        .samples
        .iter()
        .filter(|s| s.role == Role::Sender)
        .collect();
    let messages: u64 = senders.iter().map(|s| s.total_messages).sum();
    let markers = senders.iter().filter(|s| s.error.is_none()).count() as u64;
    let (d, p, b) = spec.framing().map_or((1, 1, 0), |f| per_message(&f, mtu));
    let (_, marker_bytes) = on_the_veth(0, mtu);
    let mut report = SinkReport {
        mtu_bytes: mtu,
        messages_sent: messages,
        payload_bytes_sent: senders.iter().map(|s| s.sent_bytes).sum(),
        datagrams_expected: messages * d + markers,
        packets_expected: messages * p + markers,
        veth_bytes_expected: messages * b + markers * marker_bytes,
        softirq_covers: SOFTIRQ_COVERS.into(),
        ..SinkReport::default()
    };
    match counted {
        Ok(c) => {
            report.peer_rx_bytes = Some(c.peer.rx_bytes);
            report.peer_rx_packets = Some(c.peer.rx_packets);
            report.peer_rx_dropped = Some(c.peer.rx_dropped);
            report.sender_tx_dropped = Some(c.sender.tx_dropped);
            report.every_byte_reached_the_sink = Some(
                c.peer.rx_bytes == report.veth_bytes_expected
                    && c.peer.rx_packets == report.packets_expected,
            );
        }
        Err(why) => report.counters_unavailable_reason = Some(why.clone()),
    }
    softirq(&mut report, spec, outcome, measured_payload);
    report.summary = report.describe();
    Some(report)
}

/// The softirq of the sending threads' CPUs, or why it cannot be told apart.
fn softirq(report: &mut SinkReport, spec: &RunSpec, outcome: &RunOutcome, payload: u64) {
    let cpus: Option<Vec<usize>> = (0..spec.threads)
        .map(|f| spec.placement(f).sender_cpu)
        .collect();
    let Some(mut cpus) = cpus else {
        report.softirq_unavailable_reason = Some(
            "the sending threads were not pinned (--pin), so no CPU's softirq is theirs alone; machine_wide_cpu has every CPU's".into(),
        );
        return;
    };
    cpus.sort_unstable();
    cpus.dedup();
    let Some(per_cpu) = &outcome.softirq_by_cpu else {
        report.softirq_unavailable_reason = Some(
            "/proc/stat was not read in time around the measured phase (see machine_wide_cpu)"
                .into(),
        );
        report.sender_cpus = cpus;
        return;
    };
    let seconds: f64 = per_cpu
        .iter()
        .filter(|(cpu, _)| cpus.contains(cpu))
        .map(|(_, s)| s)
        .sum();
    report.sender_cpus_softirq_s = Some(seconds);
    report.sender_cpus_softirq_ns_per_byte = (payload > 0).then(|| seconds * 1e9 / payload as f64);
    report.sender_cpus = cpus;
}

impl SinkReport {
    /// One line: where the bytes went.
    pub fn describe(&self) -> String {
        let counted = match (self.peer_rx_bytes, self.peer_rx_packets) {
            (Some(bytes), Some(packets)) => format!(
                "the peer veth received {bytes} B in {packets} packets against {} B in {} packets expected ({} B of payload in {} datagrams, with 8 B of UDP, 20 B of IPv4 and 14 B of Ethernet header)",
                self.veth_bytes_expected,
                self.packets_expected,
                self.payload_bytes_sent,
                self.datagrams_expected
            ),
            _ => format!(
                "the veth counters are n/a ({})",
                self.counters_unavailable_reason.as_deref().unwrap_or("not read")
            ),
        };
        let verdict = match self.every_byte_reached_the_sink {
            Some(true) => ": every byte sent left the socket and was dropped at the sink",
            Some(false) => ": NOT every byte sent reached the sink",
            None => "",
        };
        format!("{counted}{verdict}")
    }
}

/// A point's sink block from its visits': each visit's block with the payload bytes of its
/// measured phase (the sender side's). Every count is summed (each visit's counters were read
/// around that visit alone), the softirq over the same measured phases and divided by their
/// bytes; `None` off a sink.
pub fn combine(visits: &[(&SinkReport, u64)]) -> Option<SinkReport> {
    let ((first, _), rest) = visits.split_first()?;
    let mut total = (*first).clone();
    for (b, _) in rest {
        total.messages_sent += b.messages_sent;
        total.payload_bytes_sent += b.payload_bytes_sent;
        total.datagrams_expected += b.datagrams_expected;
        total.packets_expected += b.packets_expected;
        total.veth_bytes_expected += b.veth_bytes_expected;
        total.peer_rx_bytes = add(total.peer_rx_bytes, b.peer_rx_bytes);
        total.peer_rx_packets = add(total.peer_rx_packets, b.peer_rx_packets);
        total.peer_rx_dropped = add(total.peer_rx_dropped, b.peer_rx_dropped);
        total.sender_tx_dropped = add(total.sender_tx_dropped, b.sender_tx_dropped);
        total.counters_unavailable_reason = total
            .counters_unavailable_reason
            .or_else(|| b.counters_unavailable_reason.clone());
        total.sender_cpus_softirq_s = total
            .sender_cpus_softirq_s
            .zip(b.sender_cpus_softirq_s)
            .map(|(a, b)| a + b);
        total.softirq_unavailable_reason = total
            .softirq_unavailable_reason
            .or_else(|| b.softirq_unavailable_reason.clone());
    }
    let measured: u64 = visits.iter().map(|(_, bytes)| bytes).sum();
    total.sender_cpus_softirq_ns_per_byte = total
        .sender_cpus_softirq_s
        .filter(|_| measured > 0)
        .map(|s| s * 1e9 / measured as f64);
    total.every_byte_reached_the_sink =
        total
            .peer_rx_bytes
            .zip(total.peer_rx_packets)
            .map(|(bytes, packets)| {
                bytes == total.veth_bytes_expected && packets == total.packets_expected
            });
    total.summary = total.describe();
    Some(total)
}

/// Two counts summed; unknown when either is.
fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a? + b?)
}

/// A zero-copy summary that holds on a sink, where no local socket receives: copied 0 % is
/// zero copy done; a copy is reported with the reason it has here.
pub fn zerocopy_summary(zerocopy: &ZerocopyReport, spec: &RunSpec) -> String {
    let Some(p) = zerocopy.copied_anyway_percent else {
        return "no zero-copy completion arrived".into();
    };
    if zerocopy.stats.copied == 0 {
        return format!(
            "copied anyway: {p:.1} % — on a sink no local socket receives, and every completed send kept its pages: zero copy, not its interface alone"
        );
    }
    let mtu = spec
        .network
        .mtu
        .unwrap_or(crate::transport::network::SINK_MTU);
    let largest = spec.framing().map_or(spec.message_size, |f| f.part_len) as u64;
    let reason = match on_the_veth(largest, mtu).0 {
        1 => format!(
            "no datagram was fragmented at MTU {mtu}, so the kernel copied for another reason (it copies a zero-copy send when the device lacks scatter-gather or checksum offload); see docs/sink.md"
        ),
        _ => format!(
            "datagrams of {largest} B exceed MTU {mtu} less 28 B of IP and UDP header, and the kernel copies a zero-copy send it has to fragment; use --mtu 65535"
        ),
    };
    format!("copied anyway: {p:.1} % on a sink — {reason}")
}

/// A sink record's statistics follow the sender (the only side), and its zero-copy summary
/// says what a copy means where nothing receives: applied to a record built or aggregated.
pub(super) fn restate(record: &mut RunRecord, spec: &RunSpec) {
    if !spec.network.is_sink() {
        return;
    }
    record.statistics.side = "sender".into();
    if let Some(z) = &mut record.zerocopy {
        z.summary = zerocopy_summary(z, spec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_datagram_within_the_mtu_is_one_packet_with_42_bytes_of_header() {
        assert_eq!(on_the_veth(0, 65_535), (1, 42));
        assert_eq!(on_the_veth(65_507, 65_535), (1, 65_549));
        assert_eq!(on_the_veth(1_472, 1_500), (1, 1_514));
    }

    #[test]
    fn a_gso_send_crosses_the_veth_as_one_packet_standing_for_its_datagrams() {
        // 16 KiB in segments of 1472 B: one send of 11 full segments and one of 192 B.
        let framing = Framing::segmented(16_384, 1_472, 64, false).unwrap();
        assert_eq!(per_message(&framing, 1_500), (12, 1, 16_384 + 42));
        // 64 KiB takes two sends (at most 65507 B each): two packets.
        let framing = Framing::segmented(65_536, 1_472, 64, true).unwrap();
        let (datagrams, packets, bytes) = per_message(&framing, 1_500);
        assert_eq!((datagrams, packets, bytes), (45, 2, 65_536 + 2 * 42));
    }

    #[test]
    fn a_points_block_sums_its_visits_and_divides_the_softirq_by_their_measured_bytes() {
        let visit = |sent: u64, rx: u64, softirq: f64| SinkReport {
            messages_sent: 10,
            payload_bytes_sent: sent,
            datagrams_expected: 11,
            packets_expected: 11,
            veth_bytes_expected: sent + 11 * 42,
            peer_rx_bytes: Some(rx + 11 * 42),
            peer_rx_packets: Some(11),
            sender_cpus_softirq_s: Some(softirq),
            ..SinkReport::default()
        };
        let (a, b) = (visit(1000, 1000, 1e-6), visit(3000, 3000, 3e-6));
        let both = combine(&[(&a, 500), (&b, 1500)]).unwrap();
        assert_eq!(both.payload_bytes_sent, 4000);
        assert_eq!(both.veth_bytes_expected, 4000 + 22 * 42);
        assert_eq!(both.peer_rx_bytes, Some(4000 + 22 * 42));
        assert_eq!(both.every_byte_reached_the_sink, Some(true));
        let per_byte = both.sender_cpus_softirq_ns_per_byte.unwrap();
        assert!((per_byte - 4e3 / 2000.0).abs() < 1e-9, "{per_byte}");
        // One byte short at the peer in one visit: the point says so.
        let short = visit(3000, 2999, 3e-6);
        let point = combine(&[(&a, 500), (&short, 1500)]).unwrap();
        assert_eq!(point.every_byte_reached_the_sink, Some(false));
        assert!(
            point.summary.contains("NOT every byte"),
            "{}",
            point.summary
        );
        assert_eq!(combine(&[]), None);
    }

    #[test]
    fn a_datagram_above_the_mtu_is_fragmented_and_each_fragment_has_its_own_headers() {
        // 1473 B + 8 B of UDP = 1481 B: 1480 in the first fragment, 1 in the second.
        assert_eq!(on_the_veth(1_473, 1_500), (2, 1_481 + 2 * 34));
        // 8192 B at MTU 1500: 8200 B in fragments of 1480 B: 6 packets.
        assert_eq!(on_the_veth(8_192, 1_500), (6, 8_200 + 6 * 34));
    }
}
