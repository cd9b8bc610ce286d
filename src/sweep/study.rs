//! The sweep as the study driver runs it (`study::Study`): its rounds of visits (the pilot,
//! the counter round, the profile round, the adaptive rounds), each visit made and saved
//! (`visit`), a disturbed visit made again, and every point's record built from its visits
//! after every round and when the rounds end (`points`).
use super::progress::Progress;
use super::spec::{Point, SweepSpec};
use super::visit_log::VisitLog;
use super::{adaptive, announce, progress, report, rounds, ORDER};
use crate::config::watch::run_cpus;
use crate::engine::PointRunner;
use crate::environment::Environment;
use crate::error::Error;
use crate::record::RunRecord;
use crate::report::marker::SWEEP_KIND;
use crate::report::visit_folder::{PriorVisits, VisitFolder};
use crate::stats::schedule::{PlannedVisit, Schedule};
use crate::study::rounds::{self as visiting, Made, Step, Visits};
use crate::study::{
    Ending, Outcome, Plan, ReportOptions, Study, StudyDescriptor, StudyKind, Underway, Watching,
};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// How the sweep's rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stopped {
    TargetMet,
    BudgetSpent,
    Interrupted,
}

impl Stopped {
    pub(super) fn name(self) -> &'static str {
        match self {
            Stopped::TargetMet => "target_met",
            Stopped::BudgetSpent => "budget_spent",
            Stopped::Interrupted => "interrupted",
        }
    }
}

/// The points of each (pattern, threads, size): what one round visits back to back.
pub(super) fn groups(points: &[Point]) -> Vec<Vec<usize>> {
    visiting::groups(points, |p| (p.pattern, p.threads, p.message_size))
}

/// One sweep: what it measures, through which sides, and how far it got.
pub struct Sweep<'a> {
    pub(super) spec: &'a SweepSpec,
    pub(super) points: Vec<Point>,
    pub(super) groups: Vec<Vec<usize>>,
    pub(super) sides: &'a dyn PointRunner,
    pub(super) env: Environment,
    pub(super) log: VisitLog,
    /// Shown from the first round on.
    pub(super) progress: Option<Progress>,
    /// Visits made by this session so far.
    pub(super) position: usize,
    /// `--profile`: the memcpy cost per byte from the folder's probe, or why there is none.
    pub(super) memcpy: Result<(f64, String), String>,
    /// `--count-copies`: why the tracepoints cannot be opened here, when they cannot (the
    /// copies round is then not made, and every point says why).
    pub(super) copies_unavailable: Option<String>,
    /// Each group's rounds, fixed once after the pilot (`None` until then, or when the pilot
    /// spent the budget).
    pub(super) plan: Option<Vec<adaptive::GroupRounds>>,
    stopped: Stopped,
    /// The round under way: the groups `--resume` makes again whole, and whether the budget
    /// may end it.
    redo: HashSet<usize>,
    budgeted: bool,
    /// Whether `--resume` found some of the round's visits made already.
    replayed: bool,
}

impl<'a> Sweep<'a> {
    /// The sweep `spec` asks for, every point through `sides`.
    pub fn new(spec: &'a SweepSpec, sides: &'a dyn PointRunner) -> Sweep<'a> {
        let points = spec.points();
        Sweep {
            groups: groups(&points),
            points,
            spec,
            sides,
            env: Environment::detect(&spec.cpus),
            log: VisitLog::default(),
            progress: None,
            position: 0,
            memcpy: Err("no probe read yet".into()),
            copies_unavailable: None,
            plan: None,
            stopped: Stopped::TargetMet,
            redo: HashSet::new(),
            budgeted: false,
            replayed: false,
        }
    }
}

/// The sweep as the commands that read its folders know it: its records are run records, one
/// per point, exported as such.
static DESCRIPTOR: StudyDescriptor = StudyDescriptor {
    marker: SWEEP_KIND,
    name: "sweep",
    command: "sweep",
    render: Sweep::render,
    csv_columns: crate::report::csv::columns,
    samples: crate::report::openmetrics::run::samples,
};

/// The sweep study (`studies::STUDIES` lists it).
pub const KIND: StudyKind = StudyKind::new(&DESCRIPTOR);

