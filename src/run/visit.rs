//! One measured run of `bytepath run`'s point and the stream's lines about it: the start line
//! before anything is measured, and a line per slice as the controller sees it complete. A
//! plain run is one such visit (`study`); a run under load is several (`paired`).
use super::spec::RunStudy;
use crate::config::{Pattern, RunSpec};
use crate::engine::slices::SliceSeen;
use crate::engine::{PointRunner, RunOutcome};
use crate::environment::Environment;
use crate::error::Error;
use crate::record::{self, RunRecord};
use std::sync::atomic::AtomicBool;

/// With a stream: its start line, the configuration as the record will state it, before
/// anything is measured.
pub(super) fn start_stream(spec: &RunSpec, study: &RunStudy) {
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
            if let (Some(label), Some(fields)) = (&label, line.as_object_mut()) {
                fields.insert("visit".into(), label.clone());
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
pub(super) const STREAM_NOTE: &str = "--json-stream: the controller woke at the end of every slice to      tell it (the message threads did no more work); on a VM a waking CPU can shorten round      trips, so rr figures with and without the stream are not taken under quite the same      conditions";

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
