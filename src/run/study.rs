//! Measuring `bytepath run`'s point: the headline run with nothing open, then the counter run,
//! the copies run and the profiled rerun where asked.
use crate::config::{Pattern, RunSpec};
use crate::engine::slices::SliceSeen;
use crate::engine::worker::Role;
use crate::engine::{PointRunner, RunOutcome};
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
    start_stream(spec, study);
    if spec.under_load.is_some() {
        return super::paired::measure(spec, runner, study, interrupt);
    }
    visit(spec, runner, study, interrupt, None)
}

/// With a stream: its start line, the configuration as the record will state it, before
/// anything is measured.
fn start_stream(spec: &RunSpec, study: &RunStudy) {
    let stream = study.stream;
    if !stream.is_on() {
        return;
    }
    let env = Environment::detect(study.cpus);
    let planned = record::build(spec, &RunOutcome::not_run(spec, String::new()), env.clone());
    let mut config = serde_json::to_value(&planned.config).expect("JSON");
    // Where the sides ran is said by the engine once they run: in the point's record.
    if let Some(c) = config.as_object_mut() {
        c.remove("where_sides_run");
    }
    let environment = serde_json::to_value(&env).expect("JSON");
    stream.start(
        "run",
        u64::from(record::SCHEMA_VERSION),
        &config,
        environment,
    );
}

/// Runs the placed `spec` once (with a stream: a line per slice as the controller sees it
/// complete, carrying `label` when the run is one visit of several) and builds its record.
pub(super) fn visit(
    spec: &RunSpec,
    runner: &dyn PointRunner,
    study: &RunStudy,
    interrupt: &AtomicBool,
    label: Option<serde_json::Value>,
) -> Result<RunRecord, Error> {
    let (stream, env) = (study.stream, Environment::detect(study.cpus));
    let outcome = if stream.is_on() {
        let tell = |seen: SliceSeen| {
            let mut line = slice_line(spec.pattern, seen);
            if let Some(label) = &label {
                line["visit"] = label.clone();
            }
            stream.slice(line)
        };
        runner.run_watched(spec, interrupt, &tell)?
    } else {
        runner.run(spec, interrupt)?
    };
    let mut record = record::build(spec, &outcome, env);
    if stream.is_on() {
        record.notes.push(STREAM_NOTE.into());
    }
    Ok(record)
}

/// What `--json-stream` changes in the measurement, said in the record it streams.
const STREAM_NOTE: &str = "--json-stream: the controller woke at the end of every slice to      tell it (the message threads did no more work); on a VM a waking CPU can shorten round      trips, so rr figures with and without the stream are not taken under quite the same      conditions";

/// A slice line's figures: the measured side's totals in the slice and its rate.
fn slice_line(pattern: Pattern, seen: SliceSeen) -> serde_json::Value {
    let s = seen.length.as_secs_f64();
    let side = match pattern {
        Pattern::Stream => "receiver",
        Pattern::Rr | Pattern::Crr => "client",
    };
    serde_json::json!({
        "index": seen.index,
        "side": side,
        "start_s": (seen.length * seen.index as u32).as_secs_f64(),
        "slice_s": s,
        "bytes": seen.bytes,
        "messages": seen.messages,
        "throughput_gbps": seen.bytes as f64 * 8.0 / s / 1e9,
        "messages_per_s": seen.messages as f64 / s,
    })
}
