//! The ipc study's loop: `--visits` rounds; each round visits the (measure, size) groups in a
//! seeded shuffled order and, inside a group, every transport (and buffer) back to back in an
//! order drawn from the seed and reversed on every other round (`stats::schedule`), so any two
//! transports at one size are measured seconds apart, each first equally often. Every visit is
//! saved to visits.jsonl as it ends; each point's record (results.jsonl) is aggregated from its
//! visits (`record::aggregate`), and the report answers ipc's own questions (`answers`).
use super::{IpcSpec, Measure, Point, IPC_KIND};
use crate::config::watch::run_cpus;
use crate::engine::{self, PointRunner, RunOutcome};
use crate::environment::Environment;
use crate::error::{Error, Status};
use crate::measure::interference::Sample;
use crate::record::{self, RunRecord, SweepPoint, VisitInfo};
use crate::report::folder::{self, StudyOutput, PROBE_JSON};
use crate::report::visit_folder::{self, VisitFolder};
use crate::stats::point::VisitPlan;
use crate::stats::schedule::{PlannedVisit, Schedule};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// How the visits are ordered, as the marker and the report state it.
pub const ORDER: &str = "rounds of visits: in each round the (measure, size) groups in a seeded \
     shuffled order, each group's transports (and buffers) back to back in an order drawn from \
     the seed and reversed on every other round; --trials and --bytes split evenly over a \
     point's visits; no perf counter open";

/// The points of each (measure, size): what one round visits back to back.
fn groups(points: &[Point]) -> Vec<Vec<usize>> {
    let mut groups: Vec<((Measure, usize), Vec<usize>)> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let at = (p.measure, p.size);
        match groups.iter_mut().find(|(g, _)| *g == at) {
            Some((_, members)) => members.push(i),
            None => groups.push((at, vec![i])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}

/// Measures every point of `spec` through `sides` into a new results folder and renders the
/// report with ipc's answers.
pub fn run(
    spec: &IpcSpec,
    output: &StudyOutput,
    sides: &dyn PointRunner,
    interrupt: &AtomicBool,
) -> Result<Status, Error> {
    let points = spec.points();
    let marker = folder::marker(
        IPC_KIND,
        serde_json::to_value(spec).expect("an ipc spec is plain data"),
        output.arguments.clone(),
        points.len(),
        ORDER,
    );
    let (mut results, _) = visit_folder::open(output.out.as_deref(), false, &marker)?;
    output.stream.start_study("ipc", &marker, &results.dir);
    results.stream = output.stream.clone();
    let env = Environment::detect(&spec.cpus);
    announce(spec, sides, points.len(), &results.dir)?;
    // Every ipc point is one flow.
    let watched = run_cpus(&spec.pinning, 1, &spec.cpus);
    crate::probe::watch::settle_before_first_round(&spec.watch, &watched, interrupt, false);
    let study_started = Instant::now();
    let study = Study {
        spec,
        sides,
        points: &points,
        env: &env,
        interrupt,
    };
    let (visits, status) = study.rounds(&mut results)?;
    println!(
        "{}",
        crate::probe::watch::summary_line(
            &results.dir,
            visit_folder::VISITS_JSONL,
            study_started.elapsed().as_secs_f64()
        )
    );
    let records = point_records(spec, sides, &points, &visits, &env, status);
    results.write_points(&records)?;
    for r in &records {
        output
            .stream
            .point(&serde_json::to_value(r).expect("a record serializes"));
    }
    finish(&results, &records, status)
}

/// Says where the sides run, what is left out and where the results go, and measures the
/// machine's limits (probe.json: syscall, wake-up and memcpy costs) into the folder.
fn announce(
    spec: &IpcSpec,
    sides: &dyn PointRunner,
    points: usize,
    dir: &std::path::Path,
) -> Result<(), Error> {
    if let Some(place) = sides.announce() {
        println!("ipc: sides {place}");
    }
    for reason in &spec.skip_reasons {
        println!("ipc: {reason}");
    }
    println!(
        "ipc: {points} points × {} visits (order seed {}), pin {}, results in {}",
        spec.visits,
        spec.seed,
        spec.pinning.name(),
        dir.display()
    );
    let probe = dir.join(PROBE_JSON);
    if crate::probe::write_probe(&probe, &spec.cpus)? {
        println!("probe: machine limits measured into {}", probe.display());
    }
    Ok(())
}

/// What every visit of the study shares.
struct Study<'a> {
    spec: &'a IpcSpec,
    sides: &'a dyn PointRunner,
    points: &'a [Point],
    env: &'a Environment,
    interrupt: &'a AtomicBool,
}

/// How one visit went, for its round.
enum Made {
    Quiet,
    /// Others used the machine beyond the quiet threshold; the index of the visit in `visits`.
    Disturbed(usize),
    Interrupted,
}

impl Study<'_> {
    /// Every round: a canary first, then its visits in the seeded order, then the disturbed
    /// ones made once more. Returns the visits that count and how the study ended.
    fn rounds(&self, results: &mut VisitFolder) -> Result<(Vec<RunRecord>, Status), Error> {
        let (spec, mut visits, mut status) = (self.spec, Vec::new(), Status::Success);
        let mut schedule = Schedule::new(groups(self.points), spec.seed);
        let all: Vec<usize> = (0..schedule.group_count()).collect();
        'rounds: for round in 0..spec.visits {
            crate::probe::watch::record_canary(&results.dir, round, &spec.cpus)?;
            let mut disturbed = Vec::new();
            for planned in schedule.round(round, &all, true) {
                match self.make(&planned, results, &mut visits, &mut status)? {
                    Made::Interrupted => break 'rounds,
                    Made::Disturbed(at) => disturbed.push((planned, at)),
                    Made::Quiet => {}
                }
            }
            // A disturbed visit is made once more at the end of its round; both stay in
            // visits.jsonl, and the redo (pushed last) takes the disturbed one's place in the
            // point's figures.
            for (planned, at) in disturbed {
                if let Made::Interrupted = self.make(&planned, results, &mut visits, &mut status)? {
                    break 'rounds;
                }
                visits.swap_remove(at);
            }
        }
        Ok((visits, status))
    }

    /// Makes one visit, saves it, prints its line and keeps it in `visits`.
    fn make(
        &self,
        planned: &PlannedVisit,
        results: &mut VisitFolder,
        visits: &mut Vec<RunRecord>,
        status: &mut Status,
    ) -> Result<Made, Error> {
        if self.interrupt.load(Ordering::SeqCst) {
            *status = Status::Interrupted;
            return Ok(Made::Interrupted);
        }
        let (spec, points) = (self.spec, self.points);
        let visit = visit(
            spec,
            self.sides,
            points,
            planned,
            visits.len(),
            self.env,
            self.interrupt,
        );
        results.append(&visit)?;
        println!(
            "round {} {}",
            planned.round + 1,
            line(points[planned.point].measure, &visit)
        );
        let interrupted = visit.interrupted;
        let disturbed = visit.visit.as_ref().is_some_and(|v| v.disturbed());
        if visit.status == "failed" {
            *status = Status::Failed;
        }
        visits.push(visit);
        Ok(if interrupted {
            *status = Status::Interrupted;
            Made::Interrupted
        } else if disturbed {
            Made::Disturbed(visits.len() - 1)
        } else {
            Made::Quiet
        })
    }
}

