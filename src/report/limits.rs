//! The machine's own limits, from the probe a sweep records in `probe.json` (see
//! `bytepath probe`), and the figures set against them: throughput as a share of the memcpy
//! roofline for the threads that copy in the point, and CPU per message counted in raw system
//! calls.
use super::{units, Rows};
use crate::analysis::point::Point;
use crate::analysis::Dataset;
use crate::mechanism::descriptor::Reuse;
use crate::mechanism::MechanismKind;
use crate::record::probe_view::ProbeView;
use crate::record::view::RunView;

/// The yardsticks the points table uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Best single-thread memcpy at the DRAM-sized buffer, GB/s (decimal).
    pub memcpy_gb_per_s: f64,
    /// Best aggregate memcpy beyond the caches per thread count, (threads, GB/s), increasing in
    /// threads, each count at least any smaller count's (see `envelope`); empty for a probe
    /// written before the curve was measured.
    pub curve: Vec<(u64, f64)>,
    /// The CPUs the probe was allowed: what unpinned threads share.
    pub allowed_cpus: Option<u64>,
    /// The last-level cache the probe read (bytes).
    pub llc_bytes: Option<u64>,
    /// Cheapest raw getpid(2), ns.
    pub syscall_ns: f64,
}

/// How a point's ceiling is chosen from the curve, as the report states it.
pub const CEILING_RULE: &str = "a point is held against the memcpy bandwidth of the threads that \
    copy in it: each flow's sender and receiver (four per flow with --bidir; the sender alone on \
    a sink or beside a remote peer), at most as many as the distinct CPUs its placement names \
    (unpinned: the CPUs the probe was allowed); a count between two measured ones takes the \
    straight line between them, a count beyond the curve its largest count's bandwidth, and no \
    count less than a smaller count's (more threads can always copy as fewer do: a dip in the \
    curve is a busy machine, not a lower ceiling)";

/// The curve with every count raised to the best of the counts up to it.
fn envelope(curve: Vec<(u64, f64)>) -> Vec<(u64, f64)> {
    let mut best = 0.0_f64;
    curve
        .into_iter()
        .map(|(n, v)| {
            best = best.max(v);
            (n, best)
        })
        .collect()
}

fn dram_bandwidth(probe: &ProbeView) -> Option<f64> {
    probe.dram()?.bandwidth?.best_gb_per_s.filter(|v| *v > 0.0)
}

pub fn limits(data: &Dataset) -> Option<Limits> {
    let probe = data.probe.as_ref()?;
    let roofline = probe.memcpy_roofline.as_ref();
    Some(Limits {
        memcpy_gb_per_s: dram_bandwidth(probe)?,
        curve: envelope(probe.thread_curve()),
        allowed_cpus: roofline
            .and_then(|r| r.by_threads.as_ref()?.allowed_cpus)
            .filter(|n| *n > 0),
        llc_bytes: roofline.and_then(|r| r.llc_bytes),
        syscall_ns: probe.getpid_min_ns().filter(|v| *v > 0.0)?,
    })
}

/// The memcpy ceiling a point is held against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    /// The threads it stands for (after the cap at the point's CPUs).
    pub threads: u64,
    pub gb_per_s: f64,
    /// From the curve; false: one thread's DRAM figure (a probe without a curve).
    pub from_curve: bool,
}

/// The ceiling for `threads` copying at once: the curve's bandwidth at that count, the straight
/// line between the measured counts around it, the largest count's beyond the curve (and the
/// smallest's below it); one thread's DRAM figure where the probe has no curve.
pub fn ceiling(limits: &Limits, threads: u64) -> Ceiling {
    let threads = threads.max(1);
    let curve = &limits.curve;
    let gb_per_s = match (curve.first(), curve.last()) {
        (Some(&(lo, v)), _) if threads <= lo => v,
        (_, Some(&(hi, v))) if threads >= hi => v,
        (Some(_), Some(_)) => {
            let above = curve
                .iter()
                .position(|&(n, _)| n >= threads)
                .expect("inside");
            let ((n0, v0), (n1, v1)) = (curve[above - 1], curve[above]);
            v0 + (v1 - v0) * (threads - n0) as f64 / (n1 - n0) as f64
        }
        _ => {
            return Ceiling {
                threads: 1,
                gb_per_s: limits.memcpy_gb_per_s,
                from_curve: false,
            }
        }
    };
    Ceiling {
        threads,
        gb_per_s,
        from_curve: true,
    }
}

/// The threads that copy in a point (see `CEILING_RULE`), capped at the CPUs it ran on.
pub fn copying_threads(p: &Point, record: Option<&RunView>, allowed_cpus: Option<u64>) -> u64 {
    let flows = p.threads.max(1.0) as u64;
    let remote = record.and_then(|r| r.config().network_placement()) == Some("remote");
    let per_flow = match (p.sink || remote, p.bidir) {
        (true, true) => 2,
        (true, false) => 1,
        (false, true) => 4,
        (false, false) => 2,
    };
    let placement = record.and_then(|r| r.config().placement.as_deref());
    let named = placement.and_then(|flows| {
        let mut cpus = Vec::new();
        for f in flows {
            cpus.push(f.sender_cpu?);
            if !p.sink {
                cpus.push(f.receiver_cpu?);
            }
        }
        cpus.sort_unstable();
        cpus.dedup();
        Some(cpus.len() as u64).filter(|n| *n > 0)
    });
    let cpus = named.or(allowed_cpus).unwrap_or(u64::MAX);
    (flows * per_flow).min(cpus)
}

