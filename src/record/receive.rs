//! The record's `receive` block: what the receive path (`--recv`) did over the run, summed
//! over every receiving side, with a one-line summary that says plainly what was mapped,
//! copied or discarded (trunc delivers nothing).
use crate::config::RunSpec;
use crate::engine::RunOutcome;
use crate::mechanism::receive::path::{ReceivePathStats, RecvPath};
use serde::{Deserialize, Serialize};

/// What the receive path (`--recv`) did, summed over every receiving side (both sides in rr).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReceiveReport {
    #[serde(flatten)]
    pub stats: ReceivePathStats,
    /// Whether received bytes reached the process (false for trunc: discarded in the kernel).
    pub delivers_data: bool,
    /// zc-recv: share of received bytes mapped rather than copied.
    pub mapped_percent: Option<f64>,
    pub summary: String,
}

/// The receive block of a run with `--recv` other than recv; `None` for recv.
pub(super) fn report(spec: &RunSpec, outcome: &RunOutcome) -> Option<ReceiveReport> {
    let path = spec.recv_path;
    if path == RecvPath::Recv {
        return None;
    }
    let mut stats = ReceivePathStats::new(path);
    for r in outcome.samples.iter().filter_map(|s| s.receive.as_ref()) {
        stats.add(r);
    }
    Some(from_stats(spec, stats))
}

/// The receive block of summed `stats` (a run's sides, or a point's visits).
pub(super) fn from_stats(spec: &RunSpec, stats: ReceivePathStats) -> ReceiveReport {
    let path = spec.recv_path;
    let mapped_percent = (path == RecvPath::ZcRecv)
        .then(|| stats.mapped_percent())
        .flatten();
    let summary = match path {
        RecvPath::Recv => unreachable!("returned above"),
        RecvPath::Trunc => format!(
            "--recv trunc: recv(MSG_TRUNC) counted {} B that the kernel discarded: not delivered to the process, not verifiable; a lower bound on receive cost, not a receive",
            stats.discarded_bytes
        ),
        RecvPath::ZcRecv => {
            let mut s = zc_summary(&stats, mapped_percent, spec.mechanism.name());
            let one_process = !spec.processes
                && spec.network.placement != crate::config::network::Placement::Remote;
            if stats.mapped_bytes > 0 && one_process {
                s += "; both sides share one memory map here, so each call that replaces mapped \
                      pages also shoots down the TLB of the CPU running the other side \
                      (--processes avoids that)";
            }
            s
        }
        RecvPath::UringRecv => format!(
            "--recv uring-recv: {} completions into {} provided buffers of {} B, {} receive, {} re-arms, {} ENOBUFS{}",
            stats.calls,
            stats.buffers.unwrap_or(0),
            stats.buffer_bytes.unwrap_or(0),
            match stats.multishot {
                Some(true) => "multishot",
                Some(false) => "single-shot (the kernel refused multishot)",
                None => "no",
            },
            stats.rearms,
            stats.enobufs,
            if stats.unreported_eofs > 0 {
                format!(", {} EOFs the kernel did not post (found by asking the socket)", stats.unreported_eofs)
            } else {
                String::new()
            }
        ),
    };
    ReceiveReport {
        delivers_data: path.delivers_data(),
        mapped_percent,
        summary,
        stats,
    }
}

fn zc_summary(stats: &ReceivePathStats, mapped: Option<f64>, sender: &str) -> String {
    let head = format!(
        "--recv zc-recv: {} B mapped, {} B copied ({:.1} % mapped), segments of {} B",
        stats.mapped_bytes,
        stats.copied_bytes,
        mapped.unwrap_or(0.0),
        stats
            .segment_bytes
            .map_or("unknown".to_string(), |s| s.to_string())
    );
    match &stats.reason {
        Some(reason) => format!("{head}; with --mechanism {sender}, {reason}"),
        None => head,
    }
}
