//! `--settle`: before a study's first round, wait until others leave the run's CPUs alone
//! (their share under the quiet threshold for `QUIET_FOR` in a row) and two canaries in a
//! row agree, up to a limit; then say how long it waited, or that it started on a busy machine
//! and why.
use super::canary::{self, Canary, Component};
use crate::measure::interference::Sample;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Others must stay under the threshold this long in a row.
pub const QUIET_FOR: Duration = Duration::from_secs(3);
/// How long one reading of others' CPU use lasts.
const WINDOW: Duration = Duration::from_millis(500);
/// Two canaries in a row agree when every component they share is within this factor.
const CANARY_AGREEMENT: f64 = 0.10;

/// How the wait ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settled {
    pub waited_s: f64,
    /// True when the machine was quiet and the canary stable; false when the limit ran out
    /// (or Ctrl-C came) first.
    pub quiet: bool,
    /// Others' share of the run's CPUs in the last window.
    pub last_others_share: f64,
    /// Why it started on a busy machine; `None` when it was quiet.
    pub busy_reason: Option<String>,
}

impl Settled {
    /// The line a study prints before its first round.
    pub fn line(&self) -> String {
        match &self.busy_reason {
            None => format!(
                "settle: the machine was quiet after {:.1} s (others under the threshold for {} s and the canary stable); starting",
                self.waited_s,
                QUIET_FOR.as_secs()
            ),
            Some(why) => format!(
                "settle: started on a busy machine after waiting {:.1} s: {why}",
                self.waited_s
            ),
        }
    }
}

/// The wait's state, fed one window at a time (kept apart from the clock so it can be tested).
#[derive(Debug, Default)]
pub struct Watcher {
    quiet_for: Duration,
    last_share: f64,
    canaries: Vec<Canary>,
}

impl Watcher {
    /// One window: others' share over it, its length, and the canary measured after it.
    pub fn observe(&mut self, share: f64, threshold: f64, window: Duration, canary: Canary) {
        self.last_share = share;
        self.quiet_for = if share <= threshold {
            self.quiet_for + window
        } else {
            Duration::ZERO
        };
        self.canaries.push(canary);
    }

    /// Why the machine is not settled yet; `None` once it is.
    pub fn unsettled(&self, threshold: f64) -> Option<String> {
        if self.quiet_for < QUIET_FOR {
            return Some(format!(
                "others used {:.0} % of the run's CPUs in the last {:.1} s (quiet threshold {:.0} %; quiet for {:.1} s of the {} s asked)",
                self.last_share * 100.0,
                WINDOW.as_secs_f64(),
                threshold * 100.0,
                self.quiet_for.as_secs_f64(),
                QUIET_FOR.as_secs()
            ));
        }
        let [.., a, b] = self.canaries.as_slice() else {
            return Some("fewer than two canaries measured".into());
        };
        Component::ALL.iter().find_map(|&c| {
            let (x, y) = (a.cost(c)?, b.cost(c)?);
            let moved = (y / x - 1.0).abs();
            (moved > CANARY_AGREEMENT).then(|| {
                format!(
                    "the canary's {} moved {:.0} % between its last two measurements (allowed {:.0} %)",
                    c.name(),
                    moved * 100.0,
                    CANARY_AGREEMENT * 100.0
                )
            })
        })
    }
}

/// Waits for a quiet machine on `cpus`, at most `limit`; Ctrl-C ends the wait at once.
pub fn settle(cpus: &[usize], threshold: f64, limit: Duration, interrupt: &AtomicBool) -> Settled {
    let start = Instant::now();
    let mut watcher = Watcher::default();
    loop {
        let before = Sample::take(cpus);
        std::thread::sleep(WINDOW);
        let block = before.until(&Sample::take(cpus), cpus.len(), threshold);
        let share = block.others_cpu_share + block.steal_share;
        watcher.observe(share, threshold, WINDOW, canary::measure(cpus));
        let why = watcher.unsettled(threshold);
        let waited = start.elapsed();
        let stopped = interrupt.load(Ordering::SeqCst);
        if why.is_none() || waited >= limit || stopped {
            let busy_reason = match (why, stopped) {
                (None, _) => None,
                (Some(why), true) => Some(format!("interrupted while waiting; {why}")),
                (Some(why), false) => Some(format!(
                    "the {:.0} s limit ran out; {why}",
                    limit.as_secs_f64()
                )),
            };
            return Settled {
                waited_s: waited.as_secs_f64(),
                quiet: busy_reason.is_none(),
                last_others_share: share,
                busy_reason,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canary(getpid_ns: f64) -> Canary {
        canary::fixture(getpid_ns)
    }

    #[test]
    fn settles_only_after_enough_quiet_windows_in_a_row_and_a_stable_canary() {
        let mut w = Watcher::default();
        let half = Duration::from_millis(500);
        for _ in 0..5 {
            w.observe(0.02, 0.1, half, canary(100.0));
        }
        // 2.5 s quiet: not yet.
        assert!(w.unsettled(0.1).unwrap().contains("quiet for 2.5 s"));
        // A busy window starts the count again.
        w.observe(0.6, 0.1, half, canary(100.0));
        let why = w.unsettled(0.1).unwrap();
        assert!(why.contains("others used 60 %"), "{why}");
        for _ in 0..6 {
            w.observe(0.02, 0.1, half, canary(100.0));
        }
        assert_eq!(w.unsettled(0.1), None);
        // Quiet, but the canary jumped: not settled.
        w.observe(0.02, 0.1, half, canary(150.0));
        assert!(w.unsettled(0.1).unwrap().contains("getpid moved 50 %"));
    }

    #[test]
    fn a_busy_start_names_the_limit_and_the_reason() {
        let s = Settled {
            waited_s: 5.0,
            quiet: false,
            last_others_share: 0.9,
            busy_reason: Some("the 5 s limit ran out; others used 90 %".into()),
        };
        assert!(s
            .line()
            .starts_with("settle: started on a busy machine after waiting 5.0 s"));
    }
}
