//! The ipc study, from its command line, through the study driver with scripted figures and a
//! scripted machine: its rounds, the disturbed visit made again in place, the failure status
//! and the fastest transport, without measuring anything.
use crate::config::RunSpec;
use crate::error::Status;
use crate::ipc::Ipc;
use crate::ipc::IpcSpec;
use crate::record::RunRecord;
use crate::report::folder::StudyOutput;
use crate::study::scripted::{Figure, ScriptedMachine, ScriptedRunner};
use crate::transport::Transport;
use clap::Parser;
use serde::Deserialize;
use std::path::Path;
use std::sync::atomic::AtomicBool;

static QUIET: AtomicBool = AtomicBool::new(false);

fn spec(flags: &[&str]) -> IpcSpec {
    let line = [&["bytepath", "ipc", "--seed", "3"][..], flags].concat();
    let crate::cli::Command::Ipc(args) = crate::cli::Cli::parse_from(line).command else {
        unreachable!("an ipc command line")
    };
    super::ipc_spec(&args, &[0, 1]).unwrap()
}

fn ipc(spec: &IpcSpec, runner: &ScriptedRunner, machine: &ScriptedMachine, dir: &Path) -> Status {
    let output = StudyOutput {
        out: Some(dir.to_path_buf()),
        ..StudyOutput::default()
    };
    crate::study::drive_on(&mut Ipc::new(spec, runner), &output, &QUIET, machine).unwrap()
}

/// Each visit's relative wobble, in hundredths: every point walks it from a start of its own.
const WOBBLE: [f64; 5] = [1.0, -1.0, 0.5, -0.5, 0.0];

/// unix 20 % faster than pipe at every size, each point's visits within ±1 %: the transport
/// and the size set where a point starts in `WOBBLE`, so the two transports of a round move
/// differently and a pair's per-round ratio varies (a constant ratio has no standard error
/// and gets no verdict).
fn unix_faster() -> ScriptedRunner {
    ScriptedRunner::new(|spec: &RunSpec, n| {
        let unix = spec.transport == Transport::Unix;
        let base = if unix { 12_000.0 } else { 10_000.0 };
        let start = usize::from(unix) * 2 + usize::from(spec.message_size > 64);
        Figure::Measured {
            headline: base * (1.0 + 0.01 * WOBBLE[(n + start) % WOBBLE.len()]),
            cpu_ns_per_byte: 1.0,
        }
    })
}

fn visits(dir: &Path) -> Vec<RunRecord> {
    crate::probe::watch::jsonl(&dir.join("visits.jsonl"))
}

#[derive(Deserialize)]
struct AnswerLine {
    question: String,
    verdict: Option<String>,
}

#[test]
fn each_round_visits_every_point_and_the_faster_transport_is_the_fastest() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("ipc");
    let spec = spec(&[
        "--transports",
        "pipe,unix",
        "--sizes",
        "64,4K",
        "--measure",
        "latency",
        "--visits",
        "5",
    ]);
    let (runner, machine) = (unix_faster(), ScriptedMachine::new(|_| 0.1));
    assert_eq!(ipc(&spec, &runner, &machine, &dir), Status::Success);
    assert_eq!(runner.runs().len(), 4 * 5, "4 points × 5 visits");
    assert_eq!(*machine.canaries.borrow(), [0, 1, 2, 3, 4]);
    let made = visits(&dir);
    for round in 0..5 {
        let sizes: Vec<usize> = made
            .iter()
            .filter(|r| r.visit.as_ref().unwrap().round == round)
            .map(|r| r.config.message_size_bytes)
            .collect();
        assert_eq!(sizes.len(), 4);
        assert_eq!(
            (sizes[0], sizes[2]),
            (sizes[1], sizes[3]),
            "a size's transports back to back"
        );
    }
    let points: Vec<RunRecord> = crate::report::study::records(&dir).unwrap();
    assert_eq!(points.len(), 4);
    assert!(points
        .iter()
        .all(|p| p.statistics.visits.as_ref().map(|v| v.count) == Some(5)));
    let answers: Vec<AnswerLine> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("answers.json")).unwrap()).unwrap();
    let fastest = answers
        .iter()
        .find(|a| a.question.to_lowercase().contains("fastest"))
        .and_then(|a| a.verdict.clone())
        .unwrap();
    assert_eq!(fastest, "fastest: 64 B unix, 4 KiB unix");
}

#[test]
fn a_disturbed_visit_is_made_again_and_its_redo_counts_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("ipc");
    let spec = spec(&[
        "--transports",
        "pipe,unix",
        "--sizes",
        "64",
        "--measure",
        "latency",
        "--visits",
        "3",
    ]);
    let runner = unix_faster();
    let mut machine = ScriptedMachine::new(|_| 0.1);
    machine.disturbed = vec![1];
    assert_eq!(ipc(&spec, &runner, &machine, &dir), Status::Success);
    assert_eq!(runner.runs().len(), 2 * 3 + 1);
    let made = visits(&dir);
    assert_eq!(
        made.len(),
        7,
        "both the disturbed visit and its redo are kept"
    );
    let points: Vec<RunRecord> = crate::report::study::records(&dir).unwrap();
    let counts: Vec<Option<usize>> = points
        .iter()
        .map(|p| p.statistics.visits.as_ref().map(|v| v.count))
        .collect();
    assert_eq!(
        counts,
        [Some(3), Some(3)],
        "the redo replaces the disturbed visit"
    );
}

#[test]
fn a_failed_visit_fails_the_study_and_its_point_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("ipc");
    let spec = spec(&[
        "--transports",
        "pipe,unix",
        "--sizes",
        "64",
        "--measure",
        "latency",
        "--visits",
        "2",
    ]);
    let runner = ScriptedRunner::new(|spec: &RunSpec, _| match spec.transport {
        Transport::Pipe => Figure::Failed("the pipe broke".into()),
        _ => Figure::Measured {
            headline: 10_000.0,
            cpu_ns_per_byte: 1.0,
        },
    });
    let machine = ScriptedMachine::new(|_| 0.1);
    assert_eq!(ipc(&spec, &runner, &machine, &dir), Status::Failed);
    assert_eq!(runner.runs().len(), 4, "ipc makes a failed visit once");
    let points: Vec<RunRecord> = crate::report::study::records(&dir).unwrap();
    let pipe = points
        .iter()
        .find(|p| p.config.transport == "pipe")
        .unwrap();
    assert_eq!(pipe.status, "failed");
    assert!(
        pipe.errors.iter().any(|e| e.contains("the pipe broke")),
        "{:?}",
        pipe.errors
    );
}
