//! The run's schedule, shared by the controller and every worker. Workers derive the phase from
//! the timestamp they already take for each message, compared with deadlines fixed before the
//! start barrier: phase changes never wait for the controller thread to be scheduled (with
//! thousands of busy workers on two CPUs it can be starved for minutes). The controller only
//! raises `stop_now` on Ctrl-C. Per message this costs one relaxed load and two comparisons.
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Warmup,
    Measure,
    Stop,
}

#[derive(Debug)]
pub struct Control {
    base: Instant,
    /// Nanoseconds after `base`; set before the start barrier, read after it.
    measure_from: AtomicU64,
    measure_until: AtomicU64,
    stop_now: AtomicBool,
    /// Flows whose measured side has completed its `--messages`/`--bytes` share.
    flows_done: AtomicUsize,
}

impl Default for Control {
    fn default() -> Self {
        Control {
            base: Instant::now(),
            measure_from: AtomicU64::new(u64::MAX),
            measure_until: AtomicU64::new(u64::MAX),
            stop_now: AtomicBool::new(false),
            flows_done: AtomicUsize::new(0),
        }
    }
}

impl Control {
    /// Fixes the schedule: warm-up from `start`, then the measured phase. Returns its bounds.
    pub fn schedule(
        &self,
        start: Instant,
        warmup: Duration,
        duration: Duration,
    ) -> (Instant, Instant) {
        let from = start + warmup;
        let until = from + duration;
        let ns = |t: Instant| t.duration_since(self.base).as_nanos() as u64;
        self.measure_from.store(ns(from), Ordering::Relaxed);
        self.measure_until.store(ns(until), Ordering::Relaxed);
        (from, until)
    }

    /// Start of the measured phase (valid once `schedule` has run).
    pub fn measure_from(&self) -> Instant {
        self.base + Duration::from_nanos(self.measure_from.load(Ordering::Relaxed))
    }

    #[inline]
    pub fn phase_at(&self, now: Instant) -> Phase {
        if self.stop_now.load(Ordering::Relaxed) {
            return Phase::Stop;
        }
        let t = now.saturating_duration_since(self.base).as_nanos() as u64;
        if t < self.measure_from.load(Ordering::Relaxed) {
            Phase::Warmup
        } else if t < self.measure_until.load(Ordering::Relaxed) {
            Phase::Measure
        } else {
            Phase::Stop
        }
    }

    /// Ends the run now (Ctrl-C, a failed start, or every flow's count reached).
    pub fn stop(&self) {
        self.stop_now.store(true, Ordering::Relaxed);
    }

    pub fn is_stopped(&self) -> bool {
        self.stop_now.load(Ordering::Relaxed)
    }

    /// One flow has measured its share; the last of `flows` ends the run.
    pub fn flow_done(&self, flows: usize) {
        if self.flows_done.fetch_add(1, Ordering::AcqRel) + 1 == flows {
            self.stop();
        }
    }

    pub fn flows_done(&self) -> usize {
        self.flows_done.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_follows_the_schedule_and_stop_overrides_it() {
        let c = Control::default();
        let start = Instant::now();
        let (from, until) = c.schedule(start, Duration::from_secs(1), Duration::from_secs(2));
        assert_eq!(c.phase_at(start), Phase::Warmup);
        assert_eq!(c.phase_at(from), Phase::Measure);
        assert_eq!(c.phase_at(until - Duration::from_nanos(1)), Phase::Measure);
        assert_eq!(c.phase_at(until), Phase::Stop);
        c.stop();
        assert_eq!(c.phase_at(from), Phase::Stop);
    }

    #[test]
    fn before_the_schedule_is_fixed_everything_is_warm_up() {
        let c = Control::default();
        assert_eq!(
            c.phase_at(Instant::now() + Duration::from_secs(3600)),
            Phase::Warmup
        );
    }
}
