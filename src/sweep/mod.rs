//! `bytepath sweep`: a matrix of points, each measured in several short visits spread over the
//! whole sweep. Rounds visit every point once in a seeded shuffled order (`stats::schedule`); a
//! point's figure and interval come from its visit means, so the regimes a shared machine
//! moves between, which last seconds, fall inside its interval instead of between points.
//! After the minimum rounds (the pilot) and one round of counter visits, further rounds go to
//! the groups whose crossover verdicts the pilot left undecided, each up to a total fixed once
//! from its pilot's spread (`adaptive`, recorded in rounds.json), until the budget is spent. Every visit is
//! saved as it finishes and every point's record after every round; a visit that fails is
//! recorded and the sweep goes on; Ctrl-C ends the sweep after the current visit.
pub mod adaptive;
mod announce;
pub(crate) mod answers;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod rounds;
pub(crate) mod spec;
pub(crate) mod visit_log;
mod watch;

use crate::config::watch::run_cpus;
use crate::engine::{PointRunner, RunOutcome};
use crate::environment::{mem_available, Environment};
use crate::error::{Error, Status};
use crate::measure::interference::Sample;
use crate::record::{self, RunRecord, SweepPoint, VisitInfo, VisitKind};
use crate::report::folder::{self, StudyOutput, PROBE_JSON};
use crate::report::visit_folder::{self, VisitFolder};
use crate::stats::schedule::{PlannedVisit, Schedule};
use crate::sys;
use progress::Progress;
use spec::{Point, SweepSpec};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use visit_log::VisitLog;

/// How the visits are ordered, as the marker records it.
const ORDER: &str = "rounds of visits: in each round the groups of (pattern, threads, size) in \
     a seeded shuffled order, each group's mechanisms back to back in an order drawn from the \
     seed and reversed on every other visit of the group; after the minimum rounds (the pilot) \
     one round of counter visits, then rounds of the groups the pilot left undecided, each up \
     to the total its pilot's spread fixed (see rounds.json), furthest short first, until the \
     budget is spent";

/// How one visit went, for its round.
enum Made {
    Quiet,
    /// Others used the machine beyond the quiet threshold: made again at the round's end.
    Disturbed,
    Interrupted,
}

/// How the sweep's rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    TargetMet,
    BudgetSpent,
    Interrupted,
}

impl Ending {
    fn name(self) -> &'static str {
        match self {
            Ending::TargetMet => "target_met",
            Ending::BudgetSpent => "budget_spent",
            Ending::Interrupted => "interrupted",
        }
    }
}

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
    for (index, r) in records.iter().enumerate() {
        let at = r.sweep_point.as_ref().map_or(index, |p| p.index);
        let value = serde_json::to_value(r).expect("a record serializes");
        output.stream.point(&value);
        println!("{}", progress::point_line(at, points.len(), &value));
    }
    finish(&sweep.folder, ending, &records)
}

/// Visits the minimum rounds and the counter round hold: the bar's first length.
fn planned_visits(spec: &SweepSpec) -> usize {
    spec.total()
        * (spec.min_visits + usize::from(spec.counter_visits()) + usize::from(spec.profile))
}

