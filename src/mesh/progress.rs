//! What a mesh shows while it runs: one line per finished run with its visit, round, pair,
//! point and figure, how many runs are done and about how long is left (from the mean wall
//! time of the runs so far). Plain lines, so logs, CI and `kubectl logs` read the same.
use super::answers::Figure;
use super::schedule::Run;
use crate::record::view::{shown, RunView};
use serde::Deserialize;
use serde_json::Value;
use std::time::{Duration, Instant};

/// What the schedule did: built by the progress, which counts each run as it ends (here, so
/// that `run` drives the progress and the progress knows nothing of `run`).
pub struct Executed {
    pub measured: usize,
    pub interrupted: bool,
}

pub struct Progress {
    started: Instant,
    to_measure: usize,
    done: usize,
    rounds: usize,
}

impl Progress {
    /// `to_measure` runs in this session; `rounds` rounds per visit.
    pub fn new(to_measure: usize, rounds: usize) -> Progress {
        Progress {
            started: Instant::now(),
            to_measure,
            done: 0,
            rounds,
        }
    }

    /// A run's record was saved (`record`, as written).
    pub fn finished(&mut self, run: &Run, record: &Value) {
        self.done += 1;
        let left = self.time_left();
        // The source host wrote it (perhaps an older bytepath): what does not read shows as "?".
        let record = RunView::deserialize(record).unwrap_or_default();
        println!(
            "[visit {}/{}, round {}/{}] {}  {}  ({} of {} runs, {left})",
            run.visit + 1,
            shown(&record.mesh.as_ref().and_then(|m| m.visits.clone())),
            run.round + 1,
            self.rounds,
            pair_of(&record),
            outcome(&record),
            self.done,
            self.to_measure,
        );
    }

    fn time_left(&self) -> String {
        let remaining = self.to_measure.saturating_sub(self.done);
        if remaining == 0 {
            return "done".into();
        }
        let per_run = self.started.elapsed() / self.done.max(1) as u32;
        format!("about {} left", duration_text(per_run * remaining as u32))
    }

    pub fn executed(&self, interrupted: bool) -> Executed {
        Executed {
            measured: self.done,
            interrupted,
        }
    }
}

fn pair_of(record: &RunView) -> String {
    format!(
        "{} -> {} {}",
        record.src.as_deref().unwrap_or("?"),
        record.dst.as_deref().unwrap_or("?"),
        record.config().point_key()
    )
}

/// The run's figure, or why there is none.
pub fn outcome(record: &RunView) -> String {
    let figure = Figure::of_pattern(record.config().pattern());
    match record.status.as_deref() {
        Some("completed") => match figure.value(record) {
            Some(v) => format!("{v:.3} {}", figure.name()),
            None => "no figure".into(),
        },
        Some("interrupted") => "interrupted: saved as such; --resume measures it again".into(),
        Some("skipped") => format!(
            "skipped: {}",
            record.skipped_reason.as_deref().unwrap_or("?")
        ),
        _ => format!("FAILED: {}", record.errors().join("; ")),
    }
}

/// `1h02m`, `3m05s`, `12s`.
pub fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_line_gives_the_figure_or_the_failure() {
        let done = json!({"status": "completed", "config": {"pattern": "rr"},
                          "sides": [{"latency_ns": {"p50": 57_000}}, {}]});
        let view = |r: serde_json::Value| -> RunView { serde_json::from_value(r).unwrap() };
        assert_eq!(outcome(&view(done)), "57.000 round-trip p50 µs");
        let failed = json!({"status": "failed", "errors": ["host b is down: refused"]});
        assert_eq!(outcome(&view(failed)), "FAILED: host b is down: refused");
        assert_eq!(duration_text(Duration::from_secs(185)), "3m05s");
        assert_eq!(duration_text(Duration::from_secs(3720)), "1h02m");
    }
}
