//! The driver around a study that measures nothing: what it writes and streams, what it asks
//! of the machine, and the status it ends with.
use super::folder::Records;
use super::scripted::ScriptedMachine;
use super::*;
use crate::report::folder::{Prior, ResultsFolder, Saved, StreamAs, MARKER};
use crate::report::stream::JsonStream;
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// The test's study as the commands that read folders would know it.
static DESCRIPTOR: StudyDescriptor = StudyDescriptor {
    marker: "bytepath counting results",
    name: "counting study",
    command: "counting",
    render: Counting::render,
    csv_columns: Vec::new,
    samples: |_, _| Ok(Vec::new()),
};

const COUNTING: StudyKind = StudyKind::new(&DESCRIPTOR);

/// A study of `rounds` rounds of one record each, whose last `failing` records fail.
struct Counting {
    rounds: usize,
    failing: usize,
    /// What `begin` was handed: whether the folder was resumed, and the records it kept.
    resumed: Option<(bool, usize)>,
    made: Vec<Value>,
}

impl Study for Counting {
    type Folder = ResultsFolder;
    type Point = Value;

    fn kind(&self) -> StudyKind {
        COUNTING
    }

    fn plan(&self) -> Plan {
        Plan {
            spec: json!({"rounds": self.rounds}),
            points: self.rounds,
            order: "one record a round",
        }
    }

    fn layout(&self) -> Records {
        Records {
            columns: Vec::new(),
            stream_as: StreamAs::Visits,
        }
    }

    fn watching(&self) -> Watching<'_> {
        Watching {
            probe: true,
            cpus: vec![0],
            ..Watching::default()
        }
    }

    fn begin(&mut self, _: &mut Underway<'_, ResultsFolder>, prior: Prior) -> Result<(), Error> {
        self.resumed = Some((prior.resumed, prior.done.len()));
        Ok(())
    }

    fn measure(&mut self, run: &mut Underway<'_, ResultsFolder>) -> Result<Ending, Error> {
        for round in 0..self.rounds {
            if run.interrupted() {
                return Ok(Ending::Interrupted);
            }
            run.canary(round)?;
            let failed = round + self.failing >= self.rounds;
            let record = json!({
                "schema_version": 2,
                "sweep_point": {"key": format!("r{round}")},
                "status": if failed { "failed" } else { "completed" },
            });
            run.folder.append(&Saved::from_value(record.clone()))?;
            self.made.push(record);
        }
        Ok(Ending::Completed)
    }

    fn points(
        &mut self,
        _: &mut Underway<'_, ResultsFolder>,
        _: Ending,
    ) -> Result<Vec<Value>, Error> {
        Ok(vec![json!({"status": "completed", "point": "all"})])
    }

    fn render(dir: &Path, _: &ReportOptions) -> Result<PathBuf, Error> {
        let html = dir.join("report.html");
        std::fs::write(&html, "<p>counted</p>")
            .map_err(crate::report::folder::file_error(&html))?;
        Ok(html)
    }

    fn outcome(&self, _: &Underway<'_, ResultsFolder>, _: &[Value]) -> Result<Outcome, Error> {
        Ok(match self.failing {
            0 => Outcome::Passed,
            n => Outcome::Failed {
                said: Some(format!("{n} failed")),
            },
        })
    }
}

fn counting(rounds: usize, failing: usize) -> Counting {
    Counting {
        rounds,
        failing,
        resumed: None,
        made: Vec::new(),
    }
}

/// A writer the test reads back after the stream wrote into it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    command: Option<String>,
}

fn output(dir: &Path, resume: bool, stream: JsonStream) -> StudyOutput {
    StudyOutput {
        out: Some(dir.to_path_buf()),
        resume,
        arguments: json!({"rounds": "3"}),
        json: false,
        stream,
    }
}

#[test]
fn the_driver_writes_the_marker_streams_each_record_and_point_and_asks_the_machine_once() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("study");
    let buf = Shared::default();
    let stream = JsonStream::to_writer(Box::new(buf.clone()));
    let machine = ScriptedMachine::new(|_| 0.0);
    let quiet = AtomicBool::new(false);
    let mut study = counting(3, 0);
    let status = drive_on(
        &mut study,
        &output(&dir, false, stream.clone()),
        &quiet,
        &machine,
    );
    stream.end(0, None);
    assert_eq!(status.unwrap(), Status::Success);
    assert_eq!(study.resumed, Some((false, 0)));
    assert_eq!(*machine.canaries.borrow(), [0, 1, 2]);
    assert_eq!((machine.probes.get(), machine.settles.get()), (1, 0));
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<Line> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l.kind.as_str()).collect();
    assert_eq!(kinds, ["start", "visit", "visit", "visit", "point", "end"]);
    assert_eq!(lines[0].command.as_deref(), Some("counting"));
    #[derive(Deserialize)]
    struct Written {
        kind: String,
        points: usize,
        spec: Value,
    }
    let marker: Written =
        serde_json::from_str(&std::fs::read_to_string(dir.join(MARKER)).unwrap()).unwrap();
    assert_eq!(marker.kind, "bytepath counting results");
    assert_eq!((marker.points, marker.spec), (3, json!({"rounds": 3})));
    assert!(dir.join("report.html").is_file());
}

#[test]
fn a_failure_fails_the_study_and_resume_hands_the_study_what_the_folder_kept() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("study");
    let machine = ScriptedMachine::new(|_| 0.0);
    let quiet = AtomicBool::new(false);
    let failing = drive_on(
        &mut counting(3, 1),
        &output(&dir, false, JsonStream::default()),
        &quiet,
        &machine,
    );
    assert_eq!(failing.unwrap(), Status::Failed);
    let mut again = counting(3, 0);
    let resumed = drive_on(
        &mut again,
        &output(&dir, true, JsonStream::default()),
        &quiet,
        &machine,
    );
    assert_eq!(resumed.unwrap(), Status::Success);
    assert_eq!(
        again.resumed,
        Some((true, 2)),
        "the failed record is measured again"
    );
    let mut other = counting(4, 0);
    let refused = drive_on(
        &mut other,
        &output(&dir, true, JsonStream::default()),
        &quiet,
        &machine,
    );
    assert!(
        matches!(refused, Err(Error::Config(_))),
        "other settings: {refused:?}"
    );
}

#[test]
fn ctrl_c_ends_the_study_interrupted_whatever_failed() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("study");
    let machine = ScriptedMachine::new(|_| 0.0);
    let pressed = AtomicBool::new(true);
    let mut study = counting(3, 3);
    let status = drive_on(
        &mut study,
        &output(&dir, false, JsonStream::default()),
        &pressed,
        &machine,
    );
    assert_eq!(status.unwrap(), Status::Interrupted);
    assert!(study.made.is_empty());
}
