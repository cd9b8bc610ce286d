//! The ipc study as the study driver runs it (`study::Study`): `--visits` rounds; each round
//! visits the (measure, size) groups in a seeded shuffled order and, inside a group, every
//! transport (and buffer) back to back in an order drawn from the seed and reversed on every
//! other round (`stats::schedule`), so any two transports at one size are measured seconds
//! apart, each first equally often. Every visit is saved to visits.jsonl as it ends; each
//! point's record (results.jsonl) is aggregated from its visits (`record::aggregate`), and the
//! report answers ipc's own questions (`answers`).
use super::{IpcSpec, Measure, Point};
use crate::config::watch::run_cpus;
use crate::engine::{self, PointRunner, RunOutcome};
use crate::environment::Environment;
use crate::error::Error;
use crate::record::{self, RunRecord, SweepPoint, VisitInfo};
use crate::report::visit_folder::{PriorVisits, VisitFolder};
use crate::stats::point::VisitPlan;
use crate::stats::schedule::{PlannedVisit, Schedule};
use crate::study::rounds::{self, Made, Visits};
use crate::study::{
    Ending, Outcome, Plan, ReportOptions, Study, StudyDescriptor, StudyKind, Underway, Watching,
};
use std::path::{Path, PathBuf};

/// How the visits are ordered, as the marker and the report state it.
pub const ORDER: &str = "rounds of visits: in each round the (measure, size) groups in a seeded \
     shuffled order, each group's transports (and buffers) back to back in an order drawn from \
     the seed and reversed on every other round; --trials and --bytes split evenly over a \
     point's visits; no perf counter open";

/// One ipc study: what it measures, through which sides, and the visits made so far.
pub struct Ipc<'a> {
    spec: &'a IpcSpec,
    sides: &'a dyn PointRunner,
    points: Vec<Point>,
    env: Environment,
    /// The visits that count, in the order made (a disturbed visit's redo in its place).
    visits: Vec<RunRecord>,
    /// A visit failed.
    failed: bool,
}

impl<'a> Ipc<'a> {
    /// The study `spec` asks for, every point through `sides`.
    pub fn new(spec: &'a IpcSpec, sides: &'a dyn PointRunner) -> Ipc<'a> {
        Ipc {
            points: spec.points(),
            env: Environment::detect(&spec.cpus),
            spec,
            sides,
            visits: Vec::new(),
            failed: false,
        }
    }
}

/// The ipc study as the commands that read its folders know it: its records are run records,
/// one per point, exported as a sweep's are.
static DESCRIPTOR: StudyDescriptor = StudyDescriptor {
    marker: "bytepath ipc results",
    name: "ipc study",
    command: "ipc",
    render: Ipc::render,
    csv_columns: crate::report::csv::columns,
    samples: crate::report::openmetrics::run::samples,
};

/// The ipc study (`studies::STUDIES` lists it).
pub const KIND: StudyKind = StudyKind::new(&DESCRIPTOR);

impl Study for Ipc<'_> {
    type Folder = VisitFolder;
    type Point = RunRecord;

    fn kind(&self) -> StudyKind {
        KIND
    }

    fn plan(&self) -> Plan {
        Plan {
            spec: serde_json::to_value(self.spec).expect("an ipc spec is plain data"),
            points: self.points.len(),
            order: ORDER,
        }
    }

    fn layout(&self) {}

    fn watching(&self) -> Watching<'_> {
        // Every ipc point is one flow.
        let watched = run_cpus(&self.spec.pinning, 1, &self.spec.cpus);
        Watching {
            probe: true,
            settle: Some((&self.spec.watch, watched)),
            cpus: self.spec.cpus.clone(),
        }
    }

    /// Says where the sides run, what is left out and where the results go.
    fn begin(&mut self, run: &mut Underway<'_, VisitFolder>, _: PriorVisits) -> Result<(), Error> {
        let spec = self.spec;
        if let Some(place) = self.sides.announce() {
            println!("ipc: sides {place}");
        }
        for reason in &spec.skip_reasons {
            println!("ipc: {reason}");
        }
        println!(
            "ipc: {} points × {} visits (order seed {}), pin {}, results in {}",
            self.points.len(),
            spec.visits,
            spec.seed,
            spec.pinning.name(),
            run.dir().display()
        );
        Ok(())
    }

    fn measure(&mut self, run: &mut Underway<'_, VisitFolder>) -> Result<Ending, Error> {
        let groups = rounds::groups(&self.points, |p| (p.measure, p.size));
        let schedule = Schedule::new(groups, self.spec.seed);
        rounds::every_group(run, schedule, self.spec.visits, self)
    }

    fn points(
        &mut self,
        run: &mut Underway<'_, VisitFolder>,
        ending: Ending,
    ) -> Result<Vec<RunRecord>, Error> {
        let records = self.point_records(ending);
        run.folder.write_points(&records)?;
        Ok(records)
    }

    fn render(dir: &Path, options: &ReportOptions) -> Result<PathBuf, Error> {
        super::report::write(dir, options.output.as_deref(), options.margin)
    }

    fn outcome(
        &self,
        _: &Underway<'_, VisitFolder>,
        records: &[RunRecord],
    ) -> Result<Outcome, Error> {
        let failed = self.failed || records.iter().any(|r| r.status == "failed");
        Ok(match failed {
            true => Outcome::Failed { said: None },
            false => Outcome::Passed,
        })
    }
}

