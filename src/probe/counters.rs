//! Which perf events open here, through perf_event_open(2) as `run` opens them
//! (`measure::counters`), each counted over a short busy loop; why a missing one is missing.
use crate::measure::counters::{
    perf_event_paranoid, pmu_present, CounterEvent, CounterSelection, CounterValue, Scope,
    ThreadCounters,
};
use serde::Serialize;
use std::hint::black_box;

#[derive(Debug, Clone, Serialize)]
pub struct Counters {
    pub perf_event_paranoid: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub perf_event_paranoid_unavailable_reason: Option<String>,
    pub pmu_present: bool,
    pub running_as_root: bool,
    pub events: Vec<EventFigures>,
}

/// One event: whether it opened, whether it saw kernel mode, what it counted over the probe.
#[derive(Debug, Clone, Serialize)]
pub struct EventFigures {
    /// The event's key without its unit (`task_clock`, `cycles`, …).
    pub event: &'static str,
    pub hardware: bool,
    pub available: bool,
    pub scope: Option<Scope>,
    /// The count over a ~1 ms busy loop with a few system calls; its unit is `count_unit`.
    pub count: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_unavailable_reason: Option<String>,
    pub count_unit: &'static str,
}

pub fn measure() -> Counters {
    let mut counters = ThreadCounters::open(CounterSelection::All);
    counters.start();
    busy_loop();
    let sample = counters.stop();
    let paranoid = perf_event_paranoid();
    Counters {
        perf_event_paranoid: paranoid,
        perf_event_paranoid_unavailable_reason: paranoid
            .is_none()
            .then(|| "/proc/sys/kernel/perf_event_paranoid is not readable".to_string()),
        pmu_present: pmu_present(),
        running_as_root: crate::sys::is_root(),
        events: CounterEvent::ALL
            .iter()
            .map(|&e| figures(e, sample.get(e)))
            .collect(),
    }
}

fn figures(event: CounterEvent, value: &CounterValue) -> EventFigures {
    let key = event.key();
    let (name, unit) = match key.strip_suffix("_ns") {
        Some(name) => (name, "ns"),
        None => (key, "events"),
    };
    let (count, scope, reason) = match value {
        CounterValue::Counted { value, scope, .. } => (Some(*value), Some(*scope), None),
        CounterValue::Unavailable(reason) => (None, None, Some(reason.clone())),
    };
    EventFigures {
        event: name,
        hardware: event.is_hardware(),
        available: count.is_some(),
        scope,
        count,
        count_unavailable_reason: reason,
        count_unit: unit,
    }
}

/// About a millisecond of arithmetic and a few system calls, so every event has something
/// to count.
fn busy_loop() {
    let mut x = 0u64;
    for i in 0..1_000_000u64 {
        x = black_box(x.wrapping_mul(31).wrapping_add(i));
    }
    for _ in 0..10 {
        black_box(crate::sys::support::raw_getpid());
    }
    std::thread::yield_now();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_clock_is_named_without_its_unit_and_counts_nanoseconds() {
        let f = figures(
            CounterEvent::TaskClock,
            &CounterValue::Counted {
                value: 5.0,
                scope: Scope::UserAndKernel,
                multiplexed: false,
            },
        );
        assert_eq!(
            (f.event, f.count_unit, f.available),
            ("task_clock", "ns", true)
        );
        assert_eq!(f.count, Some(5.0));
    }

    #[test]
    fn a_missing_event_is_null_with_its_reason() {
        let f = figures(
            CounterEvent::Cycles,
            &CounterValue::Unavailable("no PMU".into()),
        );
        assert_eq!((f.event, f.hardware, f.available), ("cycles", true, false));
        assert_eq!(f.count, None);
        assert_eq!(f.count_unavailable_reason.as_deref(), Some("no PMU"));
    }
}
