//! What a study asks of the machine it runs on, beside its points: the probe of its limits
//! (probe.json), the canary at the start of each round (canary.jsonl), the settle before the
//! first round, and a watch on what else used the CPUs around each visit. `ThisMachine`
//! measures them; the driver's unit tests put a double in its place (`scripted`), so that the
//! loops are tested without measuring anything.
use crate::config::watch::Watch;
use crate::error::Error;
use crate::measure::interference::{Interference, Sample};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

pub trait Machine {
    /// Measures the machine's limits into `path` unless a probe is there already (a resumed
    /// folder keeps its own); whether it measured.
    fn probe(&self, path: &Path, cpus: &[usize]) -> Result<bool, Error>;

    /// Measures the canary on `cpus` at the start of round `round` and appends it to the
    /// folder's canary.jsonl.
    fn canary(&self, dir: &Path, round: usize, cpus: &[usize]) -> Result<(), Error>;

    /// `--settle`: waits for a quiet machine before the first round and says how it went (on
    /// stderr where stdout carries JSON).
    fn settle(&self, watch: &Watch, cpus: &[usize], interrupt: &AtomicBool, to_stderr: bool);

    /// Starts watching `cpus` around one visit; `VisitWatch::end` says what the visit cost and
    /// what else used them meanwhile.
    fn watch(&self, cpus: &[usize]) -> Box<dyn VisitWatch>;
}

/// A watch on the CPUs of one visit under way.
pub trait VisitWatch {
    /// The visit's wall time in seconds (what it cost the budget) and what others used of its
    /// CPUs; `threshold` is the quiet threshold a disturbed visit passed.
    fn end(self: Box<Self>, threshold: f64) -> (f64, Interference);
}

/// The machine this process runs on, measured.
pub struct ThisMachine;

impl Machine for ThisMachine {
    fn probe(&self, path: &Path, cpus: &[usize]) -> Result<bool, Error> {
        crate::probe::write_probe(path, cpus)
    }

    fn canary(&self, dir: &Path, round: usize, cpus: &[usize]) -> Result<(), Error> {
        crate::probe::watch::record_canary(dir, round, cpus)
    }

    fn settle(&self, watch: &Watch, cpus: &[usize], interrupt: &AtomicBool, to_stderr: bool) {
        crate::probe::watch::settle_before_first_round(watch, cpus, interrupt, to_stderr);
    }

    fn watch(&self, cpus: &[usize]) -> Box<dyn VisitWatch> {
        Box::new(Watched {
            cpus: cpus.to_vec(),
            before: Sample::take(cpus),
            started: Instant::now(),
        })
    }
}

/// /proc/stat read before a visit, and the clock started.
struct Watched {
    cpus: Vec<usize>,
    before: Sample,
    started: Instant,
}

impl VisitWatch for Watched {
    fn end(self: Box<Self>, threshold: f64) -> (f64, Interference) {
        let after = Sample::take(&self.cpus);
        let wall_s = self.started.elapsed().as_secs_f64();
        (
            wall_s,
            self.before.until(&after, self.cpus.len(), threshold),
        )
    }
}
