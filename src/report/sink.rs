//! The run table's lines for a record made on a sink (`--sink`): the headline from the sender,
//! the only side, and the sink block's proof of where the bytes went and what the sink cost;
//! and a sweep report's table of the points made on a sink.
use super::csv_cell::Cell::{self, Json, Scalar};
use super::units::count;
use crate::analysis::point::Point;
use crate::analysis::Dataset;
use crate::record::sink::SinkReport;
use crate::record::RunRecord;
use std::fmt::Write;

/// The headline figure on a sink: what the kernel accepted from the sending side.
pub(super) fn result_line(r: &RunRecord) -> String {
    let sender = &r.sides[0];
    format!(
        "{:.3} Gbit/s handed to the kernel by the sending side, {} messages/s (a sink: no receiver; the datagrams were dropped past the veth)",
        sender.throughput_gbps,
        count(sender.messages_per_s)
    )
}

/// The sink block, after the zero-copy lines: where every byte went, and the softirq.
pub(super) fn lines(out: &mut String, sink: &SinkReport) {
    let _ = writeln!(
        out,
        "transfer (all phases): sent {} B in {} messages; none received (a sink has no receiver)",
        sink.payload_bytes_sent, sink.messages_sent
    );
    let _ = writeln!(out, "sink: {}", sink.summary);
    if let (Some(rx), Some(tx)) = (sink.peer_rx_dropped, sink.sender_tx_dropped) {
        let _ = writeln!(
            out,
            "  dropped before the peer end's IP layer: {rx} packets on its receive side, {tx} on the sending end's transmit side"
        );
    }
    let softirq = match (
        sink.sender_cpus_softirq_s,
        sink.sender_cpus_softirq_ns_per_byte,
    ) {
        (Some(s), per_byte) => format!(
            "{s:.3} s on CPU {:?} over the measured phase{}",
            sink.sender_cpus,
            per_byte.map_or(String::new(), |b| format!(", {b:.3} ns per byte sent"))
        ),
        (None, _) => format!(
            "n/a ({})",
            sink.softirq_unavailable_reason
                .as_deref()
                .unwrap_or("not read")
        ),
    };
    let _ = writeln!(out, "sink softirq on the sending CPUs: {softirq}");
    let _ = writeln!(out, "  ({})", sink.softirq_covers);
}

/// The header of a sweep report's sink table.
const POINTS_HEADER: [&str; 8] = [
    "point",
    "sender Gbit/s",
    "messages/s",
    "sender CPU-ns/byte",
    "softirq on the sending CPUs, ns/byte",
    "zero copy: completions, copied",
    "peer veth received / expected",
    "every byte reached the sink",
];

/// A sweep report's sink table: one row per point made on a sink (`--sink`), with the figures
/// only a sink has; `None` when the results hold no such point.
pub(super) fn points_table(data: &Dataset) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let rows: Vec<Vec<String>> = data
        .points
        .iter()
        .filter(|p| p.sink)
        .map(point_row)
        .collect();
    (!rows.is_empty()).then(|| (POINTS_HEADER.to_vec(), rows))
}

/// What the sink table's rows are, for the line above it.
pub(super) const POINTS_INTRO: &str = "Points made on a sink (--sink): the sender alone, its datagrams dropped past a veth pair where nothing receives. Its figures are what the kernel accepted; the softirq of the sending CPUs is stated apart (it overlaps CPU sys time where the kernel accounts by ticks); the peer veth's receive counter against the bytes sent with 42 B of Ethernet, IPv4 and UDP header per packet proves every byte left the socket. See docs/sink.md.";

fn point_row(p: &Point) -> Vec<String> {
    let na = || "n/a".to_string();
    let sink = p.sink_report.as_ref();
    let zero_copy = p
        .zerocopy
        .map_or("—".into(), |z| match z.completions > 0.0 {
            true => format!(
                "{:.0}, {:.1} % copied",
                z.completions,
                z.copied / z.completions * 100.0
            ),
            false => "no completion".into(),
        });
    vec![
        p.key.clone(),
        format!("{:.3}", p.throughput_gbps),
        count(p.messages_per_s),
        p.sender_cpu_ns_per_byte
            .map_or_else(na, |v| format!("{v:.3}")),
        sink.and_then(|s| s.sender_cpus_softirq_ns_per_byte)
            .map_or_else(
                || match sink.and_then(|s| s.softirq_unavailable_reason.as_deref()) {
                    Some(why) => format!("n/a ({why})"),
                    None => na(),
                },
                |v| format!("{v:.3}"),
            ),
        zero_copy,
        sink.and_then(|s| {
            Some(format!(
                "{} B / {} B",
                s.peer_rx_bytes?, s.veth_bytes_expected
            ))
        })
        .unwrap_or_else(|| {
            match sink.and_then(|s| s.counters_unavailable_reason.as_deref()) {
                Some(why) => format!("n/a ({why})"),
                None => na(),
            }
        }),
        match sink.and_then(|s| s.every_byte_reached_the_sink) {
            Some(true) => "yes".into(),
            Some(false) => "NO".into(),
            None => na(),
        },
    ]
}