/// The record a point was read from (`line` is its line in results.jsonl), when it is that
/// point's.
fn record_of<'a>(data: &'a Dataset, p: &Point) -> Option<&'a RunView> {
    let record = data.records.get(p.line.checked_sub(1)?)?;
    let config = record.config();
    let same = config.mechanism.as_deref() == Some(p.mechanism.as_str())
        && config.threads.as_ref().and_then(|n| n.as_f64()) == Some(p.threads);
    same.then_some(record)
}

/// A point's throughput as a share of its ceiling; `None` for a point whose headline is not a
/// throughput (round trips, transactions).
pub fn roofline_share(p: &Point, ceiling: &Ceiling) -> Option<f64> {
    let not_throughput = ["round_trips_per_s", "transactions_per_s"];
    let gbps = p.throughput_with_ci().0;
    (!not_throughput.contains(&p.headline_metric.as_str())).then(|| gbps / 8.0 / ceiling.gb_per_s)
}

/// The points table's cell: the share, the threads it is held against, and, above 100 %, why.
pub fn roofline_cell(data: &Dataset, p: &Point, limits: &Limits) -> Option<String> {
    let threads = copying_threads(p, record_of(data, p), limits.allowed_cpus);
    let ceiling = ceiling(limits, threads);
    let share = roofline_share(p, &ceiling)?;
    let against = match (ceiling.from_curve, ceiling.threads) {
        (false, _) => "1 thread: the probe has no curve".to_string(),
        (true, 1) => "1 thread".to_string(),
        (true, n) => format!("{n} threads"),
    };
    let mut cell = format!("{:.0} % ({against})", share * 100.0);
    if share > 1.0 {
        cell += &format!(": {}", beyond_ceiling(p, limits));
    }
    Some(cell)
}

/// Why a point moved more bytes than memcpy could copy with its threads.
pub fn beyond_ceiling(p: &Point, limits: &Limits) -> String {
    let mechanism = MechanismKind::by_name(&p.mechanism);
    if let Some(call) = mechanism.and_then(|m| m.zero_copy) {
        return format!(
            "{} lends its pages to the kernel ({call}) instead of copying them, so its senders \
             copy no byte and memcpy bounds its receivers alone",
            p.mechanism
        );
    }
    if mechanism.is_some_and(|m| m.reuse == Reuse::FreshPages) {
        return format!(
            "{} hands the kernel references to whole pages instead of copying bytes, so its \
             senders copy no byte and memcpy bounds its receivers alone",
            p.mechanism
        );
    }
    match p.recv.as_deref() {
        Some("zc-recv") => {
            return "its receivers map the received pages (zc-recv) instead of copying them".into()
        }
        Some("trunc") => return "its receivers discard the bytes in the kernel (trunc)".into(),
        _ => {}
    }
    let cache = limits.llc_bytes.map_or("the last-level cache".into(), |b| {
        format!("the {} last-level cache", units::bytes(b as f64))
    });
    format!(
        "{} copies every byte, so its copies ran from {cache} rather than from DRAM (the \
         ceiling is DRAM's), or the probe's curve understates this machine (measure it again \
         with `bytepath probe` on a quiet machine)",
        p.mechanism
    )
}

/// The roofline row of the machine-limits block: the curve, or one thread's figure and why.
fn roofline_row(probe: &ProbeView) -> String {
    let Some(one) = dram_bandwidth(probe) else {
        return "n/a".into();
    };
    let buffer = probe
        .dram()
        .and_then(|d| d.buffer_bytes)
        .map_or(String::new(), |b| format!(", {}", units::bytes(b as f64)));
    let curve = probe.thread_curve();
    if curve.is_empty() {
        return format!(
            "{one:.2} GB/s = {:.1} Gbit/s (one thread{buffer}, best trial): this probe.json \
             predates the per-thread-count curve, so every point is held against one thread's \
             memcpy, however many threads copy in it (run `bytepath probe` for the curve)",
            one * 8.0
        );
    }
    let steps: Vec<String> = curve.iter().map(|(n, v)| format!("{n} → {v:.2}")).collect();
    format!(
        "best aggregate GB/s by threads copying at once beyond the caches: {} (one thread \
         {one:.2} GB/s = {:.1} Gbit/s{buffer}); {CEILING_RULE}; the ceiling for any path that \
         copies each byte once",
        steps.join(", "),
        one * 8.0
    )
}

/// The "machine limits" block: what the probe measured, or why there is none.
pub fn machine_limits(data: &Dataset) -> Rows {
    let Some(probe) = data.probe.as_ref() else {
        return vec![(
            "probe".into(),
            "not recorded: this folder has no probe.json (sweeps record one before their first \
             point; run `bytepath probe` for this machine's figures)"
                .into(),
        )];
    };
    let ns = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.1} ns"));
    let clock = ns(probe.clock_read_min_ns("CLOCK_MONOTONIC"));
    vec![
        ("memcpy roofline".into(), roofline_row(probe)),
        (
            "system call".into(),
            format!(
                "getpid {} (raw syscall, minimum)",
                ns(probe.getpid_min_ns())
            ),
        ),
        (
            "clock read".into(),
            format!("CLOCK_MONOTONIC {clock} per read (minimum)"),
        ),
    ]
}

/// CPU time per message (both sides) in units of one raw system call.
pub fn message_cost_in_syscalls(p: &Point, limits: &Limits) -> Option<f64> {
    Some(p.cpu_ns_per_byte()? * p.size / limits.syscall_ns)
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
