//! The run's schedule, shared by the controller and every worker. Workers derive the phase from
//! the timestamps they already take (per round trip, or per batch of messages), compared with
//! deadlines fixed before the start barrier: phase changes never wait for the controller thread
//! to be scheduled (with thousands of busy workers on two CPUs it can be starved for minutes).
//! `stop_now` is raised on Ctrl-C, by the last flow to reach its count, or by a failed side,
//! and wakes the controller. Per timestamp this costs one relaxed load and two comparisons.
//!
//! The words live in a shared mapping, so a second process forked for `--processes` follows
//! the same schedule and stop: `base` is copied by the fork and CLOCK_MONOTONIC is the same
//! clock in both processes.
use crate::sys::shared::SharedWords;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Warmup,
    Measure,
    Stop,
}

// The shared words, by index.
/// Nanoseconds after `base`; set before the start barrier, read after it.
const MEASURE_FROM: usize = 0;
const MEASURE_UNTIL: usize = 1;
/// Non-zero: the run ends now.
const STOP_NOW: usize = 2;
/// Flows whose measured side has completed its `--messages`/`--bytes` share.
const FLOWS_DONE: usize = 3;
/// Non-zero: the second process's workers are set up and waiting to start.
const PEER_READY: usize = 4;
const WORDS: usize = 5;

#[derive(Debug)]
pub struct Control {
    base: Instant,
    words: SharedWords,
}

impl Default for Control {
    /// Panics if one page of shared memory cannot be mapped; `new` returns the error instead.
    fn default() -> Self {
        Control::new().expect("mapping one page of shared memory")
    }
}

impl Control {
    pub fn new() -> io::Result<Control> {
        let words = SharedWords::new(WORDS)?;
        for i in [MEASURE_FROM, MEASURE_UNTIL] {
            words.word(i).store(u64::MAX, Ordering::Relaxed);
        }
        Ok(Control {
            base: Instant::now(),
            words,
        })
    }

    #[inline]
    fn word(&self, i: usize) -> &AtomicU64 {
        self.words.word(i)
    }

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
        self.word(MEASURE_FROM).store(ns(from), Ordering::Relaxed);
        self.word(MEASURE_UNTIL).store(ns(until), Ordering::Relaxed);
        (from, until)
    }

    /// Start of the measured phase (valid once `schedule` has run).
    pub fn measure_from(&self) -> Instant {
        self.base + Duration::from_nanos(self.word(MEASURE_FROM).load(Ordering::Relaxed))
    }

    /// Start of the measured phase, once `schedule` has fixed it.
    pub fn scheduled_from(&self) -> Option<Instant> {
        let ns = self.word(MEASURE_FROM).load(Ordering::Relaxed);
        (ns != u64::MAX).then(|| self.base + Duration::from_nanos(ns))
    }

    #[inline]
    pub fn phase_at(&self, now: Instant) -> Phase {
        if self.word(STOP_NOW).load(Ordering::Relaxed) != 0 {
            return Phase::Stop;
        }
        let t = now.saturating_duration_since(self.base).as_nanos() as u64;
        if t < self.word(MEASURE_FROM).load(Ordering::Relaxed) {
            Phase::Warmup
        } else if t < self.word(MEASURE_UNTIL).load(Ordering::Relaxed) {
            Phase::Measure
        } else {
            Phase::Stop
        }
    }

    /// Ends the run now (Ctrl-C, a failed start, or every flow's count reached), and wakes a
    /// controller waiting in `wait_for_stop`.
    pub fn stop(&self) {
        self.word(STOP_NOW).store(1, Ordering::Relaxed);
        self.words.wake(STOP_NOW);
    }

    /// Sleeps until `stop` (from any thread of either process) or for at most `timeout`.
    pub fn wait_for_stop(&self, timeout: Duration) {
        self.words.wait(STOP_NOW, 0, timeout);
    }

    pub fn is_stopped(&self) -> bool {
        self.word(STOP_NOW).load(Ordering::Relaxed) != 0
    }

    /// One flow has measured its share; the last of `flows` ends the run.
    pub fn flow_done(&self, flows: usize) {
        if self.word(FLOWS_DONE).fetch_add(1, Ordering::AcqRel) + 1 == flows as u64 {
            self.stop();
        }
    }

    pub fn flows_done(&self) -> usize {
        self.word(FLOWS_DONE).load(Ordering::Acquire) as usize
    }

    /// The second process's workers are set up (pinned, counters open) and wait to start.
    pub fn mark_peer_ready(&self) {
        self.word(PEER_READY).store(1, Ordering::Release);
    }

    pub fn peer_ready(&self) -> bool {
        self.word(PEER_READY).load(Ordering::Acquire) != 0
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
