//! The servers study as the study driver runs it (`study::Study`): `--visits` rounds; each
//! round visits the client counts in a seeded shuffled order and, at each, every model back to
//! back (`stats::schedule`). Every visit forks its server here (on the link) or on the remote
//! host, drives it with the load generator, and is appended to results.jsonl as it ends (a
//! point line on the stream); a disturbed visit is made once more at the round's end, and the
//! report folds the redo in place of the disturbed one.
use super::host::{OpenHost, ServersHost};
use super::model::ServerModel;
use super::point::point;
use super::record::{csv_columns, PointStatus, ServersRecord, ServersVisit};
use super::ServersSpec;
use crate::environment::Environment;
use crate::error::Error;
use crate::record::SweepPoint;
use crate::report::folder::{Prior, ResultsFolder, Saved, StreamAs};
use crate::stats::schedule::{PlannedVisit, Schedule};
use crate::study::folder::Records;
use crate::study::rounds::{self, Made, Visits};
use crate::study::{
    Ending, Outcome, Plan, ReportOptions, Study, StudyDescriptor, StudyKind, Underway, Watching,
};
use crate::transport::Link;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A point: its model, its clients and whether each request has a connection of its own.
type Point = (ServerModel, usize, bool);

/// A point's key: model/clients, and its connection mode when the study measures both.
fn point_key(spec: &ServersSpec, (model, clients, per_request): Point) -> String {
    let key = format!("{}/{clients}", model.name());
    if spec.connections.len() > 1 {
        format!("{key}/{}", super::connection_name(per_request))
    } else {
        key
    }
}

/// What is set up once for every visit: the open-file limit, the link, the remote host.
struct SetUp {
    limit: Option<u64>,
    env: Environment,
    /// Dropped (namespaces deleted) with the study.
    link: Link,
    remote: Option<Box<dyn ServersHost>>,
}

/// One servers study: what it measures, where its servers run, and every visit made.
pub struct Servers<'a> {
    spec: &'a ServersSpec,
    points: Vec<Point>,
    /// The CPUs this process may use: the machine is watched on them.
    cpus: &'a [usize],
    open_host: OpenHost<'a>,
    set_up: Option<SetUp>,
    /// Every visit's record, in the order made (what `--json` prints).
    records: Vec<Value>,
    failed: bool,
}

impl<'a> Servers<'a> {
    /// The study `spec` asks for; with `spec.remote` its servers run on the host `open_host`
    /// opens, else forked here on `spec.network`'s link.
    pub fn new(spec: &'a ServersSpec, cpus: &'a [usize], open_host: OpenHost<'a>) -> Servers<'a> {
        Servers {
            points: spec.points(),
            spec,
            cpus,
            open_host,
            set_up: None,
            records: Vec::new(),
            failed: false,
        }
    }
}

/// The servers study as the commands that read its folders know it.
static DESCRIPTOR: StudyDescriptor = StudyDescriptor {
    marker: "bytepath servers results",
    name: "servers study",
    command: "servers",
    render: Servers::render,
    csv_columns: super::record::csv_columns,
    samples: super::openmetrics::samples,
};

/// The servers study (`studies::STUDIES` lists it).
pub const KIND: StudyKind = StudyKind::new(&DESCRIPTOR);

impl Study for Servers<'_> {
    type Folder = ResultsFolder;
    type Point = Value;

    fn kind(&self) -> StudyKind {
        KIND
    }

    fn plan(&self) -> Plan {
        Plan {
            spec: serde_json::to_value(self.spec).expect("a servers spec is plain data"),
            points: self.points.len(),
            order: super::ORDER,
        }
    }

    /// Each record is a visit, and a point line on the stream.
    fn layout(&self) -> Records {
        Records {
            columns: csv_columns(),
            stream_as: StreamAs::Points,
        }
    }