impl Visits<VisitFolder> for Ipc<'_> {
    /// Makes one visit, saves it, prints its line and keeps it; a disturbed visit's redo
    /// takes its place in the point's figures (both stay in visits.jsonl).
    fn make(
        &mut self,
        run: &mut Underway<'_, VisitFolder>,
        planned: &PlannedVisit,
        again: bool,
    ) -> Result<Made, Error> {
        let visit = self.visit(run, planned);
        run.folder.append(&visit)?;
        let measure = self.points[planned.point].measure;
        println!("round {} {}", planned.round + 1, line(measure, &visit));
        let (interrupted, disturbed) = (
            visit.interrupted,
            visit.visit.as_ref().is_some_and(|v| v.disturbed()),
        );
        self.failed |= visit.status == "failed";
        let identity = visit
            .visit
            .as_ref()
            .map(|v| (v.key.clone(), v.round, v.kind));
        self.visits.push(visit);
        if interrupted {
            return Ok(Made::Interrupted);
        }
        if again {
            let first = self
                .visits
                .iter()
                .position(|v| {
                    v.visit.as_ref().map(|i| (i.key.clone(), i.round, i.kind)) == identity
                })
                .expect("the disturbed visit was kept");
            self.visits.swap_remove(first);
        }
        Ok(if disturbed {
            Made::Disturbed
        } else {
            Made::Quiet
        })
    }
}

impl Ipc<'_> {
    /// Measures one visit; a visit that cannot run becomes a failed record, never an error.
    fn visit(&self, run: &Underway<'_, VisitFolder>, planned: &PlannedVisit) -> RunRecord {
        let (spec, point) = (self.spec, &self.points[planned.point]);
        let placed = self.sides.place(spec.run_spec(point));
        let cpus = run_cpus(&spec.pinning, 1, &spec.cpus);
        let watch = run.machine.watch(&cpus);
        let outcome = self
            .sides
            .run(&placed, run.interrupt)
            .unwrap_or_else(|e| RunOutcome::not_run(&placed, e.to_string()));
        let (wall_s, interference) = watch.end(spec.watch.quiet_threshold);
        let mut record = record::build(&placed, &outcome, self.env.clone());
        record.command = "ipc".into();
        record.sweep_point = Some(self.sweep_point(planned.point));
        record.visit = Some(VisitInfo {
            key: point.key(),
            round: planned.round,
            kind: planned.kind,
            position: self.visits.len(),
            wall_s,
            seed: spec.seed,
            interference: Some(interference),
        });
        record
    }

    fn sweep_point(&self, index: usize) -> SweepPoint {
        SweepPoint {
            index,
            total: self.points.len(),
            key: self.points[index].key(),
        }
    }

    /// Every visited point's record, aggregated from its visits, in the matrix's order.
    fn point_records(&self, ending: Ending) -> Vec<RunRecord> {
        let spec = self.spec;
        let stop = match ending {
            Ending::Interrupted => "interrupted",
            Ending::Completed => "visits_made",
        };
        let plan = VisitPlan {
            min_visits: spec.visits,
            visit_s: spec.max_time.as_secs_f64(),
            warmup_s: spec.warmup.as_secs_f64(),
            slice_s: 0.0,
            ci_target: None,
            stop_reason: stop.into(),
            counters_round: None,
            seed: Some(spec.seed),
        };
        self.points
            .iter()
            .enumerate()
            .filter_map(|(i, point)| {
                let key = point.key();
                let mine: Vec<&RunRecord> = self
                    .visits
                    .iter()
                    .filter(|v| v.visit.as_ref().is_some_and(|info| info.key == key))
                    .collect();
                let run = self.sides.place(spec.run_spec(point));
                let mut record =
                    record::aggregate::point_record(&run, self.env.clone(), &mine, &plan)?;
                record.sweep_point = Some(self.sweep_point(i));
                Some(record)
            })
            .collect()
    }
}

/// One line per visit: latency as min/p50/p99/mean round trip with the one-way estimate, or
/// bandwidth received whole.
fn line(measure: Measure, r: &RunRecord) -> String {
    let figures = figures(measure, r);
    match &r.datagrams {
        Some(d) if r.errors.is_empty() => format!("{figures}; {}", d.brief()),
        _ => figures,
    }
}
fn figures(measure: Measure, r: &RunRecord) -> String {
    let c = &r.config;
    let buffer = c
        .channel_buffer_bytes
        .map_or(String::new(), |b| format!(" ({b} B buffer)"));
    let head = format!(
        "{:<10} {:>8} B {:<9}{buffer}",
        c.transport,
        c.message_size_bytes,
        format!("{measure:?}").to_lowercase()
    );
    if !r.errors.is_empty() {
        return format!("{head} failed: {}", r.errors.join("; "));
    }
    let cut = if r.statistics.stop_reason == engine::phases::StopReason::MaxTime.name() {
        " (cut at --max-time)"
    } else {
        ""
    };
    match measure {
        Measure::Latency => match &r.sides[0].latency_ns {
            Some(l) => format!(
                "{head} round trip min {:.2} p50 {:.2} p99 {:.2} mean {:.2} µs; one way ≈ {:.2} µs (RTT/2, an estimate); {} trials{cut}",
                l.min as f64 / 1e3, l.p50 as f64 / 1e3, l.p99 as f64 / 1e3, l.mean / 1e3, l.p50 as f64 / 2e3, r.sides[0].messages
            ),
            None => format!("{head} no round trip completed"),
        },
        Measure::Bandwidth => format!(
            "{head} {:.3} Gbit/s received whole ({} B in {:.3} s){cut}",
            r.sides[1].throughput_gbps, r.sides[1].payload_bytes, r.sides[1].elapsed_s
        ),
    }
}
