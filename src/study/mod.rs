//! The one study driver: what every study (sweep, ipc, file, servers, mesh) does around its own
//! measuring, written once. A study implements `Study`, only what differs: its marker (spec,
//! points, order), its opening lines and set-up, its rounds of visits or transfers, its point
//! records and its report. The driver owns the rest, in this order: the results folder (new,
//! or continued with `--resume`) and its marker, the `--json-stream` start line, the study's
//! opening, probe.json, the settle, the measuring (with a canary at the start of each round),
//! the machine's summary line, every point published (a stream line and the study's line),
//! the study's own output, `results:` and the report (a failure there keeps the results), and
//! the ending status: interrupted (with how to continue), failed, or success.
//!
//! `rounds` is the loop the visiting studies (sweep, ipc, servers) share: a round's visits in
//! their seeded order, a disturbed one made once more at the round's end. The machine is
//! reached through `machine::Machine` and every point through `engine::PointRunner`, so the
//! unit tests run the studies with doubles of both (`scripted`) and measure nothing.
pub(crate) mod folder;
pub(crate) mod kind;
pub(crate) mod machine;
pub(crate) mod rounds;
pub mod scripted;

use crate::config::watch::Watch;
use crate::error::{Error, Status};
use crate::report::folder::{Marker, StudyOutput, PROBE_JSON, RESULTS_CSV};
use folder::StudyFolder;
pub use kind::{StudyDescriptor, StudyKind};
use machine::Machine;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A study as the driver runs it.
pub trait Study {
    /// The results folder it writes.
    type Folder: StudyFolder;
    /// One point's record, as the stream's point line carries it.
    type Point: serde::Serialize;

    /// Which study this is (its descriptor, in its folder): the marker's kind and the
    /// stream's command.
    fn kind(&self) -> StudyKind;

    /// What the marker records of it: its spec, how many points (or runs) it plans, its order.
    fn plan(&self) -> Plan;

    /// What its folder holds beyond the marker.
    fn layout(&self) -> <Self::Folder as StudyFolder>::Layout;

    /// What it watches of the machine: probe.json, the settle, the CPUs of both and of its
    /// canaries.
    fn watching(&self) -> Watching<'_>;

    /// Before the first round, with what a resumed folder held: its set-up and opening lines.
    fn begin(
        &mut self,
        run: &mut Underway<'_, Self::Folder>,
        prior: <Self::Folder as StudyFolder>::Prior,
    ) -> Result<(), Error>;

    /// Its rounds of visits (or transfers, or runs), each record saved through `run` as it
    /// ends; whether Ctrl-C ended them.
    fn measure(&mut self, run: &mut Underway<'_, Self::Folder>) -> Result<Ending, Error>;

    /// Every point's record once the rounds have ended, each saved where the study keeps its
    /// points; the driver publishes them.
    fn points(
        &mut self,
        run: &mut Underway<'_, Self::Folder>,
        ending: Ending,
    ) -> Result<Vec<Self::Point>, Error>;

    /// The line a published point prints (`None`: the study prints none).
    fn point_line(&self, _point: &Self::Point, _index: usize, _of: usize) -> Option<String> {
        None
    }

    /// What the study prints once its points are published (a table, its `--json`).
    fn show(&self, _run: &Underway<'_, Self::Folder>, _points: &[Self::Point]) {}

    /// Renders a folder of this study (what `bytepath report DIR` does); the HTML path.
    fn render(dir: &Path, options: &ReportOptions) -> Result<PathBuf, Error>
    where
        Self: Sized;

    /// The report at the study's end: its folder's, by default.
    fn report(&self, dir: &Path) -> Result<PathBuf, Error>
    where
        Self: Sized,
    {
        Self::render(dir, &ReportOptions::default())
    }

    /// Whether the study failed (a point or visit that failed, a verify mismatch), and what
    /// it says then.
    fn outcome(
        &self,
        run: &Underway<'_, Self::Folder>,
        points: &[Self::Point],
    ) -> Result<Outcome, Error>;

    /// After Ctrl-C: how to make what is missing (`--resume`), where the study can.
    fn resume_hint(&self, _dir: &Path) -> Option<String> {
        None
    }
}

/// What a study's marker records of it.
pub struct Plan {
    /// The marker's `spec` block.
    pub spec: serde_json::Value,
    /// Points (or runs, or transfers) it plans.
    pub points: usize,
    /// How its visits are ordered, in words.
    pub order: &'static str,
}

/// What a study watches of the machine.
#[derive(Default)]
pub struct Watching<'a> {
    /// Whether it measures the machine's limits into probe.json before the first round.
    pub probe: bool,
    /// `--settle`: how, and on which CPUs (none: the study starts at once).
    pub settle: Option<(&'a Watch, Vec<usize>)>,
    /// The CPUs this process may use: the probe and the canaries (`Underway::canary`) run on them.
    pub cpus: Vec<usize>,
}

/// How a study's rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Completed,
    Interrupted,
}

/// Whether a study that was not interrupted failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// Something failed; `said`, where given, is the line on stderr that says what.
    Failed {
        said: Option<String>,
    },
}

/// What `bytepath report DIR` asks of a folder's report.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// `--output`: where report.html goes instead of the folder (run-record folders only).
    pub output: Option<PathBuf>,
    /// `--margin` (a share): replaces the equivalence margin the study recorded.
    pub margin: Option<f64>,
}