/// The CSV columns of the sink block (`--sink`), after every other block's so each column
/// before them keeps its place: (name, JSON pointer, cell).
pub(super) const CSV: &[(&str, &str, Cell)] = &[
    ("sink_mtu_bytes", "/sink/mtu_bytes", Scalar),
    ("sink_messages_sent", "/sink/messages_sent", Scalar),
    (
        "sink_payload_bytes_sent",
        "/sink/payload_bytes_sent",
        Scalar,
    ),
    (
        "sink_datagrams_expected",
        "/sink/datagrams_expected",
        Scalar,
    ),
    ("sink_packets_expected", "/sink/packets_expected", Scalar),
    (
        "sink_veth_bytes_expected",
        "/sink/veth_bytes_expected",
        Scalar,
    ),
    ("sink_peer_rx_bytes", "/sink/peer_rx_bytes", Scalar),
    ("sink_peer_rx_packets", "/sink/peer_rx_packets", Scalar),
    ("sink_peer_rx_dropped", "/sink/peer_rx_dropped", Scalar),
    ("sink_sender_tx_dropped", "/sink/sender_tx_dropped", Scalar),
    (
        "sink_counters_unavailable_reason",
        "/sink/counters_unavailable_reason",
        Scalar,
    ),
    (
        "sink_every_byte_reached_the_sink",
        "/sink/every_byte_reached_the_sink",
        Scalar,
    ),
    ("sink_sender_cpus", "/sink/sender_cpus", Json),
    (
        "sink_sender_cpus_softirq_s",
        "/sink/sender_cpus_softirq_s",
        Scalar,
    ),
    (
        "sink_sender_cpus_softirq_ns_per_byte",
        "/sink/sender_cpus_softirq_ns_per_byte",
        Scalar,
    ),
    (
        "sink_softirq_unavailable_reason",
        "/sink/softirq_unavailable_reason",
        Scalar,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn sink() -> SinkReport {
        SinkReport {
            messages_sent: 2,
            payload_bytes_sent: 2048,
            veth_bytes_expected: 2048 + 3 * 42,
            packets_expected: 3,
            datagrams_expected: 3,
            peer_rx_bytes: Some(2048 + 3 * 42),
            peer_rx_packets: Some(3),
            peer_rx_dropped: Some(0),
            sender_tx_dropped: Some(0),
            every_byte_reached_the_sink: Some(true),
            softirq_unavailable_reason: Some("not pinned".into()),
            softirq_covers: "what it covers".into(),
            summary: "the peer veth received 2174 B".into(),
            ..SinkReport::default()
        }
    }

    #[test]
    fn the_block_says_where_the_bytes_went_and_why_the_softirq_is_missing() {
        let mut out = String::new();
        lines(&mut out, &sink());
        assert!(
            out.starts_with("transfer (all phases): sent 2048 B in 2 messages; none received"),
            "{out}"
        );
        assert!(
            out.contains("\nsink: the peer veth received 2174 B\n"),
            "{out}"
        );
        assert!(out.contains("0 packets on its receive side, 0 on the sending end's transmit side"));
        assert!(
            out.contains("sink softirq on the sending CPUs: n/a (not pinned)\n"),
            "{out}"
        );
        let pinned = SinkReport {
            sender_cpus: vec![0],
            sender_cpus_softirq_s: Some(0.25),
            sender_cpus_softirq_ns_per_byte: Some(0.125),
            softirq_unavailable_reason: None,
            ..sink()
        };
        let mut out = String::new();
        lines(&mut out, &pinned);
        assert!(
            out.contains("0.250 s on CPU [0] over the measured phase, 0.125 ns per byte sent"),
            "{out}"
        );
    }

    #[test]
    fn every_sink_column_points_into_the_sink_block_and_its_name_says_so() {
        for (name, pointer, _) in CSV {
            assert_eq!(format!("sink_{}", &pointer["/sink/".len()..]), *name);
            let field = &pointer["/sink/".len()..];
            let json = serde_json::to_value(sink()).unwrap();
            assert!(
                json.get(field).is_some() || name.ends_with("_reason"),
                "{name}"
            );
        }
    }
}
