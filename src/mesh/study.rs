//! The mesh as the study driver runs it (`study::Study`): its servers started (`--launch`)
//! and every host's hello checked before the first run, then the schedule's rounds of pairs
//! (`pairs`), every run appended to results.jsonl as it arrives (a visit line on the stream);
//! `--resume` measures only the runs the folder lacks. A host that cannot be reached fails
//! only its own pairs, and is named at the end.
use super::hosts::MeshHosts;
use super::launch::{self, Launched};
use super::pairs::{self, Health};
use super::schedule::{self, Run};
use super::spec::MeshSpec;
use super::{report, ORDER, SERVER_LOGS};
use crate::error::Error;
use crate::report::folder::{Prior, ResultsFolder, StreamAs};
use crate::study::folder::Records;
use crate::study::{
    Ending, Outcome, Plan, ReportOptions, Study, StudyDescriptor, StudyKind, Underway, Watching,
};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One mesh: its hosts, its schedule, and how far it got.
pub struct Mesh<'a> {
    spec: MeshSpec,
    hosts: &'a dyn MeshHosts,
    /// The schedule's rounds of pairs, one visit's (for the opening line).
    pair_rounds: Vec<Vec<schedule::Pair>>,
    /// Every run, in rounds, over all visits.
    plan: Vec<Vec<Run>>,
    health: Health,
    /// `--launch`: the servers started for this mesh, stopped when the runs end.
    launched: Option<Launched>,
    /// The runs `--resume` kept.
    done: HashSet<String>,
    /// Runs measured by this session.
    measured: usize,
}

impl<'a> Mesh<'a> {
    /// The mesh `spec` asks for, every run through `hosts`.
    pub fn new(spec: MeshSpec, hosts: &'a dyn MeshHosts) -> Mesh<'a> {
        let pair_rounds = schedule::rounds(spec.hosts.len(), spec.pairs);
        let plan = schedule::plan(&pair_rounds, &spec.points, spec.visits);
        Mesh {
            health: Health::new(spec.hosts.len()),
            spec,
            hosts,
            pair_rounds,
            plan,
            launched: None,
            done: HashSet::new(),
            measured: 0,
        }
    }

    fn total(&self) -> usize {
        self.plan.iter().map(Vec::len).sum()
    }
}

/// The mesh as the commands that read its folders know it.
static DESCRIPTOR: StudyDescriptor = StudyDescriptor {
    marker: "bytepath mesh results",
    name: "mesh",
    command: "mesh",
    render: Mesh::render,
    csv_columns: super::columns,
    samples: super::openmetrics::samples,
};

/// The mesh study (`studies::STUDIES` lists it).
pub const KIND: StudyKind = StudyKind::new(&DESCRIPTOR);

impl Study for Mesh<'_> {
    type Folder = ResultsFolder;
    type Point = Value;

    fn kind(&self) -> StudyKind {
        KIND
    }

    fn plan(&self) -> Plan {
        Plan {
            spec: serde_json::to_value(&self.spec).expect("a mesh spec is plain data"),
            points: self.total(),
            order: ORDER,
        }
    }

    /// A mesh's records are its visits, one (pair, point, visit) each.
    fn layout(&self) -> Records {
        Records {
            columns: super::columns(),
            stream_as: StreamAs::Visits,
        }
    }

