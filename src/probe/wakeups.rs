//! What one side of a round trip waking the other costs: a 64 B round trip over two pipes
//! (pipe(7)) with both ends on one CPU and on two, less the four system calls it makes (two
//! write(2), two read(2)), halved for its two wake-ups. On two CPUs a wake-up is an
//! inter-processor interrupt and the woken CPU leaving idle, which on a VM can cost several
//! microseconds: a small message's round trip is mostly this, not system calls, and ipc's cost
//! answer says so with these figures.
use serde::Serialize;

/// System calls in one 64 B pipe round trip: the client's write and read, the echo's read and
/// write.
pub const SYSCALLS_PER_ROUND_TRIP: f64 = 4.0;
/// Wake-ups in one round trip: each side sleeps in read(2) until the other writes.
pub const WAKEUPS_PER_ROUND_TRIP: f64 = 2.0;

/// How a wake-up's cost is derived, as probe.json and ipc's report state it.
pub const METHOD: &str = "(median 64 B round trip over two pipes − 4 × the raw getpid minimum) \
     / 2: each round trip makes four system calls and two wake-ups, so a wake-up here includes \
     the pipe's own work for one write and one read";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Wakeups {
    /// Median 64 B pipe round trip, both ends on one CPU.
    pub pipe_rr_same_cpu_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipe_rr_same_cpu_unavailable_reason: Option<String>,
    /// The same with the ends on two CPUs.
    pub pipe_rr_cross_cpu_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipe_rr_cross_cpu_unavailable_reason: Option<String>,
    /// One wake-up on one CPU (a switch to the woken side), derived by `METHOD`.
    pub same_cpu_wakeup_ns: Option<f64>,
    /// One wake-up of a side on another CPU, derived by `METHOD`.
    pub cross_cpu_wakeup_ns: Option<f64>,
    /// The CPUs the round trips ran on (the first, and the second for cross).
    pub cpus: Vec<usize>,
    pub method: &'static str,
}

/// Measures both round trips on the first two allowed CPUs; `getpid_ns` is the probe's raw
/// system-call minimum, subtracted four times.
pub fn measure(allowed_cpus: &[usize], getpid_ns: f64) -> Wakeups {
    let (first, second) = (allowed_cpus.first().copied(), allowed_cpus.get(1).copied());
    let same = match first {
        Some(cpu) => super::canary::pipe_rr_us(cpu, cpu),
        None => Err("no CPU is allowed to this process".to_string()),
    };
    let cross = match (first, second) {
        (Some(a), Some(b)) => super::canary::pipe_rr_us(a, b),
        _ => Err("only one CPU is allowed, so there is no second CPU to cross to".to_string()),
    };
    let ns = |r: &Result<f64, String>| r.as_ref().ok().map(|us| us * 1e3);
    Wakeups {
        pipe_rr_same_cpu_ns: ns(&same),
        pipe_rr_same_cpu_unavailable_reason: same.as_ref().err().cloned(),
        pipe_rr_cross_cpu_ns: ns(&cross),
        pipe_rr_cross_cpu_unavailable_reason: cross.as_ref().err().cloned(),
        same_cpu_wakeup_ns: ns(&same).and_then(|rt| per_wakeup(rt, getpid_ns)),
        cross_cpu_wakeup_ns: ns(&cross).and_then(|rt| per_wakeup(rt, getpid_ns)),
        cpus: allowed_cpus.iter().copied().take(2).collect(),
        method: METHOD,
    }
}

/// One wake-up's share of a round trip once its system calls are taken out; `None` when the
/// round trip is not above them (nothing left to attribute).
pub fn per_wakeup(round_trip_ns: f64, getpid_ns: f64) -> Option<f64> {
    let left = round_trip_ns - SYSCALLS_PER_ROUND_TRIP * getpid_ns;
    (left > 0.0).then_some(left / WAKEUPS_PER_ROUND_TRIP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wakeup_is_half_of_what_the_round_trip_spends_beyond_its_four_system_calls() {
        // 9,000 ns round trip, getpid 250 ns: (9,000 − 1,000) / 2.
        assert_eq!(per_wakeup(9_000.0, 250.0), Some(4_000.0));
        assert_eq!(
            per_wakeup(900.0, 250.0),
            None,
            "nothing left beyond the calls"
        );
    }

    #[test]
    fn both_round_trips_are_measured_or_say_why_not() {
        let w = measure(&[0], 100.0);
        assert!(w.pipe_rr_same_cpu_ns.is_some_and(|v| v > 0.0), "{w:?}");
        assert_eq!(w.pipe_rr_cross_cpu_ns, None);
        assert!(w
            .pipe_rr_cross_cpu_unavailable_reason
            .as_deref()
            .is_some_and(|r| r.contains("second CPU")));
    }
}
