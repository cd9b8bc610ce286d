//! The `bidir` block of a run record (`--bidir`): each direction's bytes sent and received
//! (all phases) and Gbit/s received whole, their sum, and the reverse direction's two sides
//! with every per-side figure (the record's `sides` are the forward direction's).
use super::SideMetrics;
use crate::engine::worker::{Role, ThreadSample};
use crate::engine::RunOutcome;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BidirReport {
    pub forward_sent_bytes: u64,
    pub forward_received_bytes: u64,
    pub reverse_sent_bytes: u64,
    pub reverse_received_bytes: u64,
    /// Every byte sent each way was received, no side failing.
    pub all_delivered_each_way: bool,
    /// Received whole over the measured window, per direction and summed.
    pub forward_gbps: f64,
    pub reverse_gbps: f64,
    pub sum_gbps: f64,
    /// The reverse direction: its sender (a thread of the flow's receiving end) and its
    /// receiver (a thread of the sending end).
    pub reverse_sides: Vec<SideMetrics>,
}

/// The block of a --bidir run; `forward` are the record's sides, `reverse` the reverse
/// direction's, built as they were.
pub fn report(
    outcome: &RunOutcome,
    forward: &[SideMetrics],
    reverse: Vec<SideMetrics>,
    no_errors: bool,
) -> BidirReport {
    let sum = |reverse: bool, role: Role, f: fn(&ThreadSample) -> u64| -> u64 {
        let of = |s: &&ThreadSample| s.reverse == reverse && s.role == role;
        outcome.samples.iter().filter(of).map(f).sum()
    };
    let forward_sent_bytes = sum(false, Role::Sender, |s| s.sent_bytes);
    let forward_received_bytes = sum(false, Role::Receiver, |s| s.received_bytes);
    let reverse_sent_bytes = sum(true, Role::Sender, |s| s.sent_bytes);
    let reverse_received_bytes = sum(true, Role::Receiver, |s| s.received_bytes);
    let forward_gbps = forward[1].throughput_gbps;
    let reverse_gbps = reverse[1].throughput_gbps;
    BidirReport {
        forward_sent_bytes,
        forward_received_bytes,
        reverse_sent_bytes,
        reverse_received_bytes,
        all_delivered_each_way: no_errors
            && forward_sent_bytes == forward_received_bytes
            && reverse_sent_bytes == reverse_received_bytes,
        forward_gbps,
        reverse_gbps,
        sum_gbps: forward_gbps + reverse_gbps,
        reverse_sides: reverse,
    }
}
