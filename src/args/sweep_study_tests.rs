//! The sweep, from its command line, through the study driver with scripted figures and a
//! scripted machine: the visit schedule, the budget and the adaptive rounds, `--resume`, the
//! disturbed visit made again and the answers, all without measuring anything. They sit with
//! the flags (layer 10) because they build their specs from a command line, as a user would.
use crate::config::RunSpec;
use crate::error::Status;
use crate::record::{RunRecord, VisitKind};
use crate::report::folder::StudyOutput;
use crate::study::scripted::{Figure, ScriptedMachine, ScriptedRunner};
use crate::sweep::spec::SweepSpec;
use crate::sweep::Sweep;
use clap::Parser;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// A sweep of stream points at one thread, no counter visit, seed 7, with `flags`.
fn spec(flags: &[&str]) -> SweepSpec {
    let line = [
        &["bytepath", "sweep", "--counters", "none", "--seed", "7"][..],
        &["--threads", "1", "--patterns", "stream"],
        flags,
    ]
    .concat();
    let crate::cli::Command::Sweep(args) = crate::cli::Cli::parse_from(line).command else {
        unreachable!("a sweep's command line")
    };
    super::sweep_spec(&args, &[0, 1]).unwrap()
}

/// Each mechanism's headline figure (Gbit/s) at a size, by how many visits of its point came
/// before in this runner.
fn script(figure: impl Fn(&str, usize, usize) -> f64 + 'static) -> ScriptedRunner {
    ScriptedRunner::new(move |spec: &RunSpec, before| Figure::Measured {
        headline: figure(spec.mechanism.name(), spec.message_size, before),
        cpu_ns_per_byte: 0.5,
    })
}

/// ±`share` in turn: +, −, +, − … so that a point's visits spread without drifting.
fn wobble(share: f64, n: usize) -> f64 {
    if n % 2 == 0 {
        1.0 + share
    } else {
        1.0 - share
    }
}

fn sweep(
    spec: &SweepSpec,
    runner: &ScriptedRunner,
    machine: &ScriptedMachine,
    dir: &Path,
    (resume, interrupt): (bool, &AtomicBool),
) -> Status {
    let output = StudyOutput {
        out: Some(dir.to_path_buf()),
        resume,
        ..StudyOutput::default()
    };
    let mut study = Sweep::new(spec, runner);
    crate::study::drive_on(&mut study, &output, interrupt, machine).unwrap()
}

