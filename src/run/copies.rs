//! `bytepath run --count-copies`: the kernel's tracepoints (`measure::copies`) open in a run of
//! their own after the headline run, as the counters are: every hit costs the kernel a sample
//! record, so no headline figure may carry them. The record's `copies` block comes from that
//! run, and says so.
use crate::config::watch::run_cpus;
use crate::config::RunSpec;
use crate::engine::PointRunner;
use crate::environment::Environment;
use crate::measure::copies::CopyCounter;
use crate::record::copies::{not_counted, report};
use crate::record::{self, RunRecord};
use std::sync::atomic::AtomicBool;

/// Runs `spec` once more (no counter, no profile) with the tracepoints open on the run's CPUs
/// and puts what they counted on `record`. A count that cannot start skips the run and says
/// why; a run that fails leaves every copies figure unavailable with the reason, and the
/// headline figures as measured.
pub fn copies_run(
    runner: &dyn PointRunner,
    spec: &RunSpec,
    record: &mut RunRecord,
    (env, interrupt): (Environment, &AtomicBool),
) {
    let spec = super::counters::headline_spec(spec);
    let cpus = run_cpus(&spec.pinning, spec.threads, &spec.cpus);
    let counter = match CopyCounter::start(&cpus) {
        Ok(counter) => counter,
        Err(why) => {
            let about = "no run: the tracepoints could not be opened".to_string();
            record.copies = Some(not_counted(about, &format!("no count: {why}")));
            return;
        }
    };
    let outcome = runner.run(&spec, interrupt);
    let counts = counter.stop();
    record.copies = Some(match outcome {
        Ok(outcome) => {
            let counted = record::build(&spec, &outcome, env);
            let about = format!(
                "a run of its own right after the headline run ({:.1} s measured) with the \
                 kernel's tracepoints open; only this block comes from it, every other figure \
                 from the headline run, which opened none",
                counted.measured_s
            );
            report(&spec, &counted, counts, about)
        }
        Err(e) => not_counted(
            "a run of its own after the headline run".into(),
            &format!("the copies run failed: {e}"),
        ),
    });
}
