//! `bytepath mesh`: every pair of many hosts that run `bytepath server`, measured host to host
//! (the driver asks the source's server to run each point against the destination's and gets
//! the record back), in rounds of disjoint pairs (`schedule`) repeated once per visit, so each
//! cell's interval covers the regimes of a shared machine. Results go to one folder as they
//! come (`--resume` continues it); the report is an N×N heatmap per point with CIs and the
//! pairs significantly slower than their hosts' other pairs (`answers`, `report`). A host
//! that cannot be reached fails only its own pairs; Ctrl-C keeps every finished run.
pub(crate) mod answers;
pub(crate) mod canary;
pub(crate) mod hosts;
pub(crate) mod launch;
pub(crate) mod progress;
pub(crate) mod report;

pub(crate) mod schedule;
pub(crate) mod spec;
pub(crate) mod study;

use crate::error::{Error, Status};
use crate::report::csv::{self, Cell::Scalar};
use crate::report::folder::{self, ResultsFolder, StudyOutput};
use hosts::MeshHosts;
use spec::MeshSpec;
use std::sync::atomic::AtomicBool;
use study::Health;

/// What a mesh folder's marker says it is.
pub const MESH_KIND: &str = crate::report::study_kind::StudyKind::Mesh.marker();
/// Where `--launch ssh` puts each server's output, inside the results folder.
pub const SERVER_LOGS: &str = "servers";

const ORDER: &str = "round-robin tournament by the circle method (rounds of disjoint pairs, \
                     one way then the other), repeated once per visit; within a round each \
                     pair's points back to back";

/// The mesh's own CSV columns, before every run column.
const MESH_COLUMNS: &[(&str, &str, csv::Cell)] = &[
    ("src", "/src", Scalar),
    ("dst", "/dst", Scalar),
    ("visit", "/mesh/visit", Scalar),
    ("round", "/mesh/round", Scalar),
    ("concurrent", "/mesh/concurrent", Scalar),
    ("started_unix_ms", "/mesh/started_unix_ms", Scalar),
    ("ended_unix_ms", "/mesh/ended_unix_ms", Scalar),
];

pub fn columns() -> Vec<csv::Column> {
    let mut columns = csv::fixed(MESH_COLUMNS);
    columns.extend(csv::columns());
    columns
}

/// Measures the mesh `spec` asks for, every run through `hosts`, into the folder `output`
/// names (a new one, or with `resume` the one to continue).
pub fn run(
    mut spec: MeshSpec,
    output: &StudyOutput,
    hosts: &dyn MeshHosts,
    interrupt: &AtomicBool,
) -> Result<Status, Error> {
    let rounds = schedule::rounds(spec.hosts.len(), spec.pairs);
    let plan = schedule::plan(&rounds, &spec.points, spec.visits);
    let total = plan.iter().map(Vec::len).sum();
    let arguments = output.arguments.clone();
    let marker = folder::marker(MESH_KIND, serde_json::json!(spec), arguments, total, ORDER);
    let (mut results, prior) =
        folder::open_with(output.out.as_deref(), output.resume, &marker, columns())?;
    // A mesh's records are its visits, one (pair, point, visit) each.
    results.stream_to(output, "mesh", &marker, folder::StreamAs::Visits);
    let health = Health::new(spec.hosts.len());
    // Stops the servers when the mesh returns, however it returns.
    let _launched = match spec.launch.clone() {
        Some(launch) => {
            // A fresh token for servers started for this mesh only, unless one was given.
            let token = match &spec.token {
                Some(t) => t.clone(),
                None => hosts.fresh_token()?,
            };
            spec.token = Some(token.clone());
            let logs = results.dir.join(SERVER_LOGS);
            let (launched, failures) = launch::start(&launch, &spec.hosts, &token, &logs);
            for (host, why) in failures {
                health.mark_down(host, why);
            }
            Some(launched)
        }
        None => None,
    };
    check_hosts(hosts, &spec, &health);
    let todo = total - prior.done.len().min(total);
    println!(
        "mesh: {} hosts, {} ordered pairs in {} rounds, {} points, {} visits: {total} runs ({todo} to measure), {} pair(s) at once, results in {}",
        spec.hosts.len(),
        rounds.iter().map(Vec::len).sum::<usize>(),
        rounds.len(),
        spec.points.len(),
        spec.visits,
        spec.concurrent,
        results.dir.display()
    );
    announce_resume(&prior);
    let done = &prior.done;
    let executed = study::execute(hosts, &spec, &plan, done, &mut results, &health, interrupt)?;
    drop(_launched);
    finish(&results, &health, &spec, executed)
}

/// What `--resume` found in the folder: the runs kept, and a last line cut short.
fn announce_resume(prior: &folder::Prior) {
    if prior.resumed {
        println!(
            "resuming: {} runs already measured ({} failed or interrupted measured again)",
            prior.done.len(),
            prior.remeasured
        );
    }
    if prior.truncated_line {
        eprintln!("bytepath: the last line of results.jsonl was cut short (a crash while writing it); that run is made again");
    }
}

/// Every host's hello, before the first run: one that does not answer (or does not run peer
/// tests) is named with the reason now, and its pairs are recorded failed without a try.
fn check_hosts(hosts: &dyn MeshHosts, spec: &MeshSpec, health: &Health) {
    std::thread::scope(|scope| {
        let checks: Vec<_> = (0..spec.hosts.len())
            .filter(|&h| health.why_down(h).is_none())
            .map(|h| (h, scope.spawn(move || study::check_host(hosts, spec, h))))
            .collect();
        for (h, check) in checks {
            match check
                .join()
                .unwrap_or_else(|_| Err("the check panicked".into()))
            {
                Ok(system) => println!("host {}: ready ({system})", spec.hosts[h]),
                Err(why) => health.mark_down(h, why),
            }
        }
    });
    for (h, why) in health.down() {
        eprintln!(
            "bytepath: host {} is down, its pairs are marked failed: {why}",
            spec.hosts[h]
        );
    }
}

/// Renders the report (a failure there keeps the results), names the hosts that were down,
/// and gives the mesh's status.
fn finish(
    results: &ResultsFolder,
    health: &Health,
    spec: &MeshSpec,
    executed: progress::Executed,
) -> Result<Status, Error> {
    let dir = &results.dir;
    println!("results: {}", dir.join(folder::RESULTS_CSV).display());
    match report::rerender(dir) {
        Ok(html) => println!("report: {}", html.display()),
        Err(e) => eprintln!(
            "bytepath: the report was not written ({e}); the results are kept in {}; render it again with `bytepath report {}`",
            dir.display(),
            dir.display()
        ),
    }
    for (h, why) in health.down() {
        eprintln!("bytepath: host {} was down: {why}", spec.hosts[h]);
    }
    if executed.interrupted {
        println!(
            "interrupted after {} runs: `bytepath mesh --out {} --resume` (with the same flags) measures the rest",
            executed.measured,
            dir.display()
        );
        return Ok(Status::Interrupted);
    }
    let records = crate::record::read_results(dir)?;
    // A point the source's kernel cannot run is skipped with its reason, as in a sweep.
    let failed = records
        .iter()
        .filter(|r| !matches!(r["status"].as_str(), Some("completed" | "skipped")))
        .count();
    if failed > 0 {
        eprintln!(
            "bytepath: {failed} of {} runs failed; `bytepath mesh --out {} --resume` measures them again",
            records.len(),
            dir.display()
        );
        return Ok(Status::Failed);
    }
    Ok(Status::Success)
}