/// The points of each (pattern, threads, size): what one round visits back to back.
fn groups(points: &[Point]) -> Vec<Vec<usize>> {
    let mut groups: Vec<((crate::config::Pattern, usize, usize), Vec<usize>)> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let at = (p.pattern, p.threads, p.message_size);
        match groups.iter_mut().find(|(g, _)| *g == at) {
            Some((_, members)) => members.push(i),
            None => groups.push((at, vec![i])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}

/// One sweep under way.
struct Sweep<'a> {
    spec: &'a SweepSpec,
    points: &'a [Point],
    sides: &'a dyn PointRunner,
    env: Environment,
    interrupt: &'a AtomicBool,
    folder: VisitFolder,
    log: VisitLog,
    progress: Progress,
    /// Visits made by this session so far.
    position: usize,
    /// `--profile`: the memcpy cost per byte from the folder's probe, or why there is none.
    memcpy: Result<(f64, String), String>,
    /// Each group's rounds, fixed once after the pilot (`None` until then, or when the pilot
    /// spent the budget).
    plan: Option<Vec<adaptive::GroupRounds>>,
}

impl Sweep<'_> {
    /// The minimum rounds, the counter round, then adaptive rounds while the budget lasts.
    fn run(&mut self) -> Result<Ending, Error> {
        let mut schedule = Schedule::new(groups(self.points), self.spec.seed);
        let all: Vec<usize> = (0..schedule.group_count()).collect();
        let mut round = 0;
        while round < self.spec.min_visits {
            if !self.run_round(schedule.round(round, &all, true), false)? {
                return Ok(Ending::Interrupted);
            }
            round += 1;
        }
        if self.spec.counter_visits() {
            if !self.run_round(schedule.counter_round(round), false)? {
                return Ok(Ending::Interrupted);
            }
            round += 1;
        }
        if self.spec.profile {
            if !self.run_round(schedule.profile_round(round), false)? {
                return Ok(Ending::Interrupted);
            }
            round += 1;
        }
        self.adaptive_rounds(&mut schedule, round)
    }

    /// Rounds after the pilot, where the plan fixed once from the pilot sends them
    /// (`adaptive`). A budget spent by the pilot leaves every cell at one look, and the plan
    /// is then never made.
    fn adaptive_rounds(
        &mut self,
        schedule: &mut Schedule,
        mut round: usize,
    ) -> Result<Ending, Error> {
        // A resumed sweep whose budget its adaptive rounds spent still reports their plan.
        if self.budget_spent() && !self.log.headline_from(round) {
            return Ok(Ending::BudgetSpent);
        }
        let groups = groups(self.points);
        let plan = rounds::decide(self.spec, self.points, &groups, &self.log, round);
        self.plan = Some(plan.clone());
        loop {
            let made = rounds::made(self.points, &groups, &self.log);
            self.record_rounds(&made, "under_way")?;
            let open = adaptive::round_groups(&plan, &made);
            if open.is_empty() {
                return Ok(Ending::TargetMet);
            }
            if self.budget_spent() {
                return Ok(Ending::BudgetSpent);
            }
            let visits = schedule.round(round, &open, false);
            self.progress.extend(visits.len());
            if !self.run_round(visits, true)? {
                return Ok(Ending::Interrupted);
            }
            round += 1;
            // A group whose points can make no more visits (skipped, failed) would ask for
            // rounds for ever.
            if rounds::made(self.points, &groups, &self.log) == made {
                return Ok(Ending::TargetMet);
            }
        }
    }

    fn budget_spent(&self) -> bool {
        self.log.spent() >= self.spec.total_budget()
    }

    /// Writes rounds.json: the plan (if the pilot left budget for one) and each group's rounds.
    fn record_rounds(&self, made: &[usize], stopped: &str) -> Result<(), Error> {
        let groups = groups(self.points);
        let outcome = (self.plan.as_deref(), made, stopped);
        rounds::write(&self.folder.dir, self.spec, self.points, &groups, outcome)
    }

    /// Makes the round's visits not made yet; in an adaptive round (`budgeted`) no group is
    /// started once the budget is spent. Writes every point's record afterwards. Returns
    /// false when Ctrl-C ended it.
    fn run_round(&mut self, visits: Vec<PlannedVisit>, budgeted: bool) -> Result<bool, Error> {
        let redo = self.partly_made_groups(&visits);
        let mut group = None;
        let mut disturbed = Vec::new();
        if let Some(first) = visits.first() {
            // On the allowed CPUs, not the points' pinning, so canaries of any two runs on
            // this machine measure the same thing.
            crate::probe::watch::record_canary(&self.folder.dir, first.round, &self.spec.cpus)?;
        }
        for planned in visits {
            if self.interrupt.load(Ordering::SeqCst) {
                return Ok(false);
            }
            if budgeted && group != Some(planned.group) && self.budget_spent() {
                break;
            }
            group = Some(planned.group);
            let key = self.points[planned.point].key();
            let made = self.log.made(&key, planned.round, planned.kind);
            if (made && !redo.contains(&planned.group)) || self.log.skipped(&key) {
                continue;
            }
            match self.make_visit(&planned, &key)? {
                Made::Interrupted => return Ok(false),
                Made::Disturbed => disturbed.push(planned),
                Made::Quiet => {}
            }
        }
        // A disturbed visit is made once more at the end of its round; both stay in
        // visits.jsonl and the second replaces the first in the point's figures.
        for planned in disturbed {
            if self.interrupt.load(Ordering::SeqCst) {
                return Ok(false);
            }
            let key = self.points[planned.point].key();
            if let Made::Interrupted = self.make_visit(&planned, &key)? {
                return Ok(false);
            }
        }
        self.folder
            .write_points(&self.point_records(Ending::BudgetSpent))?;
        Ok(true)
    }

    /// The groups of which this round (on `--resume`) holds some visits made and some not: all
    /// of their visits are made again, so that the pairs of a round are made in one run of
    /// the tool and never pair a visit with one from another session.
    fn partly_made_groups(&self, visits: &[PlannedVisit]) -> HashSet<usize> {
        let mut made: HashMap<usize, (bool, bool)> = HashMap::new();
        for planned in visits {
            let key = self.points[planned.point].key();
            let done = self.log.made(&key, planned.round, planned.kind) || self.log.skipped(&key);
            let seen = made.entry(planned.group).or_insert((false, false));
            if done {
                seen.0 = true;
            } else {
                seen.1 = true;
            }
        }
        made.into_iter()
            .filter(|(_, (some_made, some_missing))| *some_made && *some_missing)
            .map(|(group, _)| group)
            .collect()
    }

    /// Makes one visit and saves it. A visit that fails is made once more at once: on a loaded
    /// machine a short visit can be starved of the CPU and complete nothing. Both stay in
    /// visits.jsonl; the second replaces the first in the point's figures, and its record
    /// says so.
    fn make_visit(&mut self, planned: &PlannedVisit, key: &str) -> Result<Made, Error> {
        for attempt in 0..2 {
            self.progress.start(planned, key);
            let visit = self.visit(planned);
            self.folder.append(&visit)?;
            let value = serde_json::to_value(&visit).expect("a record serializes");
            self.progress.finish(planned, &value);
            let (interrupted, failed) = (visit.interrupted, visit.status == "failed");
            let disturbed = watch::disturbed(&visit);
            self.log.add(visit);
            if interrupted {
                return Ok(Made::Interrupted);
            }
            if !failed || attempt == 1 {
                return Ok(if disturbed {
                    Made::Disturbed
                } else {
                    Made::Quiet
                });
            }
        }
        Ok(Made::Quiet)
    }

    /// Measures one visit; a visit that cannot run becomes a failed record, never an error.
    fn visit(&mut self, planned: &PlannedVisit) -> RunRecord {
        let point = &self.points[planned.point];
        let counters = planned.kind == VisitKind::Counters;
        let mut run = self.sides.place(self.spec.run_spec(point, counters));
        run.profile = planned.kind == VisitKind::Profile;
        let cpus = run_cpus(&self.spec.pinning, point.threads, &self.spec.cpus);
        let before = Sample::take(&cpus);
        let started = Instant::now();
        let outcome = match mem_available() {
            Some(available) => run.check_memory(available).map_err(Error::from),
            None => Ok(()),
        }
        .and_then(|()| self.sides.run(&run, self.interrupt));
        let outcome = outcome.unwrap_or_else(|e| RunOutcome::not_run(&run, e.to_string()));
        let after = Sample::take(&cpus);
        // The visit's threads are gone; what they freed would stay in their arenas.
        sys::release_free_memory();
        let mut record = record::build(&run, &outcome, self.env.clone());
        record.command = "sweep".into();
        record.sweep_point = Some(self.sweep_point(planned.point));
        record.visit = Some(VisitInfo {
            key: point.key(),
            round: planned.round,
            kind: planned.kind,
            position: self.position,
            wall_s: started.elapsed().as_secs_f64(),
            seed: self.spec.seed,
            interference: Some(before.until(&after, cpus.len(), self.spec.watch.quiet_threshold)),
        });
        self.position += 1;
        record
    }

    fn sweep_point(&self, index: usize) -> SweepPoint {
        SweepPoint {
            index,
            total: self.points.len(),
            key: self.points[index].key(),
        }
    }

    /// Every visited point's record, in the matrix's order.
    fn point_records(&self, ending: Ending) -> Vec<RunRecord> {
        self.points
            .iter()
            .enumerate()
            .filter_map(|(i, point)| {
                let key = point.key();
                let met = self
                    .log
                    .need(&key, usize::MAX, self.spec.ci_target)
                    .is_some_and(|n| n <= 1.0);
                let stop = match (met, ending) {
                    (true, _) => "ci_target_met",
                    (false, Ending::Interrupted) => "interrupted",
                    (false, _) => "budget_spent",
                };
                let visits = self.log.of(&key);
                let counters_round = visits
                    .iter()
                    .filter_map(|r| r.visit.as_ref())
                    .find(|v| v.kind == VisitKind::Counters)
                    .map(|v| v.round);
                let plan = self.spec.visit_plan(stop, counters_round);
                let run = self.sides.place(self.spec.run_spec(point, false));
                let mut record =
                    record::aggregate::point_record(&run, self.env.clone(), &visits, &plan)?;
                record.sweep_point = Some(self.sweep_point(i));
                if record.profiled_visit.is_some() {
                    let remote = self.spec.remote.as_ref().map(|r| remote_role(r, point));
                    record::profile::apply_memcpy(&mut record, self.memcpy.clone(), remote);
                }
                for earlier in self.log.replaced(&key) {
                    match watch::redo_note(earlier) {
                        Some(note) => record.notes.push(note),
                        None => record.notes.push(replaced_note(earlier)),
                    }
                }
                Some(record)
            })
            .collect()
    }
}

/// The side a remote point's server runs (its memcpy cost is not this host's); a sweep never
/// runs `--reverse`, so it is the unmeasured one.
fn remote_role(_: &crate::config::RemoteRun, point: &Point) -> crate::engine::worker::Role {
    crate::engine::processes::child_role(point.pattern)
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

/// What a point says of a visit of it made again: after a failure, or with its whole group
/// on `--resume`.
fn replaced_note(earlier: &RunRecord) -> String {
    let info = earlier.visit.as_ref().expect("a visit record");
    if earlier.status == "failed" {
        format!(
            "round {} {:?} visit failed and was made again ({})",
            info.round,
            info.kind,
            earlier.errors.join("; ")
        )
    } else {
        format!(
            "round {} {:?} visit was made again with its whole group on --resume, so that the \
             round's pairs come from one run of the tool",
            info.round, info.kind
        )
    }
}