impl Study for Sweep<'_> {
    type Folder = VisitFolder;
    type Point = RunRecord;

    fn kind(&self) -> StudyKind {
        KIND
    }

    fn plan(&self) -> Plan {
        Plan {
            spec: serde_json::to_value(self.spec).expect("a sweep spec is plain data"),
            points: self.points.len(),
            order: ORDER,
        }
    }

    fn layout(&self) {}

    fn watching(&self) -> Watching<'_> {
        let max_threads = self.spec.threads.iter().copied().max().unwrap_or(1);
        let watched = run_cpus(&self.spec.pinning, max_threads, &self.spec.cpus);
        Watching {
            probe: true,
            settle: Some((&self.spec.watch, watched)),
            cpus: self.spec.cpus.clone(),
        }
    }

    fn begin(
        &mut self,
        run: &mut Underway<'_, VisitFolder>,
        prior: PriorVisits,
    ) -> Result<(), Error> {
        // Best effort: counters that cannot open say so with EMFILE as their reason.
        let _ = crate::sys::raise_open_file_limit();
        announce::print_plan(self.spec, run.dir(), &prior);
        if let Some(place) = self.sides.announce() {
            println!("sweep: sides {place}");
        }
        self.log = VisitLog::new(prior.visits);
        Ok(())
    }

    fn measure(&mut self, run: &mut Underway<'_, VisitFolder>) -> Result<Ending, Error> {
        self.memcpy = super::probe_memcpy(run.dir());
        self.progress = Some(Progress::new(
            super::planned_visits(self.spec),
            self.points.len(),
        ));
        self.stopped = self.rounds(run)?;
        self.progress().done();
        let made = rounds::made(&self.points, &self.groups, &self.log);
        self.record_rounds(run.dir(), &made, self.stopped.name())?;
        Ok(match self.stopped {
            Stopped::Interrupted => Ending::Interrupted,
            _ => Ending::Completed,
        })
    }

    fn points(
        &mut self,
        run: &mut Underway<'_, VisitFolder>,
        _: Ending,
    ) -> Result<Vec<RunRecord>, Error> {
        let records = self.point_records(self.stopped);
        run.folder.write_points(&records)?;
        Ok(records)
    }

    fn point_line(&self, record: &RunRecord, index: usize, _: usize) -> Option<String> {
        let at = record.sweep_point.as_ref().map_or(index, |p| p.index);
        let value = serde_json::to_value(record).expect("a record serializes");
        Some(progress::point_line(at, self.points.len(), &value))
    }

    fn render(dir: &Path, options: &ReportOptions) -> Result<PathBuf, Error> {
        report::write(dir, options.output.as_deref(), options.margin)
    }

    fn outcome(
        &self,
        _: &Underway<'_, VisitFolder>,
        records: &[RunRecord],
    ) -> Result<Outcome, Error> {
        let failed = records
            .iter()
            .filter(|r| {
                !matches!(r.status.as_str(), "completed" | "skipped")
                    || r.verify.mismatched_bytes > 0
            })
            .count();
        Ok(match failed {
            0 => Outcome::Passed,
            _ => Outcome::Failed {
                said: Some(format!(
                    "{failed} of {} points failed; see the errors column of results.csv",
                    records.len()
                )),
            },
        })
    }

    fn resume_hint(&self, dir: &Path) -> Option<String> {
        Some(format!(
            "interrupted: `bytepath sweep --out {} --resume` (with the same flags) makes the remaining visits",
            dir.display()
        ))
    }
}

