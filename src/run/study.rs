//! Measuring `bytepath run`'s point: the headline run with nothing open, then the counter run,
//! the copies run and the profiled rerun where asked.
use crate::config::RunSpec;
use crate::engine::worker::Role;
use crate::engine::PointRunner;
use crate::environment::Environment;
use crate::error::Error;
use crate::measure::counters::CounterSelection;
use crate::record::{self, profile, RunRecord};
use std::sync::atomic::AtomicBool;

use super::counters;
use super::spec::RunStudy;

/// Measures the placed `spec` through `runner` with no counter open and, after a headline
/// run that ran to its end, the counter run (counters asked for) and the profiled rerun
/// (`--profile`).
pub fn measure_point(
    spec: &RunSpec,
    runner: &dyn PointRunner,
    study: &RunStudy,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Error> {
    let mut record = measure(&counters::headline_spec(spec), runner, study, interrupt)?;
    let headline_ran = record.skipped_reason.is_none() && !record.interrupted;
    if spec.counters != CounterSelection::None {
        record.config.counters = spec.counters;
        if headline_ran {
            let env = Environment::detect(study.cpus);
            counters::counter_run(runner, spec, &mut record, (env, interrupt))?;
        } else {
            counters::not_counted(&mut record, "the headline run did not run to its end");
        }
    }
    if study.count_copies {
        if headline_ran {
            let env = Environment::detect(study.cpus);
            super::copies::copies_run(runner, spec, &mut record, (env, interrupt));
        } else {
            record.copies = Some(crate::record::copies::not_counted(
                "no run".into(),
                "the headline run did not run to its end",
            ));
        }
    }
    if study.profile && headline_ran {
        let env = Environment::detect(study.cpus);
        profiled_run(runner, spec, study.theirs, &mut record, (env, interrupt))?;
    }
    Ok(record)
}

/// `--profile`: the same point once more with every side sampled, after the headline run so
/// that no headline figure carries the sampling; its blocks go on the headline record.
fn profiled_run(
    runner: &dyn PointRunner,
    spec: &RunSpec,
    theirs: Option<Role>,
    record: &mut RunRecord,
    (env, interrupt): (Environment, &AtomicBool),
) -> Result<(), Error> {
    let spec = RunSpec {
        profile: true,
        ..spec.clone()
    };
    let outcome = runner.run(&spec, interrupt)?;
    let profiled = record::build(&spec, &outcome, env);
    let about = format!(
        "a second run of the same point right after the headline run ({:.1} s measured), every \
         side's threads sampled over its measured phase; no headline figure comes from it",
        profiled.measured_s
    );
    profile::attach(record, &profiled, about);
    // A quick probe of this host's memcpy: the unit of "copies' worth".
    let roofline = crate::probe::roofline::measure(&crate::probe::Effort::quick());
    let memcpy = roofline
        .dram_median()
        .map(|(gb_per_s, bytes)| profile::memcpy_unit(gb_per_s, bytes, "a quick probe's"));
    profile::apply_memcpy(record, memcpy, theirs);
    Ok(())
}

/// Runs the placed `spec` (with a stream: its start line first, then a line per slice as the
/// controller sees it complete) and builds its record; with `--under-load`, in paired visits
/// without and with the load (`paired`).
fn measure(
    spec: &RunSpec,
    runner: &dyn PointRunner,
    study: &RunStudy,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Error> {
    super::visit::start_stream(spec, study);
    if spec.under_load.is_some() {
        return super::paired::measure(spec, runner, study, interrupt);
    }
    super::visit::visit(spec, runner, study, interrupt, None)
}
