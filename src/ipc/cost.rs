//! ipc's cost answer: what a round trip costs, fixed and per byte, per transport. The line is
//! weighted least squares over the sizes where the round trip is linear (`fit`); the fixed
//! part's share of the round trip at the smallest size is "mostly fixed cost" or "mostly per
//! byte" only when its 95 % interval excludes 50 %, else undecided. The fixed part is then put
//! in what it is made of: the round trip's four system calls (raw getpid from probe.json) and
//! its two wake-ups, across CPUs or on one as the sides were pinned (the probe's pipe round
//! trips, `probe::wakeups`), with what neither explains left over as the kernel's own work
//! per message. A small message's round trip across two CPUs is mostly two wake-ups.
use super::fit::{linear_range, weighted_fit, Line, SizeCost};
use crate::analysis::point::Point;
use crate::analysis::{size_label, Answer, Dataset};
use crate::report::limits::limits;
use crate::report::units::duration_ns;

pub const COST: &str = "What does a round trip cost, fixed and per byte?";

/// Where a series' two sides ran, as its records' placement says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cpus {
    Same,
    Cross,
    /// Not pinned, or the other side not on this host: the wake-ups cannot be named.
    Unknown,
}

fn cpus_of(data: &Dataset, p: &Point) -> Cpus {
    let record = data
        .records
        .iter()
        .rev()
        .find(|r| r.key() == Some(p.key.as_str()));
    let flow = record.and_then(|r| r.config().placement.as_ref()?.first().copied());
    match (
        flow.and_then(|f| f.sender_cpu),
        flow.and_then(|f| f.receiver_cpu),
    ) {
        (Some(a), Some(b)) if a == b => Cpus::Same,
        (Some(_), Some(_)) => Cpus::Cross,
        _ => Cpus::Unknown,
    }
}

/// The probe's yardsticks for the fixed part: a system call, and a wake-up on one CPU and
/// across two (`None` where probe.json lacks it, e.g. one written before wake-ups were probed).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Yardsticks {
    syscall_ns: Option<f64>,
    same_cpu_wakeup_ns: Option<f64>,
    cross_cpu_wakeup_ns: Option<f64>,
}

fn yardsticks(data: &Dataset) -> Yardsticks {
    let probe = data.probe.as_ref();
    let wakeups = probe.and_then(|p| p.wakeups);
    let positive = |v: Option<f64>| v.filter(|v| *v > 0.0);
    Yardsticks {
        syscall_ns: positive(probe.and_then(|p| p.getpid_min_ns())),
        same_cpu_wakeup_ns: positive(wakeups.and_then(|w| w.same_cpu_wakeup_ns)),
        cross_cpu_wakeup_ns: positive(wakeups.and_then(|w| w.cross_cpu_wakeup_ns)),
    }
}

/// The fixed part in system calls and wake-ups, with what is left; "" when the probe gives
/// no yardstick at all.
fn made_of(fixed: f64, transport: &str, cpus: Cpus, y: &Yardsticks) -> String {
    use crate::probe::wakeups::{
        SYSCALLS_PER_ROUND_TRIP as CALLS, WAKEUPS_PER_ROUND_TRIP as WAKES,
    };
    if transport == "shm" {
        return "; the shm rings make no system call while the other side spins \
                (spin-then-futex), so the fixed part is not put in system calls or wake-ups"
            .into();
    }
    let Some(call) = y.syscall_ns else {
        return String::new();
    };
    let calls = CALLS * call;
    let mut text = format!(
        "; fixed ≈ {CALLS:.0} system calls ({CALLS:.0} × {} = {})",
        duration_ns(call),
        duration_ns(calls)
    );
    let (wakeup, kind) = match cpus {
        Cpus::Cross => (y.cross_cpu_wakeup_ns, "cross-CPU wake-ups"),
        Cpus::Same => (y.same_cpu_wakeup_ns, "wake-ups on one CPU"),
        Cpus::Unknown => {
            return text
                + " (the sides were not pinned to known CPUs, so their wake-ups are not named)"
        }
    };
    let Some(w) = wakeup else {
        return text + " (probe.json has no wake-up cost: run `bytepath probe` again)";
    };
    let wakes = WAKES * w;
    text += &format!(
        " + {WAKES:.0} {kind} ({WAKES:.0} × {} = {})",
        duration_ns(w),
        duration_ns(wakes)
    );
    let rest = fixed - calls - wakes;
    text + &match rest >= 0.0 {
        true => format!(", {} left for the transport's own work", duration_ns(rest)),
        false => format!(
            ", together {} more than the fixed part fitted here",
            duration_ns(-rest)
        ),
    }
}

/// A duration that may fall below 0 (an interval's end): "−1.20 µs", never "-1200 ns".
fn signed_ns(ns: f64) -> String {
    match ns < 0.0 {
        true => format!("−{}", duration_ns(-ns)),
        false => duration_ns(ns),
    }
}

/// Each size's mean round trip and its variance, ascending; sizes without two visits left out.
fn size_costs(points: &[&Point]) -> Vec<SizeCost> {
    let mut out: Vec<SizeCost> = points
        .iter()
        .filter_map(|p| {
            let rates: Vec<f64> = p.visits.iter().map(|v| v.1).collect();
            SizeCost::from_rates(p.size, &rates)
        })
        .collect();
    out.sort_by(|a, b| a.size.total_cmp(&b.size));
    out
}

