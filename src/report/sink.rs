//! The run table's lines for a record made on a sink (`--sink`): the headline from the sender,
//! the only side, and the sink block's proof of where the bytes went and what the sink cost.
use super::units::count;
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
