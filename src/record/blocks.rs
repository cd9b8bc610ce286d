//! The blocks a run record has only for some mechanisms and transports: zero-copy
//! completions (MSG_ZEROCOPY, io_uring SEND_ZC), the page-referencing senders' accounting
//! (splice, sendfile), and datagram loss and ordering. Each is built from the run's samples
//! and says in one line what it found.
use crate::config::{Pattern, RunSpec};
use crate::engine::worker::Role;
use crate::engine::RunOutcome;
use crate::mechanism::page_refs::SpliceStats;
use crate::mechanism::receive::DatagramStats;
use crate::mechanism::{MechanismKind, ZerocopyStats};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZerocopyReport {
    #[serde(flatten)]
    pub stats: ZerocopyStats,
    pub copied_anyway_percent: Option<f64>,
    pub summary: String,
}

/// The page-referencing senders' accounting, summed over every sending side.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PageRefsReport {
    #[serde(flatten)]
    pub stats: SpliceStats,
    pub calls_per_message: Option<f64>,
    pub summary: String,
}

pub(super) fn page_refs_report(outcome: &RunOutcome) -> Option<PageRefsReport> {
    let mut total: Option<SpliceStats> = None;
    for s in outcome.samples.iter().filter_map(|s| s.page_refs.as_ref()) {
        total.get_or_insert_with(Default::default).add(s);
    }
    total.map(PageRefsReport::from_stats)
}

impl PageRefsReport {
    pub fn from_stats(stats: SpliceStats) -> PageRefsReport {
        PageRefsReport {
            calls_per_message: stats.calls_per_message(),
            summary: stats.summary(),
            stats,
        }
    }
}

/// Datagrams one way over the whole run (all phases).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DatagramDirection {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub lost_percent: Option<f64>,
    pub reordered: u64,
}

impl DatagramDirection {
    /// Two counts of one direction added (a point's visits).
    pub fn add(&mut self, other: &DatagramDirection) {
        self.sent += other.sent;
        self.received += other.received;
        self.lost += other.lost;
        self.reordered += other.reordered;
        self.lost_percent = (self.sent > 0).then(|| 100.0 * self.lost as f64 / self.sent as f64);
    }

    fn new(from: &DatagramStats, to: &DatagramStats) -> DatagramDirection {
        let lost = from.sent.saturating_sub(to.received);
        DatagramDirection {
            sent: from.sent,
            received: to.received,
            lost,
            lost_percent: (from.sent > 0).then(|| 100.0 * lost as f64 / from.sent as f64),
            reordered: to.reordered,
        }
    }

    fn describe(&self, way: &str) -> String {
        format!(
            "{way}: {} of {} datagrams received, {} lost ({:.2} %), {} reordered",
            self.received,
            self.sent,
            self.lost,
            self.lost_percent.unwrap_or(0.0),
            self.reordered
        )
    }
}

/// Loss and ordering of a datagram transport: never hidden inside a throughput figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatagramReport {
    pub datagrams_per_message: u32,
    pub datagram_bytes: usize,
    pub sequence_number_bytes: usize,
    /// UDP GSO (`--gso`): sends per message, each cut by the kernel into datagrams of
    /// `datagram_bytes`; absent without GSO, where every send is one datagram.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso_sends_per_message: Option<u32>,
    pub receive_timeout_ms: u64,
    /// Sender to receiver (stream data, rr requests).
    pub forward: DatagramDirection,
    /// Receiver to sender (rr answers).
    pub back: Option<DatagramDirection>,
    /// rr: round trips given up after the receive timeout (not in the latency figures).
    pub lost_round_trips: u64,
    /// rr: answers that came after their round trip was given up, discarded.
    pub stale_answers: u64,
    /// Split messages missing a part (not counted as received).
    pub incomplete_messages: u64,
    /// Flows that ended by a timeout because their end marker was lost.
    pub end_markers_lost: u64,
    pub summary: String,
}

