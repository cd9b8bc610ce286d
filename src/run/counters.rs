//! `bytepath run`'s counter phase: the headline run opens no perf counter (an open counter
//! set costs about 8 % of the throughput at 4 KiB), and the counter figures come from a run
//! of their own right after it, as a sweep's come from a counter visit. The record's
//! `counter_run` block says which run each figure came from.
use crate::config::RunSpec;
use crate::engine::PointRunner;
use crate::environment::Environment;
use crate::error::Error;
use crate::measure::counters::CounterSelection;
use crate::record::counter_run::CounterRun;
use crate::record::{self, Metric, MetricSet, RunRecord};
use std::sync::atomic::AtomicBool;

/// The spec of the headline run: `spec` with no counter open.
pub fn headline_spec(spec: &RunSpec) -> RunSpec {
    RunSpec {
        counters: CounterSelection::None,
        ..spec.clone()
    }
}

/// Runs `spec` (counters as asked) once more after the headline run and moves its sides'
/// counter figures onto `record`; a counter run that fails or is interrupted leaves every
/// counter unavailable with the reason, and the headline figures as measured.
pub fn counter_run(
    runner: &dyn PointRunner,
    spec: &RunSpec,
    record: &mut RunRecord,
    (env, interrupt): (Environment, &AtomicBool),
) -> Result<(), Error> {
    let counted = match runner.run(spec, interrupt) {
        Ok(outcome) => record::build(spec, &outcome, env),
        Err(e) => {
            let why = format!("the counter run failed: {e}");
            not_counted(record, &why);
            return Ok(());
        }
    };
    attach(record, &counted);
    Ok(())
}

/// Puts the counter run `counted`'s counter figures on the headline `record`.
pub fn attach(record: &mut RunRecord, counted: &RunRecord) {
    let failed = if counted.interrupted {
        Some("the counter run was interrupted".to_string())
    } else if !counted.errors.is_empty() {
        Some(format!(
            "the counter run failed: {}",
            counted.errors.join("; ")
        ))
    } else {
        None
    };
    if let Some(why) = failed {
        not_counted(record, &why);
        return;
    }
    for (side, theirs) in record.sides.iter_mut().zip(&counted.sides) {
        side.counters = theirs.counters.clone();
        side.derived = theirs.derived.clone();
        side.counter_scope = theirs.counter_scope;
        side.counters_multiplexed = theirs.counters_multiplexed;
    }
    record.config.counters = counted.config.counters;
    restate_notes(record);
    record.notes.push(format!(
        "perf counters ({}) were open only in the counter run, where they follow each thread \
         across context switches (about 2 µs per switch on small VMs): its figure beside the \
         headline shows what counting cost",
        counted.config.counters.name()
    ));
    record.counter_run = Some(CounterRun {
        measured_s: counted.measured_s,
        headline_value: Some(counted.headline_value()),
        description: format!(
            "a run of its own right after the headline run ({:.1} s measured) with perf \
             counters open; the counter and per-byte figures come from it, every other figure \
             from the headline run, which opened no counter",
            counted.measured_s
        ),
    });
}

/// Every counter and derived figure on `record` unavailable for `why`.
pub fn not_counted(record: &mut RunRecord, why: &str) {
    let blank = |set: &MetricSet| {
        MetricSet(
            set.0
                .iter()
                .map(|(k, _)| (k.clone(), Metric::Unavailable(why.to_string())))
                .collect(),
        )
    };
    restate_notes(record);
    for side in &mut record.sides {
        side.counters = blank(&side.counters);
        side.derived = blank(&side.derived);
        side.counter_scope = None;
        side.counters_multiplexed = false;
    }
    record.counter_run = Some(CounterRun {
        measured_s: 0.0,
        headline_value: None,
        description: format!(
            "no counter figures: {why}; the headline run opened no counter and its figures stand"
        ),
    });
}

/// The headline run's notes less the one its counter-less spec made: counters were asked for.
fn restate_notes(record: &mut RunRecord) {
    record
        .notes
        .retain(|n| !n.starts_with("perf counters are off for rr by default"));
}
