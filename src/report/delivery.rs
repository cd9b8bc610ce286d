//! The run table's delivery lines: what crossed in all phases and whether all of it arrived,
//! and what `--verify` found.
use crate::record::RunRecord;
use std::fmt::Write;

/// What crossed in all phases, and whether all of it was delivered.
pub(super) fn transfer_line(out: &mut String, r: &RunRecord) {
    let t = &r.transfer;
    let _ = writeln!(
        out,
        "transfer (all phases): sent {} B, received {} B{}: {}",
        t.sender_sent_bytes,
        t.receiver_received_bytes,
        if t.receiver_sent_bytes > 0 {
            format!(
                ", answered {} B, answers received {} B",
                t.receiver_sent_bytes, t.sender_received_bytes
            )
        } else {
            String::new()
        },
        if !r.config.recv.delivers_data() {
            "counted, then discarded in the kernel (--recv trunc): NOT delivered"
        } else if t.all_delivered {
            "all delivered"
        } else {
            "NOT all delivered"
        }
    );
}

pub(super) fn verify_lines(out: &mut String, r: &RunRecord) {
    let v = &r.verify;
    if !v.enabled {
        let _ = writeln!(out, "verify: off (use --verify to check every byte)");
        return;
    }
    if v.mismatched_bytes == 0 {
        let _ = writeln!(out, "verify: {} B checked, no mismatch", v.checked_bytes);
        return;
    }
    let _ = writeln!(
        out,
        "verify: MISMATCH — {} of {} B wrong",
        v.mismatched_bytes, v.checked_bytes
    );
    for m in &v.first_mismatches {
        let _ = writeln!(
            out,
            "  flow {} message {} offset {}: expected 0x{:02x}, got 0x{:02x}",
            m.flow, m.message, m.offset, m.expected, m.got
        );
    }
}