    /// The hosts' servers measure their own canaries (`canary`); this host settles nothing.
    fn watching(&self) -> Watching<'_> {
        Watching::default()
    }

    fn begin(&mut self, run: &mut Underway<'_, ResultsFolder>, prior: Prior) -> Result<(), Error> {
        self.launch(run.dir())?;
        check_hosts(self.hosts, &self.spec, &self.health);
        let total = self.total();
        let todo = total - prior.done.len().min(total);
        let spec = &self.spec;
        println!(
            "mesh: {} hosts, {} ordered pairs in {} rounds, {} points, {} visits: {total} runs ({todo} to measure), {} pair(s) at once, results in {}",
            spec.hosts.len(),
            self.pair_rounds.iter().map(Vec::len).sum::<usize>(),
            self.pair_rounds.len(),
            spec.points.len(),
            spec.visits,
            spec.concurrent,
            run.dir().display()
        );
        announce_resume(&prior);
        self.done = prior.done;
        Ok(())
    }

    /// The runs, then the launched servers stopped.
    fn measure(&mut self, run: &mut Underway<'_, ResultsFolder>) -> Result<Ending, Error> {
        let executed = pairs::execute(
            self.hosts,
            &self.spec,
            &self.plan,
            &self.done,
            &mut run.folder,
            &self.health,
            run.interrupt,
        )?;
        self.launched = None;
        self.measured = executed.measured;
        Ok(match executed.interrupted {
            true => Ending::Interrupted,
            false => Ending::Completed,
        })
    }

    /// The runs went to the stream as visit lines as they arrived: nothing more to publish.
    fn points(
        &mut self,
        _: &mut Underway<'_, ResultsFolder>,
        _: Ending,
    ) -> Result<Vec<Value>, Error> {
        Ok(Vec::new())
    }

    fn show(&self, _: &Underway<'_, ResultsFolder>, _: &[Value]) {
        for (h, why) in self.health.down() {
            eprintln!("bytepath: host {} was down: {why}", self.spec.hosts[h]);
        }
    }

    fn render(dir: &Path, options: &ReportOptions) -> Result<PathBuf, Error> {
        options.folder_only(KIND)?;
        options.recorded_margin_only(KIND)?;
        report::rerender(dir)
    }

    /// Every run in the folder, those `--resume` kept too; a point the source's kernel cannot
    /// run is skipped with its reason, as in a sweep.
    fn outcome(&self, run: &Underway<'_, ResultsFolder>, _: &[Value]) -> Result<Outcome, Error> {
        #[derive(serde::Deserialize)]
        struct Ended {
            status: Option<String>,
        }
        let runs = crate::record::read_results(run.dir())?;
        let failed = runs
            .iter()
            .filter(|r| {
                let status = Ended::deserialize(*r).ok().and_then(|e| e.status);
                !matches!(status.as_deref(), Some("completed" | "skipped"))
            })
            .count();
        Ok(match failed {
            0 => Outcome::Passed,
            _ => Outcome::Failed {
                said: Some(format!(
                    "{failed} of {} runs failed; `bytepath mesh --out {} --resume` measures them again",
                    runs.len(),
                    run.dir().display()
                )),
            },
        })
    }

    fn resume_hint(&self, dir: &Path) -> Option<String> {
        Some(format!(
            "interrupted after {} runs: `bytepath mesh --out {} --resume` (with the same flags) measures the rest",
            self.measured,
            dir.display()
        ))
    }
}

impl Mesh<'_> {
    /// `--launch`: starts every host's server for this mesh (a fresh token unless one was
    /// given), its output under the folder; a host whose server did not start is down.
    fn launch(&mut self, dir: &Path) -> Result<(), Error> {
        let Some(how) = self.spec.launch.clone() else {
            return Ok(());
        };
        let token = match &self.spec.token {
            Some(t) => t.clone(),
            None => self.hosts.fresh_token()?,
        };
        self.spec.token = Some(token.clone());
        let logs = dir.join(SERVER_LOGS);
        let (launched, failures) = launch::start(&how, &self.spec.hosts, &token, &logs);
        for (host, why) in failures {
            self.health.mark_down(host, why);
        }
        self.launched = Some(launched);
        Ok(())
    }
}

/// What `--resume` found in the folder: the runs kept, and a last line cut short.
fn announce_resume(prior: &Prior) {
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
            .map(|h| (h, scope.spawn(move || pairs::check_host(hosts, spec, h))))
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