impl Sweep<'_> {
    pub(super) fn progress(&self) -> &Progress {
        self.progress.as_ref().expect("the rounds have begun")
    }

    /// The minimum rounds, the counter, profile and copies rounds (those asked for), then
    /// adaptive rounds while the budget lasts.
    fn rounds(&mut self, run: &mut Underway<'_, VisitFolder>) -> Result<Stopped, Error> {
        let mut schedule = Schedule::new(self.groups.clone(), self.spec.seed);
        let all: Vec<usize> = (0..schedule.group_count()).collect();
        let mut round = 0;
        while round < self.spec.min_visits {
            if self.run_round(run, schedule.round(round, &all, true), false)? {
                return Ok(Stopped::Interrupted);
            }
            round += 1;
        }
        if self.spec.counter_visits() {
            if self.run_round(run, schedule.counter_round(round), false)? {
                return Ok(Stopped::Interrupted);
            }
            round += 1;
        }
        if self.spec.profile {
            if self.run_round(run, schedule.profile_round(round), false)? {
                return Ok(Stopped::Interrupted);
            }
            round += 1;
        }
        if self.spec.count_copies {
            // Numbered alike whether made or not, so a resumed sweep's rounds line up.
            self.copies_unavailable = self.tracepoints_refused();
            if self.copies_unavailable.is_none()
                && self.run_round(run, schedule.copies_round(round), false)?
            {
                return Ok(Stopped::Interrupted);
            }
            round += 1;
        }
        self.adaptive_rounds(run, &mut schedule, round)
    }

    /// Rounds after the pilot, where the plan fixed once from the pilot sends them
    /// (`adaptive`). A budget spent by the pilot leaves every cell at one look, and the plan
    /// is then never made.
    fn adaptive_rounds(
        &mut self,
        run: &mut Underway<'_, VisitFolder>,
        schedule: &mut Schedule,
        mut round: usize,
    ) -> Result<Stopped, Error> {
        // A resumed sweep whose budget its adaptive rounds spent still reports their plan.
        if self.budget_spent() && !self.log.headline_from(round) {
            return Ok(Stopped::BudgetSpent);
        }
        let plan = rounds::decide(self.spec, &self.points, &self.groups, &self.log, round);
        self.plan = Some(plan.clone());
        loop {
            let made = rounds::made(&self.points, &self.groups, &self.log);
            self.record_rounds(run.dir(), &made, "under_way")?;
            let open = adaptive::round_groups(&plan, &made);
            if open.is_empty() {
                return Ok(Stopped::TargetMet);
            }
            if self.budget_spent() {
                return Ok(Stopped::BudgetSpent);
            }
            let visits = schedule.round(round, &open, false);
            self.progress().extend(visits.len());
            if self.run_round(run, visits, true)? {
                return Ok(Stopped::Interrupted);
            }
            round += 1;
            // A group whose points can make no more visits (skipped, failed) would ask for
            // rounds for ever; a round `--resume` found made already adds none and goes on.
            let now = rounds::made(&self.points, &self.groups, &self.log);
            if now == made && !self.replayed {
                return Ok(Stopped::TargetMet);
            }
        }
    }

    fn budget_spent(&self) -> bool {
        self.log.spent() >= self.spec.total_budget()
    }

    /// Writes rounds.json: the plan (if the pilot left budget for one) and each group's rounds.
    fn record_rounds(&self, dir: &Path, made: &[usize], stopped: &str) -> Result<(), Error> {
        let outcome = (self.plan.as_deref(), made, stopped);
        let spec = (self.spec, &self.log);
        rounds::write(dir, spec, &self.points, &self.groups, outcome)
    }

    /// Makes the round's visits not made yet (`visiting::round`); in an adaptive round
    /// (`budgeted`) no group is started once the budget is spent. Writes every point's record
    /// afterwards. Whether Ctrl-C ended it.
    fn run_round(
        &mut self,
        run: &mut Underway<'_, VisitFolder>,
        visits: Vec<PlannedVisit>,
        budgeted: bool,
    ) -> Result<bool, Error> {
        self.redo = self.partly_made_groups(&visits);
        self.replayed = visits.iter().any(|planned| {
            let key = self.points[planned.point].key();
            self.log.made(&key, planned.round, planned.kind)
        });
        self.budgeted = budgeted;
        if visiting::round(run, visits, self)? == Ending::Interrupted {
            return Ok(true);
        }
        run.folder
            .write_points(&self.point_records(Stopped::BudgetSpent))?;
        Ok(false)
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
}

impl Visits<VisitFolder> for Sweep<'_> {
    /// A visit `--resume` kept (unless its group is made again whole) or of a point this
    /// kernel cannot run is passed; in an adaptive round a spent budget starts no group.
    fn step(&self, planned: &PlannedVisit, new_group: bool) -> Step {
        if self.budgeted && new_group && self.budget_spent() {
            return Step::EndRound;
        }
        let key = self.points[planned.point].key();
        let made = self.log.made(&key, planned.round, planned.kind);
        if (made && !self.redo.contains(&planned.group)) || self.log.skipped(&key) {
            Step::Pass
        } else {
            Step::Make
        }
    }

    fn make(
        &mut self,
        run: &mut Underway<'_, VisitFolder>,
        planned: &PlannedVisit,
        _again: bool,
    ) -> Result<Made, Error> {
        self.make_visit(run, planned)
    }
}
