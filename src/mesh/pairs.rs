//! The mesh's runs, in the schedule's order: round after round; within a round up to `--concurrent` pairs at once
//! (never sharing a host), each pair's points back to back. Every run asks the source host's
//! server for the record (`MeshHosts::run_pair`) and is saved before the next one starts
//! (the results folder appends and syncs each). A run that fails is diagnosed: each of its two
//! hosts is asked for its hello, and one that does not answer is down for the rest of the mesh,
//! its remaining pairs recorded as failed with the reason without being tried; the others go on.
use super::hosts::{MeshHosts, PairRun};
use super::progress::Executed;
use super::schedule::Run;
use super::spec::MeshSpec;
use crate::config::Pattern;
use crate::engine::RunOutcome;
use crate::error::Error;
use crate::record::SweepPoint;
use crate::report::folder::{ResultsFolder, Saved};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Which hosts are down, and why (the first failure seen).
pub struct Health {
    down: Mutex<Vec<Option<String>>>,
}

impl Health {
    pub fn new(hosts: usize) -> Health {
        Health {
            down: Mutex::new(vec![None; hosts]),
        }
    }

    pub fn mark_down(&self, host: usize, why: String) {
        let mut down = self.down.lock().expect("health lock");
        down[host].get_or_insert(why);
    }

    pub fn why_down(&self, host: usize) -> Option<String> {
        self.down.lock().expect("health lock")[host].clone()
    }

    /// (host, reason) of every host down.
    pub fn down(&self) -> Vec<(usize, String)> {
        let down = self.down.lock().expect("health lock");
        down.iter()
            .enumerate()
            .filter_map(|(h, why)| Some((h, why.clone()?)))
            .collect()
    }
}

/// Asks a host's server for its hello and whether it runs peer tests; `Err` names why not.
pub fn check_host(hosts: &dyn MeshHosts, spec: &MeshSpec, host: usize) -> Result<String, String> {
    hosts.check(&spec.hosts[host], spec.token.as_deref())
}

/// Where the schedule stands, for the progress lines.
pub struct Position {
    /// (index in the whole plan, plan length): the record's `sweep_point`.
    pub index: usize,
    pub total: usize,
    /// Pairs of this run's round measured at the same time as it (its own excluded).
    pub alongside: Vec<String>,
}

/// Measures every run of `plan` not in `done`, appending each record as it arrives.
pub fn execute(
    hosts: &dyn MeshHosts,
    spec: &MeshSpec,
    plan: &[Vec<Run>],
    done: &HashSet<String>,
    results: &mut ResultsFolder,
    health: &Health,
    interrupt: &AtomicBool,
) -> Result<Executed, Error> {
    let names: Vec<String> = spec.hosts.iter().map(|h| h.to_string()).collect();
    let total: usize = plan.iter().map(Vec::len).sum();
    let todo = plan
        .iter()
        .flatten()
        .filter(|r| !done.contains(&key(&names, r)))
        .count();
    let mut progress = super::progress::Progress::new(todo, plan.len() / spec.visits.max(1));
    let mut index = 0;
    for (number, round) in plan.iter().enumerate() {
        // A canary on each host's server that is up, before the round's first run.
        let up: Vec<usize> = (0..names.len())
            .filter(|&h| health.why_down(h).is_none())
            .collect();
        super::canary::record_round(hosts, spec, &up, &results.dir, number)?;
        let mut pairs: Vec<(Vec<(usize, Run)>, String)> = Vec::new();
        for run in round {
            let name = pair_name(&names, run);
            if !done.contains(&key(&names, run)) {
                match pairs.iter_mut().find(|(_, n)| *n == name) {
                    Some((runs, _)) => runs.push((index, *run)),
                    None => pairs.push((vec![(index, *run)], name)),
                }
            }
            index += 1;
        }
        for chunk in pairs.chunks(spec.concurrent) {
            if interrupt.load(Ordering::SeqCst) {
                return Ok(progress.executed(true));
            }
            let together: Vec<String> = chunk.iter().map(|(_, n)| n.clone()).collect();
            let (tx, rx) = mpsc::channel();
            std::thread::scope(|scope| {
                for (runs, name) in chunk {
                    let tx = tx.clone();
                    let alongside: Vec<String> =
                        together.iter().filter(|n| *n != name).cloned().collect();
                    let context = (hosts, spec, names.as_slice(), health, interrupt);
                    scope.spawn(move || measure_pair(context, runs, &alongside, total, &tx));
                }
                drop(tx);
                for (run, saved) in rx {
                    results.append(&saved)?;
                    progress.finished(&run, &saved.value);
                }
                Ok::<(), Error>(())
            })?;
        }
    }
    Ok(progress.executed(interrupt.load(Ordering::SeqCst)))
}

type Context<'a> = (
    &'a dyn MeshHosts,
    &'a MeshSpec,
    &'a [String],
    &'a Health,
    &'a AtomicBool,
);

