//! `bytepath sweep`: a matrix of points, measured in an interleaved order, written as it goes.
//! Every finished point is appended to the results folder before the next starts; a point that
//! fails is recorded and the sweep goes on; Ctrl-C ends the sweep after the current point.
pub mod folder;
pub mod progress;
pub mod spec;

use crate::calibrate;
use crate::cli::SweepArgs;
use crate::config::format_cpu_list;
use crate::engine::RunOutcome;
use crate::environment::{mem_available, Environment};
use crate::error::{Error, Status};
use crate::record::{self, SweepPoint};
use crate::sides::Sides;
use crate::{report, sys};
use folder::{ResultsFolder, Saved};
use progress::Progress;
use serde_json::{json, Value};
use spec::{Point, SweepSpec};
use std::sync::atomic::{AtomicBool, Ordering};

/// How the points are ordered, as the marker records it.
/// The probe of the machine the sweep ran on (see `bytepath probe`).
pub const PROBE_JSON: &str = "probe.json";

const ORDER: &str = "groups of (pattern, threads, size) in list order; within group g the \
                     mechanism list is rotated left by g";

pub fn command(args: &SweepArgs, interrupt: &AtomicBool) -> Result<Status, Error> {
    let cpus = sys::affinity::allowed_cpus()
        .map_err(|e| Error::Failed(format!("reading this process's CPU affinity: {e}")))?;
    let spec = SweepSpec::from_args(args, &cpus)?;
    let points = spec.points();
    let marker = folder::marker(
        folder::SWEEP_KIND,
        spec.to_json(),
        arguments(args),
        points.len(),
        ORDER,
    );
    // Set up once for every point, before the folder is made, so an unreachable server is
    // one error and no empty folder; dropped (namespaces deleted) when the sweep returns.
    let sides = Sides::open(&spec.network, spec.remote.as_ref())?;
    let (mut results, prior) = folder::open(args.out.as_deref(), args.resume, &marker)?;
    // Best effort: counters that cannot open say so with EMFILE as their reason.
    let _ = sys::raise_open_file_limit();
    let todo: Vec<(usize, Point)> = points
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, p)| !prior.done.contains(&p.key()))
        .collect();
    print_plan(&spec, &results, &prior, todo.len());
    record_probe(&results.dir, &cpus)?;
    let env = Environment::detect(&cpus);
    if let Some(place) = sides.announce() {
        println!("sweep: sides {place}");
    }
    let progress = Progress::new(todo.len(), points.len());
    let mut interrupted = false;
    for (index, point) in todo {
        if interrupt.load(Ordering::SeqCst) {
            interrupted = true;
            break;
        }
        progress.start(index, &point.key());
        let record = measure(
            &spec,
            &sides,
            &point,
            (index, points.len()),
            &env,
            interrupt,
        );
        results.append(&record)?;
        progress.finish(index, &record.value);
        if record.value["interrupted"] == true {
            interrupted = true;
            break;
        }
    }
    progress.done();
    let all = record_statuses(&results)?;
    finish(&results, interrupted, &all)
}

/// Measures one point; a point that cannot run becomes a failed record, never an error.
fn measure(
    spec: &SweepSpec,
    sides: &Sides,
    point: &Point,
    (index, total): (usize, usize),
    env: &Environment,
    interrupt: &AtomicBool,
) -> Saved {
    let run = sides.place(spec.run_spec(point));
    let outcome = match mem_available() {
        Some(available) => run.check_memory(available).map_err(Error::from),
        None => Ok(()),
    }
    .and_then(|()| sides.run(&run, interrupt));
    let sweep_point = SweepPoint {
        index,
        total,
        key: point.key(),
    };
    let outcome = outcome.unwrap_or_else(|e| RunOutcome::not_run(&run, e.to_string()));
    let mut record = record::build(&run, &outcome, env.clone());
    record.command = "sweep";
    record.sweep_point = Some(sweep_point);
    Saved {
        line: serde_json::to_string(&record).expect("the record serializes"),
        value: serde_json::to_value(&record).expect("the record serializes"),
    }
}

