//! The servers study's loop: every (model, clients) point in turn, its server forked here (on
//! the link) or on the remote host, driven by the load generator, measured over the window,
//! and its record appended to the results folder as it ends.
use super::host::{OpenHost, ServersHost};
use super::model::ServerModel;
use super::point::point;
use super::record::{csv_columns, PointStatus, ServersRecord, ServersVisit, SERVERS_KIND};
use super::ServersSpec;
use crate::environment::Environment;
use crate::error::{Error, Status};
use crate::measure::interference::Sample;
use crate::record::SweepPoint;
use crate::report::folder::{self, Saved, StudyOutput};
use crate::stats::schedule::Schedule;
use crate::sys;
use crate::transport::Link;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
fn groups(points: &[(ServerModel, usize, bool)]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, &(_, clients, _)) in points.iter().enumerate() {
        match groups.iter_mut().find(|(c, _)| *c == clients) {
            Some((_, members)) => members.push(i),
            None => groups.push((clients, vec![i])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}

/// A point's key: model/clients, and its connection mode when the study measures both.
fn point_key(spec: &ServersSpec, model: ServerModel, clients: usize, per_request: bool) -> String {
    let key = format!("{}/{clients}", model.name());
    if spec.connections.len() > 1 {
        format!("{key}/{}", super::connection_name(per_request))
    } else {
        key
    }
}

/// The study's first line: its matrix, visits, order seed, load and where the results go.
fn announce(spec: &ServersSpec, points: usize, limit: Option<u64>, dir: &std::path::Path) {
    println!(
        "servers: {} points × {} visits of {:.2} s (order seed {}), {} B requests, {} loop, RLIMIT_NOFILE {}, results in {}",
        points,
        spec.visits,
        spec.visit_duration().as_secs_f64(),
        spec.seed,
        spec.size,
        if spec.rate.is_some() { "open" } else { "closed" },
        limit.map_or("unknown".into(), |l| l.to_string()),
        dir.display()
    );
}

/// What every visit of one servers study shares.
struct Study<'a> {
    spec: &'a ServersSpec,
    points: &'a [(ServerModel, usize, bool)],
    link: &'a Link,
    remote: Option<&'a dyn ServersHost>,
    limit: Option<u64>,
    env: &'a Environment,
    cpus: &'a [usize],
    json: bool,
    interrupt: &'a AtomicBool,
}

/// How a visit ended, for the round that made it.
enum Made {
    Quiet,
    /// Others used the machine beyond the quiet threshold: made once more at the round's end.
    Disturbed,
    Interrupted,
}

impl Study<'_> {
    /// Every round: a canary first, then its visits in the seeded order, then the disturbed
    /// ones made once more (both stay in results.jsonl; the report folds the redo in place of
    /// the disturbed visit). Returns every visit made and how the study ended.
    fn rounds(&self, results: &mut folder::ResultsFolder) -> Result<(Vec<Value>, Status), Error> {
        let (spec, mut status, mut records) = (self.spec, Status::Success, Vec::new());
        let mut schedule = Schedule::new(groups(self.points), spec.seed);
        let all: Vec<usize> = (0..schedule.group_count()).collect();
        'rounds: for round in 0..spec.visits {
            crate::probe::watch::record_canary(&results.dir, round, self.cpus)?;
            let mut disturbed = Vec::new();
            for planned in schedule.round(round, &all, true) {
                match self.make(planned.point, round, results, &mut records, &mut status)? {
                    Made::Interrupted => break 'rounds,
                    Made::Disturbed => disturbed.push(planned.point),
                    Made::Quiet => {}
                }
            }
            for index in disturbed {
                let made = self.make(index, round, results, &mut records, &mut status)?;
                if let Made::Interrupted = made {
                    break 'rounds;
                }
            }
        }
        Ok((records, status))
    }

    /// Measures one visit of point `index`, with the machine read before and after it, into
    /// its record (the `position`-th visit the study made).
    fn visit(&self, index: usize, round: usize, position: usize) -> ServersRecord {
        let spec = self.spec;
        let (model, clients, per_request) = self.points[index];
        // `--profile` samples each point once: in a window after its last round's visit.
        let unprofiled = ServersSpec {
            profile: false,
            ..spec.clone()
        };
        let last = round + 1 == spec.visits;
        let before = Sample::take(self.cpus);
        let mut record = point(
            if last { spec } else { &unprofiled },
            self.link,
            self.remote,
            (model, clients, per_request),
            self.limit,
            self.interrupt,
        );
        let interference = before.until(
            &Sample::take(self.cpus),
            self.cpus.len(),
            spec.watch.quiet_threshold,
        );
        record.environment = Some(self.env.clone());
        record.sweep_point = Some(SweepPoint {
            index,
            total: self.points.len(),
            key: point_key(spec, model, clients, per_request),
        });
        record.visit = Some(ServersVisit {
            round,
            position,
            seed: spec.seed,
            interference: Some(interference),
        });
        record
    }

    /// Makes one visit of point `index`, saves it,
    /// prints its line and keeps it in `records`.
    fn make(
        &self,
        index: usize,
        round: usize,
        results: &mut folder::ResultsFolder,
        records: &mut Vec<Value>,
        status: &mut Status,
    ) -> Result<Made, Error> {
        if self.interrupt.load(Ordering::SeqCst) {
            *status = Status::Interrupted;
            return Ok(Made::Interrupted);
        }
        let record = self.visit(index, round, records.len());
        let disturbed = record.status == PointStatus::Completed
            && record
                .visit
                .as_ref()
                .and_then(|v| v.interference.as_ref())
                .is_some_and(|i| i.disturbed);
        let value = record.to_value();
        if !self.json {
            println!("round {} {}", round + 1, super::line::line(&value));
        }
        results.append(&Saved::from_value(value.clone()))?;
        records.push(value);
        Ok(match record.status {
            PointStatus::Interrupted => {
                *status = Status::Interrupted;
                Made::Interrupted
            }
            PointStatus::Failed => {
                *status = Status::Failed;
                Made::Quiet
            }
            _ if disturbed => Made::Disturbed,
            _ => Made::Quiet,
        })
    }
}