pub(super) fn zerocopy_report(
    mechanism: MechanismKind,
    outcome: &RunOutcome,
) -> Option<ZerocopyReport> {
    let mut total: Option<ZerocopyStats> = None;
    for z in outcome.samples.iter().filter_map(|s| s.zerocopy.as_ref()) {
        total.get_or_insert_with(Default::default).add(z);
    }
    Some(ZerocopyReport::from_stats(mechanism, total?))
}

impl ZerocopyReport {
    pub fn from_stats(mechanism: MechanismKind, stats: ZerocopyStats) -> ZerocopyReport {
        let percent = stats.copied_percent();
        let summary = match percent {
            None => "no zero-copy completion arrived".to_string(),
            Some(p) if p >= 99.95 => format!(
                "copied anyway: {p:.1} % — the kernel copied every {} send (it always does \
             for data delivered to a local socket, as on loopback and veth); no send avoided its \
             copy, so these figures measure the zero-copy API's cost, not zero-copy transmission",
                zero_copy_call(mechanism)
            ),
            Some(p) => format!(
                "copied anyway: {p:.1} % — {:.1} % of completed sends avoided the copy",
                100.0 - p
            ),
        };
        ZerocopyReport {
            stats,
            copied_anyway_percent: percent,
            summary,
        }
    }
}

/// The call whose sends a zero-copy report counts, as the mechanism's descriptor names it
/// (only zero-copy mechanisms have the accounting; "zero-copy" says it for any other).
fn zero_copy_call(mechanism: MechanismKind) -> &'static str {
    mechanism.zero_copy.unwrap_or("zero-copy")
}

impl DatagramReport {
    /// The summary sentence, from the report's own figures.
    pub fn describe(&self) -> String {
        let mut summary = self.forward.describe("sender → receiver");
        if let Some(b) = &self.back {
            summary += &format!(
                "; {}; {} round trips lost (no answer within {} ms), {} late answers discarded",
                b.describe("answers"),
                self.lost_round_trips,
                self.receive_timeout_ms,
                self.stale_answers
            );
        }
        let how = match self.gso_sends_per_message {
            Some(sends) => format!(
                "--gso {} B: {sends} send(s) a message, cut by the kernel",
                self.datagram_bytes
            ),
            None => "--udp-split".to_string(),
        };
        if self.datagrams_per_message > 1 {
            summary += &format!(
                "; each message split into {} datagrams ({how}), {} arrived incomplete (a part lost)",
                self.datagrams_per_message, self.incomplete_messages
            );
        }
        summary
    }

    /// Loss in a few words, for one-line outputs.
    pub fn brief(&self) -> String {
        let mut s = format!(
            "datagrams lost {} of {}",
            self.forward.lost, self.forward.sent
        );
        if let Some(b) = &self.back {
            s += &format!(
                ", answers lost {} of {}, round trips given up {}",
                b.lost, b.sent, self.lost_round_trips
            );
        }
        let reordered = self.forward.reordered + self.back.map_or(0, |b| b.reordered);
        if reordered > 0 {
            s += &format!(", {reordered} reordered");
        }
        s
    }
}

pub(super) fn datagram_report(spec: &RunSpec, outcome: &RunOutcome) -> Option<DatagramReport> {
    let framing = spec.framing()?;
    let total = |role: Role| -> DatagramStats {
        let mut t = DatagramStats::default();
        for d in outcome
            .samples
            .iter()
            .filter(|s| s.role == role)
            .filter_map(|s| s.datagrams.as_ref())
        {
            t.add(d);
        }
        t
    };
    let (sender, receiver) = (total(Role::Sender), total(Role::Receiver));
    let rr = spec.pattern == Pattern::Rr;
    let forward = DatagramDirection::new(&sender, &receiver);
    let back = rr.then(|| DatagramDirection::new(&receiver, &sender));
    let end_markers_lost = outcome
        .samples
        .iter()
        .filter(|s| s.datagrams.is_some_and(|d| d.end_marker_lost))
        .count() as u64;
    let lost_round_trips = if rr { sender.timeouts } else { 0 };
    let mut report = DatagramReport {
        datagrams_per_message: framing.parts,
        datagram_bytes: framing.part_len,
        sequence_number_bytes: crate::transport::datagram::SEQ_BYTES,
        gso_sends_per_message: framing.gso.map(|_| framing.sends()),
        receive_timeout_ms: crate::transport::datagram::RECEIVE_TIMEOUT.as_millis() as u64,
        forward,
        back,
        lost_round_trips,
        stale_answers: sender.stale_answers,
        incomplete_messages: sender.incomplete_messages + receiver.incomplete_messages,
        end_markers_lost,
        summary: String::new(),
    };
    report.summary = report.describe();
    Some(report)
}