/// Measures the machine's own limits (memcpy roofline, syscall and clock cost) once per results
/// folder, before the first point, so the report can set every figure against them.
fn record_probe(dir: &std::path::Path, cpus: &[usize]) -> Result<(), Error> {
    let path = dir.join(PROBE_JSON);
    if path.exists() {
        return Ok(());
    }
    let probe = calibrate::probe(&calibrate::Effort::full(), cpus);
    let text = serde_json::to_string_pretty(&probe).expect("the probe serializes") + "\n";
    std::fs::write(&path, text).map_err(|source| Error::File {
        path: path.clone(),
        source,
    })?;
    println!("probe: machine limits measured into {}", path.display());
    Ok(())
}

/// The flags as given, for the marker.
fn arguments(args: &SweepArgs) -> Value {
    json!({
        "mechanisms": args.mechanisms,
        "sizes": args.sizes,
        "threads": args.threads,
        "patterns": args.patterns,
        "ci": args.ci,
        "min_time": args.min_time,
        "max_time": args.max_time,
        "slice": args.slice,
        "warmup": args.warmup,
        "pin": args.pin,
        "recv_size": args.recv_size,
        "counters": args.counters,
        "verify": args.verify,
        "netns": args.network.netns,
        "mtu": args.network.mtu,
        "netem": args.network.netem,
        "remote": args.remote.remote,
    })
}

fn print_plan(spec: &SweepSpec, results: &ResultsFolder, prior: &folder::Prior, todo: usize) {
    let pin = if spec.pin_defaulted {
        format!(
            "{} (default: this process may use CPUs {})",
            spec.pinning.name(),
            format_cpu_list(&spec.cpus)
        )
    } else {
        spec.pinning.name()
    };
    let n =
        |count: usize, what: &str| format!("{count} {what}{}", if count == 1 { "" } else { "s" });
    println!(
        "sweep: {} ({} × {} × {} × {}), pin {pin}, CI target ±{} %, {}–{} s per point, results in {}",
        n(spec.total(), "point"),
        n(spec.mechanisms.len(), "mechanism"),
        n(spec.patterns.len(), "pattern"),
        n(spec.sizes.len(), "size"),
        n(spec.threads.len(), "thread count"),
        spec.ci_target * 100.0,
        spec.min_time.as_secs_f64(),
        spec.max_time.as_secs_f64(),
        results.dir.display()
    );
    if prior.resumed {
        println!(
            "resuming: {} points already measured, {todo} to measure ({} failed or interrupted measured again)",
            prior.done.len(),
            prior.remeasured
        );
    }
    if prior.truncated_line {
        eprintln!("bytepath: the last line of results.jsonl was cut short (a crash while writing it); that point is measured again");
    }
}

/// Whether every record in the folder passed (completed or skipped, no verify mismatch).
fn record_statuses(results: &ResultsFolder) -> Result<Vec<bool>, Error> {
    let path = results.dir.join(folder::RESULTS_JSONL);
    let text = std::fs::read_to_string(&path).map_err(|source| Error::File { path, source })?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|r| {
            matches!(r["status"].as_str(), Some("completed" | "skipped"))
                && r["verify"]["mismatched_bytes"].as_u64().unwrap_or(0) == 0
        })
        .collect())
}

/// Renders the reports (a failure there keeps the results), prints where everything is, and
/// gives the sweep's status.
fn finish(results: &ResultsFolder, interrupted: bool, passed: &[bool]) -> Result<Status, Error> {
    let dir = &results.dir;
    println!("results: {}", dir.join(folder::RESULTS_CSV).display());
    match report::write_reports(dir, None) {
        Ok(html) => println!("report: {}", html.display()),
        Err(e) => eprintln!(
            "bytepath: the report was not written ({e}); the results are kept in {}; render it again with `bytepath report {}`",
            dir.display(),
            dir.display()
        ),
    }
    let failed = passed.iter().filter(|&&p| !p).count();
    if interrupted {
        println!("interrupted: `bytepath sweep --out {} --resume` (with the same flags) measures the remaining points", dir.display());
        return Ok(Status::Interrupted);
    }
    if failed > 0 {
        eprintln!(
            "bytepath: {failed} of {} points failed; see the errors column of results.csv",
            passed.len()
        );
        return Ok(Status::Failed);
    }
    Ok(Status::Success)
}
