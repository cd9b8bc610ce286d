//! A sweep stopped by Ctrl-C in the middle of a round keeps every visit it finished and exits
//! 130; `--resume` makes exactly the missing visits, in the order the recorded seed gives, and
//! a group (the mechanisms of one size) that a round left half made is made again whole, so
//! that the round's pairs come from one run of the tool.
mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// 6 points, 2 visits each, no counter visits, a budget too small for any further round:
/// exactly 12 visits.
const FLAGS: [&str; 18] = [
    "sweep",
    "--mechanisms",
    "send,copy,gather",
    "--sizes",
    "256,4K",
    "--threads",
    "1",
    "--slice",
    "20ms",
    "--visit",
    "200ms",
    "--visits",
    "2",
    "--budget",
    "10ms",
    "--warmup",
    "50ms",
    "--counters=none",
];

fn lines(dir: &Path, file: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(file))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn visit_of(line: &str) -> (String, u64, String) {
    let r: Value = serde_json::from_str(line).expect("a JSON record");
    let v = &r["visit"];
    (
        v["key"].as_str().unwrap().to_string(),
        v["round"].as_u64().unwrap(),
        r["status"].as_str().unwrap().to_string(),
    )
}

/// Starts the sweep, waits for its fourth saved visit (inside the first round of six: the first
/// visit of its second group, so that the interruption leaves that group half made), sends
/// SIGINT, returns the exit code.
fn interrupt_mid_round(dir: &Path) -> i32 {
    let bin = assert_cmd::cargo::cargo_bin("bytepath");
    let mut child = Command::new(bin)
        .args(FLAGS)
        .args(["--seed", "5"])
        .arg("--out")
        .arg(dir)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines(dir, "visits.jsonl").len() < 4 {
        assert!(Instant::now() < deadline, "no visit was saved within 60 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    child.wait().unwrap().code().unwrap_or(-1)
}

#[test]
fn ctrl_c_mid_round_keeps_finished_visits_and_resume_makes_only_the_missing_ones() {
    let dir = std::env::temp_dir().join(format!("bytepath-sweep-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(interrupt_mid_round(&dir), 130);
    let first = lines(&dir, "visits.jsonl");
    let finished: Vec<&String> = first
        .iter()
        .filter(|l| visit_of(l).2 == "completed")
        .collect();
    assert!(
        finished.len() >= 3 && finished.len() < 12,
        "stopped mid-way: {first:?}"
    );
    // The points measured so far are in results.jsonl already, marked as short of visits.
    let partial = lines(&dir, "results.jsonl");
    assert!(!partial.is_empty());
    assert!(partial
        .iter()
        .all(|l| l.contains("\"status\":\"interrupted\"")));

    // Resumed without --seed: the recorded seed gives the same order.
    let out = common::bytepath()
        .args(FLAGS)
        .arg("--out")
        .arg(&dir)
        .arg("--resume")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let made_now = stdout.lines().filter(|l| l.starts_with("round ")).count();
    // A group is one size's three mechanisms in one round.
    let group = |line: &str| {
        let (key, round, _) = visit_of(line);
        (key.split('/').nth(2).unwrap().to_string(), round)
    };
    let mut done: BTreeMap<(String, u64), usize> = BTreeMap::new();
    for line in &finished {
        *done.entry(group(line)).or_default() += 1;
    }
    let whole: Vec<&&String> = finished.iter().filter(|l| done[&group(l)] == 3).collect();
    assert!(
        whole.len() < finished.len(),
        "a group was left half made: {done:?}"
    );
    assert_eq!(made_now, 12 - whole.len(), "{done:?} {stdout}");

    let last = lines(&dir, "visits.jsonl");
    for line in &finished {
        let kept = last.iter().filter(|l| l == line).count() == 1;
        let remade = last
            .iter()
            .filter(|l| visit_of(l).0 == visit_of(line).0 && visit_of(l).1 == visit_of(line).1)
            .count()
            == 2;
        if done[&group(line)] == 3 {
            assert!(
                kept && !remade,
                "a visit of a whole group was made again: {line}"
            );
        } else {
            assert!(
                remade,
                "a visit of a half-made group was not made again: {line}"
            );
        }
    }
    let mut count: BTreeMap<(String, u64), usize> = BTreeMap::new();
    for line in &last {
        let (key, round, status) = visit_of(line);
        assert_eq!(status, "completed");
        *count.entry((key, round)).or_default() += 1;
    }
    assert_eq!(count.len(), 12, "{count:?}");
    assert_eq!(last.len(), 12 + finished.len() - whole.len(), "{count:?}");

    let points: Vec<Value> = lines(&dir, "results.jsonl")
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(points.len(), 6);
    for p in &points {
        assert_eq!(p["status"], "completed", "{p}");
        assert_eq!(p["statistics"]["visits"]["count"], 2);
        assert_eq!(
            p["statistics"]["visits"]["rounds"],
            serde_json::json!([0, 1])
        );
        // Each visit's sender CPU per byte, in the rounds' order: what the serialization
        // answer pairs copy and send by.
        let cpu = p["statistics"]["visits"]["sender_cpu_ns_per_byte"]
            .as_array()
            .expect("per-visit sender CPU");
        assert!(
            cpu.len() == 2 && cpu.iter().all(|c| c.as_f64().unwrap() > 0.0),
            "{p}"
        );
    }
    // The serialization answer is a family over the two sizes, each cell with its state.
    let serialization = common::answer_in(&dir, "What does serialization");
    let cells: Vec<&str> = serialization["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cell"].as_str().unwrap())
        .collect();
    assert_eq!(cells, ["256 B at 1 thread", "4 KiB at 1 thread"]);
    assert_eq!(serialization["tests"], 2);
    let mut csv = csv::Reader::from_path(dir.join("results.csv")).unwrap();
    assert_eq!(csv.records().count(), 6);
    std::fs::remove_dir_all(&dir).unwrap();
}
