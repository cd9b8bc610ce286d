//! The sweep under way: its rounds of visits (the pilot, the counter round, the adaptive
//! rounds), each visit made and saved, a disturbed visit made again, and every point's record
//! built from its visits when the rounds end.
use super::progress::Progress;
use super::spec::{Point, SweepSpec};
use super::visit_log::VisitLog;
use super::{adaptive, rounds, watch};
use crate::config::watch::run_cpus;
use crate::engine::{PointRunner, RunOutcome};
use crate::environment::{mem_available, Environment};
use crate::error::Error;
use crate::measure::interference::Sample;
use crate::record::{self, RunRecord, SweepPoint, VisitInfo, VisitKind};
use crate::report::visit_folder::VisitFolder;
use crate::stats::schedule::{PlannedVisit, Schedule};
use crate::sys;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// How one visit went, for its round.
enum Made {
    Quiet,
    /// Others used the machine beyond the quiet threshold: made again at the round's end.
    Disturbed,
    Interrupted,
}

/// How the sweep's rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    TargetMet,
    BudgetSpent,
    Interrupted,
}

impl Ending {
    pub(super) fn name(self) -> &'static str {
        match self {
            Ending::TargetMet => "target_met",
            Ending::BudgetSpent => "budget_spent",
            Ending::Interrupted => "interrupted",
        }
    }
}

/// The points of each (pattern, threads, size): what one round visits back to back.
pub(super) fn groups(points: &[Point]) -> Vec<Vec<usize>> {
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
pub(super) struct Sweep<'a> {
    pub(super) spec: &'a SweepSpec,
    pub(super) points: &'a [Point],
    pub(super) sides: &'a dyn PointRunner,
    pub(super) env: Environment,
    pub(super) interrupt: &'a AtomicBool,
    pub(super) folder: VisitFolder,
    pub(super) log: VisitLog,
    pub(super) progress: Progress,
    /// Visits made by this session so far.
    pub(super) position: usize,
    /// `--profile`: the memcpy cost per byte from the folder's probe, or why there is none.
    pub(super) memcpy: Result<(f64, String), String>,
    /// Each group's rounds, fixed once after the pilot (`None` until then, or when the pilot
    /// spent the budget).
    pub(super) plan: Option<Vec<adaptive::GroupRounds>>,
}

impl Sweep<'_> {
    /// The minimum rounds, the counter round, then adaptive rounds while the budget lasts.
    pub(super) fn run(&mut self) -> Result<Ending, Error> {
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
    pub(super) fn record_rounds(&self, made: &[usize], stopped: &str) -> Result<(), Error> {
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
    pub(super) fn point_records(&self, ending: Ending) -> Vec<RunRecord> {
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
