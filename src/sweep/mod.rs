//! `bytepath sweep`: a matrix of points, each measured in several short visits spread over the
//! whole sweep. Rounds visit every point once in a seeded shuffled order (`stats::schedule`); a
//! point's figure and interval come from its visit means, so the regimes a shared machine
//! moves between, which last seconds, fall inside its interval instead of between points.
//! After the minimum rounds (the pilot) and one round of counter visits, further rounds go to
//! the groups whose crossover verdicts the pilot left undecided, which share the rounds the
//! budget leaves equally (`adaptive`, recorded in rounds.json). Every visit is saved as it finishes and every point's record after every round; a visit that fails is
//! recorded and the sweep goes on; Ctrl-C ends the sweep after the current visit.
pub mod adaptive;
mod announce;
pub(crate) mod answers;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod rounds;
pub(crate) mod spec;
mod study;
use study::{groups, Ending, Sweep};
pub(crate) mod visit_log;
mod watch;

use crate::config::watch::run_cpus;
use crate::engine::PointRunner;
use crate::environment::Environment;
use crate::error::{Error, Status};
use crate::record::{self, RunRecord};
use crate::report::folder::{self, StudyOutput, PROBE_JSON};
use crate::report::visit_folder::{self, VisitFolder};
use crate::sys;
use progress::Progress;
use spec::SweepSpec;
use std::sync::atomic::AtomicBool;
use std::time::Instant;
use visit_log::VisitLog;

/// How the visits are ordered, as the marker records it.
const ORDER: &str = "rounds of visits: in each round the groups of (pattern, threads, size) in \
     a seeded shuffled order, each group's mechanisms back to back in an order drawn from the \
     seed and reversed on every other visit of the group; after the minimum rounds (the pilot) \
     one round of counter visits, then rounds of the groups the pilot left undecided, each up \
     to its equal share of the rounds the budget leaves (see rounds.json), furthest short \
     first, until the budget is spent";

/// Measures the sweep `spec` asks for, every point through `sides`, into the folder `output`
/// names (a new one, or with `resume` the one to continue).
pub fn run(
    spec: &SweepSpec,
    output: &StudyOutput,
    sides: &dyn PointRunner,
    interrupt: &AtomicBool,
) -> Result<Status, Error> {
    let points = spec.points();
    let marker = folder::marker(
        folder::SWEEP_KIND,
        serde_json::to_value(spec).expect("a sweep spec is plain data"),
        output.arguments.clone(),
        points.len(),
        ORDER,
    );
    let (mut results, prior) = visit_folder::open(output.out.as_deref(), output.resume, &marker)?;
    output.stream.start_study("sweep", &marker, &results.dir);
    results.stream = output.stream.clone();
    // Best effort: counters that cannot open say so with EMFILE as their reason.
    let _ = sys::raise_open_file_limit();
    announce::print_plan(spec, &results, &prior);
    record_probe(&results.dir, &spec.cpus)?;
    let max_threads = spec.threads.iter().copied().max().unwrap_or(1);
    let watched = run_cpus(&spec.pinning, max_threads, &spec.cpus);
    crate::probe::watch::settle_before_first_round(&spec.watch, &watched, interrupt, false);
    let results_dir = results.dir.clone();
    if let Some(place) = sides.announce() {
        println!("sweep: sides {place}");
    }
    let mut sweep = Sweep {
        progress: Progress::new(planned_visits(spec), points.len()),
        spec,
        points: &points,
        sides,
        env: Environment::detect(&spec.cpus),
        interrupt,
        folder: results,
        log: VisitLog::new(prior.visits),
        position: 0,
        memcpy: probe_memcpy(&results_dir),
        plan: None,
    };
    let started = Instant::now();
    let ending = sweep.run()?;
    sweep.progress.done();
    let made = rounds::made(&points, &groups(&points), &sweep.log);
    sweep.record_rounds(&made, ending.name())?;
    let wall_s = started.elapsed().as_secs_f64();
    println!(
        "{}",
        crate::probe::watch::summary_line(&results_dir, visit_folder::VISITS_JSONL, wall_s)
    );
    let records = sweep.point_records(ending);
    sweep.folder.write_points(&records)?;
    publish_points(&records, points.len(), output);
    finish(&sweep.folder, ending, &records)
}

/// Every point's record on the stream and its line on stdout, once the rounds have ended.
fn publish_points(records: &[RunRecord], points: usize, output: &StudyOutput) {
    for (index, r) in records.iter().enumerate() {
        let at = r.sweep_point.as_ref().map_or(index, |p| p.index);
        let value = serde_json::to_value(r).expect("a record serializes");
        output.stream.point(&value);
        println!("{}", progress::point_line(at, points, &value));
    }
}

/// Visits the minimum rounds and the counter round hold: the bar's first length.
fn planned_visits(spec: &SweepSpec) -> usize {
    spec.total()
        * (spec.min_visits + usize::from(spec.counter_visits()) + usize::from(spec.profile))
}

/// The memcpy cost per byte from the probe this folder recorded.
fn probe_memcpy(dir: &std::path::Path) -> Result<(f64, String), String> {
    let text = std::fs::read_to_string(dir.join(PROBE_JSON))
        .map_err(|e| format!("no memcpy cost: {PROBE_JSON} could not be read ({e})"))?;
    let probe: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("no memcpy cost: {PROBE_JSON}: {e}"))?;
    record::profile::memcpy_from_probe(&probe)
}

/// Measures the machine's own limits once per results folder, before the first point, so the
/// report can set every figure against them.
fn record_probe(dir: &std::path::Path, cpus: &[usize]) -> Result<(), Error> {
    let path = dir.join(PROBE_JSON);
    if crate::probe::write_probe(&path, cpus)? {
        println!("probe: machine limits measured into {}", path.display());
    }
    Ok(())
}

/// Renders the reports (a failure there keeps the results), prints where everything is, and
/// gives the sweep's status.
fn finish(results: &VisitFolder, ending: Ending, records: &[RunRecord]) -> Result<Status, Error> {
    let dir = &results.dir;
    println!("results: {}", dir.join(folder::RESULTS_CSV).display());
    match report::write(dir, None, None) {
        Ok(html) => println!("report: {}", html.display()),
        Err(e) => eprintln!(
            "bytepath: the report was not written ({e}); the results are kept in {}; render it again with `bytepath report {}`",
            dir.display(),
            dir.display()
        ),
    }
    if ending == Ending::Interrupted {
        println!("interrupted: `bytepath sweep --out {} --resume` (with the same flags) makes the remaining visits", dir.display());
        return Ok(Status::Interrupted);
    }
    let failed = records
        .iter()
        .filter(|r| {
            !matches!(r.status.as_str(), "completed" | "skipped") || r.verify.mismatched_bytes > 0
        })
        .count();
    if failed > 0 {
        eprintln!(
            "bytepath: {failed} of {} points failed; see the errors column of results.csv",
            records.len()
        );
        return Ok(Status::Failed);
    }
    Ok(Status::Success)
}
