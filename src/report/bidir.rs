//! The `--bidir` lines of a run's table: each direction's Gbit/s and bytes, their sum, and the
//! reverse direction's CPU per side.
use super::units::bytes;
use crate::record::bidir::BidirReport;
use std::fmt::Write;

/// Appends the bidir block to a run's table.
pub fn lines(out: &mut String, b: &BidirReport) {
    let _ = writeln!(
        out,
        "bidir: forward {:.3} Gbit/s + reverse {:.3} Gbit/s = {:.3} Gbit/s received whole",
        b.forward_gbps, b.reverse_gbps, b.sum_gbps
    );
    let _ = writeln!(
        out,
        "  bytes (all phases): forward sent {}, received {}; reverse sent {}, received {}: {}",
        bytes(b.forward_sent_bytes as f64),
        bytes(b.forward_received_bytes as f64),
        bytes(b.reverse_sent_bytes as f64),
        bytes(b.reverse_received_bytes as f64),
        if b.all_delivered_each_way {
            "all delivered each way"
        } else {
            "NOT all delivered"
        }
    );
    for s in &b.reverse_sides {
        let _ = writeln!(
            out,
            "  reverse {}: {:.3} Gbit/s, CPU user {:.3} s sys {:.3} s, context switches {} / {}",
            s.side,
            s.throughput_gbps,
            s.cpu_user_s,
            s.cpu_sys_s,
            s.voluntary_context_switches,
            s.involuntary_context_switches
        );
    }
    let _ = writeln!(
        out,
        "  (the table above is the forward direction; reverse sender = a thread of the receiving end, reverse receiver = a thread of the sending end)"
    );
}

/// `--bidir` columns of results.csv, after every earlier column (empty for a one-way record):
/// each direction's bytes sent and received, whether all arrived, and Gbit/s per direction.
pub const CSV: &[(&str, &str, super::csv_cell::Cell)] = &[
    (
        "bidir_forward_sent_bytes",
        "/bidir/forward_sent_bytes",
        Scalar,
    ),
    (
        "bidir_forward_received_bytes",
        "/bidir/forward_received_bytes",
        Scalar,
    ),
    (
        "bidir_reverse_sent_bytes",
        "/bidir/reverse_sent_bytes",
        Scalar,
    ),
    (
        "bidir_reverse_received_bytes",
        "/bidir/reverse_received_bytes",
        Scalar,
    ),
    (
        "bidir_all_delivered_each_way",
        "/bidir/all_delivered_each_way",
        Scalar,
    ),
    ("bidir_forward_gbps", "/bidir/forward_gbps", Scalar),
    ("bidir_reverse_gbps", "/bidir/reverse_gbps", Scalar),
    ("bidir_sum_gbps", "/bidir/sum_gbps", Scalar),
];
use super::csv_cell::Cell::Scalar;