#[cfg(test)]
mod tests {
    use crate::config::{Pattern, RunSpec, Stopping};
    use crate::sys::socket;
    use crate::transport::datagram::UdpLoopback;
    use crate::transport::{FlowConnector, FlowEnds, SocketOptions, Transport};
    use std::io;
    use std::time::Duration;

    /// Classic BPF: drop a datagram whose sequence number's low byte is 3 modulo 10 (the
    /// payload starts after the 8-byte UDP header); the zero-length end marker has no such
    /// byte, so the filter drops it too.
    fn drop_every_tenth() -> [libc::sock_filter; 5] {
        let op = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
        // BPF_LD (0) | BPF_B | BPF_ABS; BPF_ALU | BPF_MOD | BPF_K (0); BPF_JMP | BPF_JEQ | BPF_K;
        // BPF_RET | BPF_K.
        const LD_B_ABS: u16 = 0x10 | 0x20;
        const ALU_MOD_K: u16 = 0x04 | 0x90;
        const JEQ_K: u16 = 0x05 | 0x10;
        const RET_K: u16 = 0x06;
        [
            op(LD_B_ABS, 0, 0, 8),
            op(ALU_MOD_K, 0, 0, 10),
            op(JEQ_K, 0, 1, 3),
            op(RET_K, 0, 0, 0),
            op(RET_K, 0, 0, u32::MAX),
        ]
    }

    struct DroppingRequests;

    impl FlowConnector for DroppingRequests {
        fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowEnds>> {
            let ends = UdpLoopback.connect(flows, options)?;
            for f in &ends {
                let fd = f.receiver.socket_fd().expect("a socket");
                socket::attach_filter(fd, &drop_every_tenth())?;
            }
            Ok(ends)
        }

        fn describe(&self) -> String {
            "UDP on loopback, the server's socket dropping every tenth request".into()
        }
    }

    #[test]
    fn requests_dropped_on_purpose_are_counted_lost_and_their_round_trips_given_up() {
        let size = 64;
        let spec = RunSpec {
            transport: Transport::Udp,
            pattern: Pattern::Rr,
            duration: Duration::from_secs(30),
            stopping: Stopping {
                messages_per_flow: Some(40),
                ..Stopping::fixed(Duration::from_secs(30))
            },
            verify: true,
            ..RunSpec::plain(size, Duration::from_secs(30))
        };
        static NEVER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let outcome = crate::engine::run(&spec, &DroppingRequests, &NEVER).unwrap();
        let env = crate::environment::Environment::detect(&[0]);
        let record = crate::record::build(&spec, &outcome, env);
        assert!(record.errors.is_empty(), "{:?}", record.errors);
        let d = record.datagrams.expect("a datagram report");
        let dropped = (0..d.forward.sent).filter(|s| (s & 0xff) % 10 == 3).count() as u64;
        assert!(
            dropped >= 4,
            "40 answered requests need at least 4 dropped ones"
        );
        assert_eq!(d.forward.lost, dropped);
        assert_eq!(d.forward.received, d.forward.sent - dropped);
        assert_eq!(
            d.lost_round_trips, dropped,
            "each dropped request times out once"
        );
        let back = d.back.expect("answers are counted");
        assert_eq!((back.sent, back.lost), (d.forward.received, 0));
        assert_eq!(
            d.end_markers_lost, 1,
            "the filter drops the end marker as well"
        );
        let latency = record.sides[0].latency_ns.as_ref().unwrap();
        assert_eq!(
            latency.count, 40,
            "given-up round trips are not latency samples"
        );
        assert_eq!(record.verify.mismatched_bytes, 0);
        assert!(record.verify.checked_bytes > 0);
    }
}