/// One pair's runs of a round, in order; each record goes to `tx` as soon as it is made.
fn measure_pair(
    (hosts, spec, names, health, interrupt): Context,
    runs: &[(usize, Run)],
    alongside: &[String],
    total: usize,
    tx: &mpsc::Sender<(Run, Saved)>,
) {
    for &(index, run) in runs {
        if interrupt.load(Ordering::SeqCst) {
            return;
        }
        let started = unix_ms();
        let clock = Instant::now();
        let down = [run.pair.src, run.pair.dst].into_iter().find_map(|h| {
            Some(format!(
                "host {} is down: {}",
                names[h],
                health.why_down(h)?
            ))
        });
        let record = match down {
            Some(why) => failed_record(spec, names, &run, why),
            None => {
                let record = attempt(hosts, spec, names, &run, interrupt);
                if failed(&record) {
                    diagnose(hosts, spec, health, &run);
                }
                record
            }
        };
        let position = Position {
            index,
            total,
            alongside: alongside.to_vec(),
        };
        let mesh = MeshBlock {
            visit: run.visit + 1,
            visits: spec.visits,
            round: run.round + 1,
            concurrent: spec.concurrent,
            alongside: position.alongside.clone(),
            started_unix_ms: started,
            ended_unix_ms: unix_ms(),
            wall_s: clock.elapsed().as_secs_f64(),
        };
        let saved = annotate(record, names, &run, &position, mesh);
        if tx.send((run, saved)).is_err() {
            return;
        }
    }
}

/// Asks the source's server to run the point against the destination's.
fn attempt(
    hosts: &dyn MeshHosts,
    spec: &MeshSpec,
    names: &[String],
    run: &Run,
    interrupt: &AtomicBool,
) -> Value {
    let (src, dst) = (run.pair.src, run.pair.dst);
    let run_spec = spec.run_spec(&run.point);
    // stream: the source sends and the destination measures what arrives (reverse, as
    // `run --remote --reverse`); rr: the source asks and times the round trips.
    let reverse = run.point.pattern == Pattern::Stream;
    let pair = PairRun {
        src: &spec.hosts[src],
        dst: &spec.hosts[dst],
        names: (names[src].as_str(), names[dst].as_str()),
        spec: &run_spec,
        reverse,
        token: spec.token.as_deref(),
    };
    match hosts.run_pair(&pair, interrupt) {
        Ok(record) => record,
        Err(e) => failed_record(spec, names, run, e.to_string()),
    }
}

/// After a failed run: a host whose server does not answer its hello is down from now on.
fn diagnose(hosts: &dyn MeshHosts, spec: &MeshSpec, health: &Health, run: &Run) {
    for host in [run.pair.src, run.pair.dst] {
        if let Err(why) = check_host(hosts, spec, host) {
            health.mark_down(host, why);
        }
    }
}

/// Whether a host's record says its run failed.
pub(super) fn failed(record: &Value) -> bool {
    #[derive(Deserialize)]
    struct Ended {
        status: Option<String>,
    }
    Ended::deserialize(record).is_ok_and(|e| e.status.as_deref() == Some("failed"))
}

/// The record of a run that did not happen: the point's configuration, `failed`, and why.
/// The environment is left out: no host ran anything.
fn failed_record(spec: &MeshSpec, names: &[String], run: &Run, why: String) -> Value {
    /// The record with no environment (`null`), and why.
    #[derive(Serialize)]
    struct NeverRan {
        #[serde(flatten)]
        record: crate::record::RunRecord,
        environment: (),
        environment_unavailable_reason: &'static str,
    }
    let run_spec = spec.run_spec(&run.point);
    let outcome = RunOutcome::not_run(&run_spec, why);
    let env = crate::environment::Environment::detect(&[]);
    let mut record = crate::record::build(&run_spec, &outcome, env);
    record.command = "mesh".into();
    record.src = Some(names[run.pair.src].clone());
    record.dst = Some(names[run.pair.dst].clone());
    // Into a JSON object, where the fields below replace the record's own under their keys.
    serde_json::to_value(NeverRan {
        record,
        environment: (),
        environment_unavailable_reason: "the run never reached the source host's server",
    })
    .expect("the record serializes")
}

/// A run's `mesh` block: where it sits in the schedule and when it ran.
#[derive(Serialize)]
struct MeshBlock {
    visit: usize,
    visits: usize,
    round: usize,
    concurrent: usize,
    /// The pairs of its round measured at the same time as it.
    alongside: Vec<String>,
    started_unix_ms: u64,
    ended_unix_ms: u64,
    wall_s: f64,
}

/// The record as saved: where it sits in the mesh (`sweep_point`, the `mesh` block) and its
/// pair's names, whatever the source host wrote under those keys.
fn annotate(
    record: Value,
    names: &[String],
    run: &Run,
    position: &Position,
    mesh: MeshBlock,
) -> Saved {
    #[derive(Serialize)]
    struct Annotated<'a> {
        #[serde(flatten)]
        record: Value,
        src: &'a str,
        dst: &'a str,
        sweep_point: SweepPoint,
        mesh: MeshBlock,
    }
    // Into a JSON object, where the fields below replace the host's under their keys.
    let annotated = Annotated {
        record: super::percentiles::read_chosen(record),
        src: &names[run.pair.src],
        dst: &names[run.pair.dst],
        sweep_point: SweepPoint {
            index: position.index,
            total: position.total,
            key: key(names, run),
        },
        mesh,
    };
    Saved::from_value(serde_json::to_value(annotated).expect("a record serializes"))
}

/// `src>dst`, as keys and progress lines name a pair.
pub fn pair_name(names: &[String], run: &Run) -> String {
    format!("{}>{}", names[run.pair.src], names[run.pair.dst])
}

/// Identifies a run across `--resume`: visit, pair and point.
pub fn key(names: &[String], run: &Run) -> String {
    format!(
        "v{}/{}/{}",
        run.visit + 1,
        pair_name(names, run),
        run.point.key()
    )
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