fn visits(dir: &Path) -> Vec<RunRecord> {
    std::fs::read_to_string(dir.join("visits.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Headline visits per point key, of the visits in `records`.
fn per_point(records: &[RunRecord]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for v in records.iter().filter_map(|r| r.visit.as_ref()) {
        if v.kind == VisitKind::Headline {
            *out.entry(v.key.clone()).or_default() += 1;
        }
    }
    out
}

fn points(dir: &Path) -> Vec<RunRecord> {
    crate::report::study::records(dir).unwrap()
}

#[derive(Debug, Deserialize, PartialEq)]
struct RoundsFile {
    adaptive: bool,
    groups: Vec<GroupLine>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct GroupLine {
    size_bytes: usize,
    rounds_made: usize,
    #[serde(default)]
    planned_rounds: Option<usize>,
    #[serde(default)]
    why: Option<String>,
    #[serde(default)]
    stop: Option<String>,
}

fn rounds_file(dir: &Path) -> RoundsFile {
    serde_json::from_str(&std::fs::read_to_string(dir.join("rounds.json")).unwrap()).unwrap()
}

fn group(rounds: &RoundsFile, size: usize) -> &GroupLine {
    rounds.groups.iter().find(|g| g.size_bytes == size).unwrap()
}

static QUIET: AtomicBool = AtomicBool::new(false);

#[test]
fn every_round_visits_each_point_once_groups_back_to_back_each_other_round_reversed() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("sweep");
    // A budget the pilot spends: exactly the minimum rounds.
    let spec = spec(&[
        "--mechanisms",
        "copy,gather,send",
        "--sizes",
        "4K,64K",
        "--min-visits",
        "4",
        "--budget",
        "1s",
    ]);
    let runner = script(|_, _, _| 10.0);
    let machine = ScriptedMachine::new(|_| 1.0);
    let status = sweep(&spec, &runner, &machine, &dir, (false, &QUIET));
    assert_eq!(status, Status::Success);
    assert_eq!(runner.runs().len(), 24, "6 points × 4 rounds");
    let made = visits(&dir);
    assert!(per_point(&made).values().all(|&n| n == 4), "{made:?}");
    assert_eq!(
        *machine.canaries.borrow(),
        [0, 1, 2, 3],
        "a canary per round"
    );
    assert_eq!((machine.probes.get(), machine.settles.get()), (1, 1));
    // Each round: every point once, the three mechanisms of a size back to back.
    for round in 0..4 {
        let of_round: Vec<&RunRecord> = made
            .iter()
            .filter(|r| r.visit.as_ref().unwrap().round == round)
            .collect();
        assert_eq!(of_round.len(), 6);
        let sizes: Vec<usize> = of_round
            .iter()
            .map(|r| r.config.message_size_bytes)
            .collect();
        assert!(sizes[..3].iter().all(|&s| s == sizes[0]), "{sizes:?}");
        assert!(sizes[3..].iter().all(|&s| s == sizes[3]), "{sizes:?}");
    }
    // Within a size, round 1 reverses round 0's order and round 3 round 2's.
    let order = |round: usize, size: usize| -> Vec<String> {
        made.iter()
            .filter(|r| r.config.message_size_bytes == size)
            .filter(|r| r.visit.as_ref().unwrap().round == round)
            .map(|r| r.config.mechanism.name().to_string())
            .collect()
    };
    for size in [4096, 65536] {
        let mut reversed = order(0, size);
        reversed.reverse();
        assert_eq!(order(1, size), reversed, "size {size}");
        let mut reversed = order(2, size);
        reversed.reverse();
        assert_eq!(order(3, size), reversed, "size {size}");
    }
    let rounds = rounds_file(&dir);
    assert!(!rounds.adaptive, "the pilot spent the budget: {rounds:?}");
    assert_eq!(points(&dir).len(), 6);
}

/// gather beats copy by 20 % at 4 KiB, plainly; at 64 KiB the two swap by ±10 % from round to
/// round, so the pilot leaves that cell undecided.
fn one_decided_one_undecided() -> ScriptedRunner {
    script(|mechanism, size, n| match (mechanism, size) {
        ("gather", 4096) => 12.0 * wobble(0.01, n),
        ("gather", _) => 10.0 * wobble(0.1, n),
        _ => 10.0,
    })
}

fn adaptive_spec() -> SweepSpec {
    spec(&[
        "--mechanisms",
        "copy,gather",
        "--sizes",
        "4K,64K",
        "--min-visits",
        "4",
        "--budget",
        "6s",
    ])
}

#[test]
fn the_rounds_the_budget_leaves_go_to_the_undecided_group_alone() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("sweep");
    let runner = one_decided_one_undecided();
    // 4 points × 6 s: 24 s; the pilot's 16 visits of 1 s leave 8 s, 4 rounds of a 2-point
    // group.
    let machine = ScriptedMachine::new(|_| 1.0);
    let status = sweep(&adaptive_spec(), &runner, &machine, &dir, (false, &QUIET));
    assert_eq!(status, Status::Success);
    let rounds = rounds_file(&dir);
    assert!(rounds.adaptive);
    // Each question's pooled ρ of rounds, at the pilot's look and over every round.
    let text = std::fs::read_to_string(dir.join("rounds.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let rho = &doc["rho"][0];
    assert_eq!(rho["question"], "gather vs copy", "{rho}");
    assert_eq!(
        (
            rho["pilot"]["cells"].as_u64(),
            rho["last"]["cells"].as_u64()
        ),
        (Some(2), Some(2)),
        "{rho}"
    );
    assert_eq!(rho["pilot"]["rounds"].as_f64(), Some(4.0), "{rho}");
    assert!(rho["last"]["rounds"].as_f64().unwrap() > 4.0, "{rho}");
    let decided = group(&rounds, 4096);
    assert_eq!(decided.why.as_deref(), Some("decided_at_pilot"));
    assert_eq!((decided.planned_rounds, decided.rounds_made), (Some(4), 4));
    let undecided = group(&rounds, 65536);
    assert_eq!(undecided.why.as_deref(), Some("undecided"));
    assert_eq!(
        (undecided.planned_rounds, undecided.rounds_made),
        (Some(8), 8)
    );
    assert_eq!(undecided.stop.as_deref(), Some("planned_rounds_made"));
    let made = per_point(&visits(&dir));
    assert_eq!(made["copy/stream/4096/1"], 4);
    assert_eq!(made["gather/stream/4096/1"], 4);
    assert_eq!(made["copy/stream/65536/1"], 8);
    assert_eq!(made["gather/stream/65536/1"], 8);
    assert_eq!(runner.runs().len(), 24);
}

#[test]
fn a_budget_spent_faster_than_planned_ends_the_group_short() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("sweep");
    let runner = one_decided_one_undecided();
    // The adaptive visits take twice the pilot's: 8 s left buy 2 rounds, not the 4 planned.
    let machine = ScriptedMachine::new(|n| if n < 16 { 1.0 } else { 2.0 });
    let status = sweep(&adaptive_spec(), &runner, &machine, &dir, (false, &QUIET));
    assert_eq!(status, Status::Success);
    let undecided = rounds_file(&dir);
    let undecided = group(&undecided, 65536);
    assert_eq!(
        (undecided.planned_rounds, undecided.rounds_made),
        (Some(8), 6)
    );
    assert_eq!(undecided.stop.as_deref(), Some("budget_spent"));
    assert_eq!(per_point(&visits(&dir))["gather/stream/65536/1"], 6);
    // Only the point that swings stays short of --ci; the budget ended its visits.
    let stops: BTreeMap<String, String> = points(&dir)
        .into_iter()
        .map(|p| (p.sweep_point.unwrap().key, p.statistics.stop_reason))
        .collect();
    assert_eq!(stops["gather/stream/65536/1"], "budget_spent");
    assert_eq!(stops["copy/stream/65536/1"], "ci_target_met");
}

#[test]
fn resume_remakes_only_what_was_not_kept_with_a_partly_made_group_whole() {
    static STOP: AtomicBool = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("sweep");
    let spec = spec(&[
        "--mechanisms",
        "copy,gather",
        "--sizes",
        "4K,64K",
        "--min-visits",
        "4",
        "--budget",
        "1s",
    ]);
    // Ctrl-C during the third visit: round 0's first group made, its second group half.
    let first = script(|_, _, _| 10.0).interrupting(3, &STOP);
    let machine = ScriptedMachine::new(|_| 1.0);
    let status = sweep(&spec, &first, &machine, &dir, (false, &STOP));
    assert_eq!(status, Status::Interrupted);
    assert_eq!(visits(&dir).len(), 3);
    let second = script(|_, _, _| 10.0);
    let status = sweep(&spec, &second, &machine, &dir, (true, &QUIET));
    assert_eq!(status, Status::Success);
    // 16 visits in all; the 2 of the first group are kept, the half-made group is made again
    // whole: 14.
    assert_eq!(second.runs().len(), 14);
    let all = visits(&dir);
    assert_eq!(all.len(), 3 + 14);
    let records = points(&dir);
    assert_eq!(records.len(), 4);
    for r in &records {
        let counted = r.statistics.visits.as_ref().map(|v| v.count);
        assert_eq!(counted, Some(4), "{:?}", r.sweep_point);
    }
    let remade = records
        .iter()
        .filter(|r| {
            r.notes
                .iter()
                .any(|n| n.contains("made again with its whole group"))
        })
        .count();
    assert_eq!(remade, 1, "the one visit made twice says so");
}

#[test]
fn a_sweep_interrupted_in_its_adaptive_rounds_resumes_to_the_same_plan() {
    static STOP: AtomicBool = AtomicBool::new(false);
    let root = tempfile::tempdir().unwrap();
    let (whole, parts) = (root.path().join("whole"), root.path().join("parts"));
    let machine = ScriptedMachine::new(|_| 1.0);
    let uninterrupted = one_decided_one_undecided();
    sweep(
        &adaptive_spec(),
        &uninterrupted,
        &machine,
        &whole,
        (false, &QUIET),
    );
    // Ctrl-C once the pilot (16) and the first adaptive round (2) are made.
    let first = one_decided_one_undecided().interrupting(18, &STOP);
    let status = sweep(&adaptive_spec(), &first, &machine, &parts, (false, &STOP));
    assert_eq!(status, Status::Interrupted);
    assert_eq!(visits(&parts).len(), 18);
    let second = one_decided_one_undecided();
    let status = sweep(&adaptive_spec(), &second, &machine, &parts, (true, &QUIET));
    assert_eq!(status, Status::Success);
    assert_eq!(rounds_file(&parts), rounds_file(&whole));
    assert_eq!(second.runs().len(), uninterrupted.runs().len() - 18);
    assert_eq!(per_point(&visits(&parts)), per_point(&visits(&whole)));
}

#[test]
fn a_disturbed_visit_is_made_once_more_at_its_rounds_end_and_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("sweep");
    let spec = spec(&[
        "--mechanisms",
        "copy,gather",
        "--sizes",
        "4K",
        "--min-visits",
        "2",
        "--budget",
        "1s",
    ]);
    let runner = script(|_, _, _| 10.0);
    let mut machine = ScriptedMachine::new(|_| 1.0);
    machine.disturbed = vec![0];
    sweep(&spec, &runner, &machine, &dir, (false, &QUIET));
    let made = visits(&dir);
    assert_eq!(made.len(), 5, "4 visits and the disturbed one again");
    assert_eq!(machine.visits(), 5);
    let first = made[0].visit.as_ref().unwrap();
    let again = made[2].visit.as_ref().unwrap();
    assert_eq!((again.key.as_str(), again.round), (first.key.as_str(), 0));
    assert!(first.disturbed() && !again.disturbed());
    let records = points(&dir);
    let redone = records
        .iter()
        .find(|r| r.sweep_point.as_ref().unwrap().key == first.key)
        .unwrap();
    assert_eq!(redone.statistics.visits.as_ref().map(|v| v.count), Some(2));
    assert!(
        redone.notes.iter().any(|n| n.contains("was disturbed")),
        "{:?}",
        redone.notes
    );
}

/// What answers.json says of each cell of a question.
#[derive(Deserialize)]
struct AnswerLine {
    question: String,
    #[serde(default)]
    cells: Vec<CellLine>,
}

#[derive(Deserialize)]
struct CellLine {
    state: String,
}

fn cell_states(dir: &Path, challenger: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("answers.json")).unwrap();
    let answers: Vec<AnswerLine> = serde_json::from_str(&text).unwrap();
    let asked = format!("does {challenger}");
    let answer = answers
        .into_iter()
        .find(|a| a.question.contains(&asked))
        .unwrap();
    answer.cells.into_iter().map(|c| c.state).collect()
}

#[test]
fn a_mechanism_scripted_20_percent_faster_beats_and_an_equal_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("sweep");
    let spec = spec(&[
        "--mechanisms",
        "copy,gather,zerocopy",
        "--sizes",
        "4K",
        "--min-visits",
        "8",
        "--budget",
        "1s",
    ]);
    // Eight rounds: "equivalent" needs 8 (`interval::MIN_EQUIVALENCE_PAIRS`).
    let runner = script(|mechanism, _, n| match mechanism {
        "gather" => 12.0 * wobble(0.01, n),
        "zerocopy" => 10.0 * wobble(0.01, n + 1),
        _ => 10.0,
    });
    let machine = ScriptedMachine::new(|_| 1.0);
    assert_eq!(
        sweep(&spec, &runner, &machine, &dir, (false, &QUIET)),
        Status::Success
    );
    assert_eq!(cell_states(&dir, "gather"), ["beats"]);
    assert_eq!(cell_states(&dir, "zerocopy"), ["equivalent"]);
}