/// Measures every point of `spec` into a new results folder, one record per visit, and
/// renders the report. The server runs here, forked on `spec.network`'s link, or with
/// `spec.remote` on the host `open_host` opens.
pub fn run(
    spec: &ServersSpec,
    output: &StudyOutput,
    cpus: &[usize],
    open_host: OpenHost<'_>,
    interrupt: &AtomicBool,
) -> Result<Status, Error> {
    let points = spec.points();
    let marker = folder::marker(
        SERVERS_KIND,
        serde_json::to_value(spec).expect("a servers spec is plain data"),
        output.arguments.clone(),
        points.len(),
        super::ORDER,
    );
    let (mut results, _) = folder::open_with(output.out.as_deref(), false, &marker, csv_columns())?;
    results.stream_to(output, "servers", &marker, folder::StreamAs::Points);
    let limit = sys::raise_open_file_limit().ok();
    let env = Environment::detect(cpus);
    // Set up once for every point; dropped (namespaces deleted) when the command returns.
    let link = Link::open(&spec.network)?;
    let remote = spec.remote.as_ref().map(open_host).transpose()?;
    if !output.json {
        announce(spec, points.len(), limit, &results.dir);
    }
    let study = Study {
        spec,
        points: &points,
        link: &link,
        remote: remote.as_deref(),
        limit,
        env: &env,
        cpus,
        json: output.json,
        interrupt,
    };
    crate::probe::watch::settle_before_first_round(&spec.watch, cpus, interrupt, output.json);
    let (records, status) = study.rounds(&mut results)?;
    if output.json {
        println!("{}", serde_json::to_string_pretty(&records).expect("JSON"));
    }
    super::report::at_end(&results.dir, output.json)?;
    Ok(status)
}
