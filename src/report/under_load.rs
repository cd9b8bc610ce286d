//! The `--under-load` line of a run's table: the load beside the rr flow and what it moved,
//! so a reader sees the latency above was measured under a real load.
use super::units::bytes;
use crate::record::under_load::UnderLoadReport;
use std::fmt::Write;

/// Appends the load's line to a run's table.
pub fn lines(out: &mut String, l: &UnderLoadReport) {
    let _ = writeln!(
        out,
        "under load: {} {} stream flow(s) of {} messages beside the rr flow, {}; {:.3} Gbit/s received whole ({} over {:.2} s)",
        l.flows,
        l.mechanism,
        bytes(l.message_size_bytes as f64),
        l.placement,
        l.gbps,
        bytes(l.received_bytes as f64),
        l.load_s
    );
}