#[test]
fn a_point_that_fails_both_tries_fails_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("sweep");
    let spec = spec(&[
        "--mechanisms",
        "copy,gather",
        "--sizes",
        "4K",
        "--min-visits",
        "2",
        "--budget",
        "1s",
    ]);
    let runner = ScriptedRunner::new(|spec: &RunSpec, _| match spec.mechanism.name() {
        "gather" => Figure::Failed("starved".into()),
        _ => Figure::Measured {
            headline: 10.0,
            cpu_ns_per_byte: 0.5,
        },
    });
    let machine = ScriptedMachine::new(|_| 1.0);
    let status = sweep(&spec, &runner, &machine, &dir, (false, &QUIET));
    assert_eq!(status, Status::Failed);
    // Each failed visit is tried once more at once: 2 rounds × (1 + 2).
    assert_eq!(runner.runs().len(), 6);
    let failed: Vec<String> = points(&dir)
        .into_iter()
        .filter(|r| r.status == "failed")
        .map(|r| r.sweep_point.unwrap().key)
        .collect();
    assert_eq!(failed, ["gather/stream/4096/1"]);
}

#[test]
fn a_point_this_kernel_lacks_is_visited_once_and_skipped_without_failing_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("sweep");
    let spec = spec(&[
        "--mechanisms",
        "copy,zerocopy",
        "--sizes",
        "4K",
        "--min-visits",
        "3",
        "--budget",
        "1s",
    ]);
    let runner = ScriptedRunner::new(|spec: &RunSpec, _| match spec.mechanism.name() {
        "zerocopy" => Figure::Skipped("zerocopy: unavailable here".into()),
        _ => Figure::Measured {
            headline: 10.0,
            cpu_ns_per_byte: 0.5,
        },
    });
    let machine = ScriptedMachine::new(|_| 1.0);
    let status = sweep(&spec, &runner, &machine, &dir, (false, &QUIET));
    assert_eq!(status, Status::Success);
    let zerocopy = runner
        .runs()
        .iter()
        .filter(|r| r.mechanism.name() == "zerocopy")
        .count();
    assert_eq!((runner.runs().len(), zerocopy), (4, 1));
    let skipped: Vec<String> = points(&dir)
        .into_iter()
        .filter(|r| r.status == "skipped")
        .map(|r| r.skipped_reason.unwrap())
        .collect();
    assert_eq!(skipped, ["zerocopy: unavailable here"]);
}