/// Measures one visit; a visit that cannot run becomes a failed record, never an error.
fn visit(
    spec: &IpcSpec,
    sides: &dyn PointRunner,
    points: &[Point],
    planned: &PlannedVisit,
    position: usize,
    env: &Environment,
    interrupt: &AtomicBool,
) -> RunRecord {
    let point = &points[planned.point];
    let run = sides.place(spec.run_spec(point));
    let cpus = run_cpus(&spec.pinning, 1, &spec.cpus);
    let before = Sample::take(&cpus);
    let started = Instant::now();
    let outcome = sides
        .run(&run, interrupt)
        .unwrap_or_else(|e| RunOutcome::not_run(&run, e.to_string()));
    let after = Sample::take(&cpus);
    let mut record = record::build(&run, &outcome, env.clone());
    record.command = "ipc".into();
    record.sweep_point = Some(sweep_point(points, planned.point));
    record.visit = Some(VisitInfo {
        key: point.key(),
        round: planned.round,
        kind: planned.kind,
        position,
        wall_s: started.elapsed().as_secs_f64(),
        seed: spec.seed,
        interference: Some(before.until(&after, cpus.len(), spec.watch.quiet_threshold)),
    });
    record
}

fn sweep_point(points: &[Point], index: usize) -> SweepPoint {
    SweepPoint {
        index,
        total: points.len(),
        key: points[index].key(),
    }
}

/// Every visited point's record, aggregated from its visits, in the matrix's order.
fn point_records(
    spec: &IpcSpec,
    sides: &dyn PointRunner,
    points: &[Point],
    visits: &[RunRecord],
    env: &Environment,
    status: Status,
) -> Vec<RunRecord> {
    let stop = if status == Status::Interrupted {
        "interrupted"
    } else {
        "visits_made"
    };
    points
        .iter()
        .enumerate()
        .filter_map(|(i, point)| {
            let key = point.key();
            let mine: Vec<&RunRecord> = visits
                .iter()
                .filter(|v| v.visit.as_ref().is_some_and(|info| info.key == key))
                .collect();
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
            let run = sides.place(spec.run_spec(point));
            let mut record = record::aggregate::point_record(&run, env.clone(), &mine, &plan)?;
            record.sweep_point = Some(sweep_point(points, i));
            Some(record)
        })
        .collect()
}

/// Renders the report (a failure there keeps the results) and gives the study's status.
fn finish(results: &VisitFolder, records: &[RunRecord], status: Status) -> Result<Status, Error> {
    match super::report::write(&results.dir, None) {
        Ok(html) => println!("report: {}", html.display()),
        Err(e) => eprintln!(
            "bytepath: the report could not be written ({e}); the results are kept in {}",
            results.dir.display()
        ),
    }
    let failed = records.iter().filter(|r| r.status == "failed").count();
    if failed > 0 && status == Status::Success {
        return Ok(Status::Failed);
    }
    Ok(status)
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