impl ReportOptions {
    /// Refuses `--output` for a study that renders its own folder: its report is written
    /// into the folder itself.
    pub fn folder_only(&self, kind: StudyKind) -> Result<(), Error> {
        match self.output {
            Some(_) => Err(crate::error::bad(format!(
                "--output: a {} folder's report is written into the folder itself; leave --output out",
                kind.name()
            ))),
            None => Ok(()),
        }
    }

    /// Refuses `--margin` for a study whose report cannot yet be judged at another margin
    /// than the one it recorded: ignoring it would re-judge nothing and say nothing.
    pub fn recorded_margin_only(&self, kind: StudyKind) -> Result<(), Error> {
        match self.margin {
            Some(m) => Err(crate::error::bad(format!(
                "--margin {}: a {} folder's report is judged at the margin its study recorded; allowed: leave --margin out",
                crate::stats::verdict::percent(m),
                kind.name()
            ))),
            None => Ok(()),
        }
    }
}

/// A study under way, as the driver hands it to the study: its folder, the command line's
/// output settings, Ctrl-C, and the machine.
pub struct Underway<'a, F> {
    pub folder: F,
    pub output: &'a StudyOutput,
    pub interrupt: &'a AtomicBool,
    pub machine: &'a dyn Machine,
    canary_cpus: Vec<usize>,
}

impl<F: StudyFolder> Underway<'_, F> {
    pub fn dir(&self) -> &Path {
        self.folder.dir()
    }

    /// Ctrl-C asked the study to stop.
    pub fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::SeqCst)
    }

    /// The canary at the start of round `round`, on the study's canary CPUs.
    pub fn canary(&self, round: usize) -> Result<(), Error> {
        self.machine.canary(self.dir(), round, &self.canary_cpus)
    }
}

/// Runs `study` on this machine into the folder `output` names; the status the command ends
/// with.
pub fn drive<S: Study>(
    study: &mut S,
    output: &StudyOutput,
    interrupt: &AtomicBool,
) -> Result<Status, Error> {
    drive_on(study, output, interrupt, &machine::ThisMachine)
}

/// As `drive`, on `machine`.
pub fn drive_on<S: Study>(
    study: &mut S,
    output: &StudyOutput,
    interrupt: &AtomicBool,
    machine: &dyn Machine,
) -> Result<Status, Error> {
    let kind = study.kind();
    let plan = study.plan();
    let marker = Marker::new(
        kind.marker(),
        plan.spec,
        output.arguments.clone(),
        plan.points,
        plan.order,
    );
    let (folder, prior) = S::Folder::open(output, &marker.to_value(), study.layout())?;
    output
        .stream
        .start_study(kind.command(), &marker, folder.dir());
    let mut run = Underway {
        canary_cpus: study.watching().cpus,
        folder,
        output,
        interrupt,
        machine,
    };
    study.begin(&mut run, prior)?;
    watch_before_first_round(study, &run)?;
    let started = Instant::now();
    let ending = study.measure(&mut run)?;
    if let Some(visits) = run.folder.visits_file() {
        let wall_s = started.elapsed().as_secs_f64();
        println!(
            "{}",
            crate::probe::watch::summary_line(run.dir(), visits, wall_s)
        );
    }
    let points = study.points(&mut run, ending)?;
    publish(study, &run, &points);
    study.show(&run, &points);
    write_report(study, &run);
    ending_status(study, &run, ending, &points)
}

/// probe.json and the settle, as the study asks.
fn watch_before_first_round<S: Study>(
    study: &S,
    run: &Underway<'_, S::Folder>,
) -> Result<(), Error> {
    let watching = study.watching();
    if watching.probe {
        let path = run.dir().join(PROBE_JSON);
        if run.machine.probe(&path, &watching.cpus)? {
            println!("probe: machine limits measured into {}", path.display());
        }
    }
    if let Some((watch, cpus)) = watching.settle {
        run.machine
            .settle(watch, &cpus, run.interrupt, run.output.json);
    }
    Ok(())
}

/// Every point on the stream, and its line where the study prints one.
fn publish<S: Study>(study: &S, run: &Underway<'_, S::Folder>, points: &[S::Point]) {
    for (index, point) in points.iter().enumerate() {
        let value = serde_json::to_value(point).expect("a record serializes");
        run.output.stream.point(&value);
        if let Some(line) = study.point_line(point, index, points.len()) {
            println!("{line}");
        }
    }
}

/// Where the results are and the report, unless stdout carries JSON; a report that cannot be
/// written says so and keeps the results.
fn write_report<S: Study>(study: &S, run: &Underway<'_, S::Folder>) {
    let dir = run.dir();
    let json = run.output.json;
    if !json {
        println!("results: {}", dir.join(RESULTS_CSV).display());
    }
    match study.report(dir) {
        Ok(html) if !json => println!("report: {}", html.display()),
        Ok(_) => {}
        Err(e) => eprintln!(
            "bytepath: the report was not written ({e}); the results are kept in {}; render it again with `bytepath report {}`",
            dir.display(),
            dir.display()
        ),
    }
}

/// Interrupted (and how to go on), failed (and what), or success.
fn ending_status<S: Study>(
    study: &S,
    run: &Underway<'_, S::Folder>,
    ending: Ending,
    points: &[S::Point],
) -> Result<Status, Error> {
    if ending == Ending::Interrupted {
        if let Some(hint) = study.resume_hint(run.dir()) {
            println!("{hint}");
        }
        return Ok(Status::Interrupted);
    }
    match study.outcome(run, points)? {
        Outcome::Passed => Ok(Status::Success),
        Outcome::Failed { said } => {
            if let Some(line) = said {
                eprintln!("bytepath: {line}");
            }
            Ok(Status::Failed)
        }
    }
}

#[cfg(test)]
mod tests;