    fn watching(&self) -> Watching<'_> {
        Watching {
            probe: false,
            settle: Some((&self.spec.watch, self.cpus.to_vec())),
            cpus: self.cpus.to_vec(),
        }
    }

    /// Raises the open-file limit, opens the link and the remote host once for every point,
    /// and says what the study will do (unless stdout carries JSON).
    fn begin(&mut self, run: &mut Underway<'_, ResultsFolder>, _: Prior) -> Result<(), Error> {
        let limit = crate::sys::raise_open_file_limit().ok();
        let env = Environment::detect(self.cpus);
        let link = Link::open(&self.spec.network)?;
        let remote = self.spec.remote.as_ref().map(self.open_host).transpose()?;
        if !run.output.json {
            self.announce(limit, run.dir());
        }
        self.set_up = Some(SetUp {
            limit,
            env,
            link,
            remote,
        });
        Ok(())
    }

    fn measure(&mut self, run: &mut Underway<'_, ResultsFolder>) -> Result<Ending, Error> {
        let groups = rounds::groups(&self.points, |&(_, clients, _)| clients);
        let schedule = Schedule::new(groups, self.spec.seed);
        rounds::every_group(run, schedule, self.spec.visits, self)
    }

    /// The visits went to the stream as point lines as they ended: nothing more to publish.
    fn points(
        &mut self,
        _: &mut Underway<'_, ResultsFolder>,
        _: Ending,
    ) -> Result<Vec<Value>, Error> {
        Ok(Vec::new())
    }

    fn show(&self, run: &Underway<'_, ResultsFolder>, _: &[Value]) {
        if run.output.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&self.records).expect("JSON")
            );
        }
    }

    /// From the folder rather than from the records in memory, so that `bytepath report DIR`
    /// gives the same page byte for byte (serde_json reads some floats back one ulp off what
    /// it wrote).
    fn render(dir: &Path, options: &ReportOptions) -> Result<PathBuf, Error> {
        options.folder_only(KIND)?;
        options.recorded_margin_only(KIND)?;
        super::report::rerender(dir)
    }

    fn outcome(&self, _: &Underway<'_, ResultsFolder>, _: &[Value]) -> Result<Outcome, Error> {
        Ok(match self.failed {
            true => Outcome::Failed { said: None },
            false => Outcome::Passed,
        })
    }
}

impl Visits<ResultsFolder> for Servers<'_> {
    /// Makes one visit of the planned point, saves it, prints its line (unless stdout carries
    /// JSON) and keeps it; a disturbed one that completed is made once more, and both stay.
    fn make(
        &mut self,
        run: &mut Underway<'_, ResultsFolder>,
        planned: &PlannedVisit,
        _again: bool,
    ) -> Result<Made, Error> {
        let record = self.visit(run, planned.point, planned.round);
        let disturbed = record.status == PointStatus::Completed
            && record
                .visit
                .as_ref()
                .and_then(|v| v.interference.as_ref())
                .is_some_and(|i| i.disturbed);
        let value = record.to_value();
        if !run.output.json {
            println!("round {} {}", planned.round + 1, super::line::line(&value));
        }
        run.folder.append(&Saved::from_value(value.clone()))?;
        self.records.push(value);
        Ok(match record.status {
            PointStatus::Interrupted => Made::Interrupted,
            PointStatus::Failed => {
                self.failed = true;
                Made::Quiet
            }
            _ if disturbed => Made::Disturbed,
            _ => Made::Quiet,
        })
    }
}

impl Servers<'_> {
    /// The study's first line: its matrix, visits, order seed, load and where the results go.
    fn announce(&self, limit: Option<u64>, dir: &Path) {
        let spec = self.spec;
        println!(
            "servers: {} points × {} visits of {:.2} s (order seed {}), {} B requests, {} loop, RLIMIT_NOFILE {}, results in {}",
            self.points.len(),
            spec.visits,
            spec.visit_duration().as_secs_f64(),
            spec.seed,
            spec.size,
            if spec.rate.is_some() { "open" } else { "closed" },
            limit.map_or("unknown".into(), |l| l.to_string()),
            dir.display()
        );
    }

    /// Measures one visit of point `index`, with the machine watched around it, into its
    /// record (the `position`-th visit the study made).
    fn visit(
        &self,
        run: &Underway<'_, ResultsFolder>,
        index: usize,
        round: usize,
    ) -> ServersRecord {
        let spec = self.spec;
        let set_up = self.set_up.as_ref().expect("the study has begun");
        // `--profile` samples each point once: in a window after its last round's visit.
        let unprofiled = ServersSpec {
            profile: false,
            ..spec.clone()
        };
        let last = round + 1 == spec.visits;
        let watch = run.machine.watch(self.cpus);
        let mut record = point(
            if last { spec } else { &unprofiled },
            &set_up.link,
            set_up.remote.as_deref(),
            self.points[index],
            set_up.limit,
            run.interrupt,
        );
        let (_, interference) = watch.end(spec.watch.quiet_threshold);
        record.environment = Some(set_up.env.clone());
        record.sweep_point = Some(SweepPoint {
            index,
            total: self.points.len(),
            key: point_key(spec, self.points[index]),
        });
        record.visit = Some(ServersVisit {
            round,
            position: self.records.len(),
            seed: spec.seed,
            interference: Some(interference),
        });
        record
    }
}