/// The share verdict: decided only when the interval excludes 50 %.
fn share_verdict(line: &Line, smallest: f64) -> (&'static str, String) {
    let (share, interval) = line.share_at(smallest);
    let fixed = line.fixed_interval();
    let pct = |v: f64| format!("{:.0} %", v * 100.0);
    let Some((low, high)) = interval else {
        return ("undecided", format!("{} (no bounded interval)", pct(share)));
    };
    let text = format!("{} (95 % CI {} to {})", pct(share), pct(low), pct(high));
    let verdict = if fixed.high < 0.0 {
        "undecided (the fixed part's interval lies below 0: not linear down to the smallest size)"
    } else if low > 0.5 {
        "mostly fixed cost"
    } else if high < 0.5 {
        "mostly per-byte"
    } else {
        "undecided"
    };
    (verdict, text)
}

/// One transport's line, or `None` when it has fewer than two sizes with two visits.
fn series_line(data: &Dataset, series: &str, points: &[&Point]) -> Option<(String, String)> {
    let sizes = size_costs(points);
    let (kept, departure) = linear_range(&sizes);
    let line = weighted_fit(&sizes[..kept.min(sizes.len())])?;
    let (first, last) = (sizes[0].size, sizes[kept - 1].size);
    let (fixed, per_byte) = (line.fixed_interval(), line.per_byte_interval());
    let (verdict, share) = share_verdict(&line, first);
    let mut text = format!(
        "{series}: fixed {} (95 % CI {} to {}) + {:.3} ns per byte (95 % CI {:.3} to {:.3}), \
         weighted over {kept} sizes {} to {}",
        signed_ns(fixed.value),
        signed_ns(fixed.low),
        signed_ns(fixed.high),
        per_byte.value,
        per_byte.low,
        per_byte.high,
        size_label(first),
        size_label(last)
    );
    if let Some(d) = departure {
        text += &format!(
            " ({} is {:.2}× the line and is left out with every larger size)",
            size_label(d.size),
            d.ratio
        );
    }
    text += &format!(
        "; the fixed part is {share} of the round trip at {}: {verdict}",
        size_label(first)
    );
    let transport = points[0].transport.as_deref().unwrap_or("tcp");
    text += &made_of(
        fixed.value,
        transport,
        cpus_of(data, points[0]),
        &yardsticks(data),
    );
    if let Some(l) = limits(data).filter(|_| per_byte.low > 0.0) {
        let memcpy = 1.0 / l.memcpy_gb_per_s;
        text += &format!(
            "; per byte ≈ {:.1} memcpy's worth ({memcpy:.3} ns/B at DRAM size)",
            per_byte.value / memcpy
        );
    }
    Some((text, format!("{series}: {verdict}")))
}

/// The cost answer over the latency points `rr`, named by `name` (transport and buffer).
pub fn cost(data: &Dataset, rr: &[&Point], name: impl Fn(&Point) -> String) -> Answer {
    let mut names: Vec<String> = rr.iter().map(|p| name(p)).collect();
    names.sort();
    names.dedup();
    let (details, verdicts): (Vec<String>, Vec<String>) = names
        .iter()
        .filter_map(|series| {
            let points: Vec<&Point> = rr.iter().filter(|p| name(p) == *series).copied().collect();
            series_line(data, series, &points)
        })
        .unzip();
    if details.is_empty() {
        return Answer::cannot(
            COST,
            "Cannot be said: a fit of round trip against size needs one transport at two sizes or more, each with two visits (measure latency at several --sizes).".into(),
            METHOD.into(),
        );
    }
    let count = |v: &str| verdicts.iter().filter(|x| x.ends_with(v)).count();
    Answer {
        question: COST,
        finding: format!(
            "At the smallest size measured the round trip is mostly fixed cost on {} of {} transports, mostly per-byte on {}, undecided on {} (the seeds: system calls dominate small messages; across two CPUs the fixed part is mostly wake-ups).",
            count("mostly fixed cost"),
            verdicts.len(),
            count("mostly per-byte"),
            verdicts.len() - count("mostly fixed cost") - count("mostly per-byte")
        ),
        details,
        rests_on: format!("{METHOD}; {}", yardstick_text(data)),
        verdict: Some(verdicts.join(", ")),
    }
}

/// How the line is fitted, as the answer and the report's method state it.
pub const METHOD: &str = "round trip (ns, per visit: 1 / round trips per second) against message \
     size by weighted least squares, each size weighted by the inverse variance of its mean over \
     the visits; the sizes are those where the cost is linear (from the smallest, a size joins \
     while it lies inside the line's prediction interval, Bonferroni over the sizes tried); \
     covariance scaled by the reduced χ² where the residuals exceed the visits' spread; 95 % \
     intervals by Student's t on the fewest visits − 1 degrees of freedom (and sizes − 2 when \
     scaled); the fixed share at the smallest size by Fieller's interval, \"mostly fixed cost\" \
     or \"mostly per-byte\" only when it excludes 50 %, else undecided";

fn yardstick_text(data: &Dataset) -> String {
    let y = yardsticks(data);
    let mut parts = Vec::new();
    parts.push(match y.syscall_ns {
        Some(_) => "a system call is the probe's raw getpid minimum (probe.json), four per round trip (two writes, two reads)".to_string(),
        None => "no probe.json in this folder, so the fixed part cannot be put in system calls' worth nor the per-byte part against memcpy (run `bytepath probe`)".to_string(),
    });
    if y.cross_cpu_wakeup_ns.is_some() || y.same_cpu_wakeup_ns.is_some() {
        parts.push(format!(
            "a wake-up, two per round trip, is {}",
            crate::probe::wakeups::METHOD
        ));
    }
    if limits(data).is_some() {
        parts
            .push("the per-byte part against single-thread memcpy at the DRAM-sized buffer".into());
    }
    parts.join("; ")
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;
