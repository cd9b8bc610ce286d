//! A sweep stopped by Ctrl-C keeps every point it finished and exits 130; `--resume` measures
//! the rest without repeating any, so the final files hold each point exactly once.
mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FLAGS: [&str; 16] = [
    "sweep",
    "--mechanisms",
    "send,copy,gather",
    "--sizes",
    "256,4K",
    "--threads",
    "1",
    "--slice",
    "20ms",
    "--min-time",
    "100ms",
    "--max-time",
    "300ms",
    "--warmup",
    "50ms",
    "--counters=none",
];

fn lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn key_and_status(line: &str) -> (String, String) {
    let r: Value = serde_json::from_str(line).expect("a JSON record");
    let key = r["sweep_point"]["key"].as_str().unwrap().to_string();
    (key, r["status"].as_str().unwrap().to_string())
}

/// Starts the sweep, waits for its first saved point, sends SIGINT, returns the exit code.
fn interrupt_after_first_point(dir: &Path) -> i32 {
    let bin = assert_cmd::cargo::cargo_bin("bytepath");
    let mut child = Command::new(bin)
        .args(FLAGS)
        .arg("--out")
        .arg(dir)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines(dir).is_empty() {
        assert!(Instant::now() < deadline, "no point was saved within 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    child.wait().unwrap().code().unwrap_or(-1)
}

#[test]
fn ctrl_c_keeps_finished_points_and_resume_measures_only_the_rest() {
    let dir = std::env::temp_dir().join(format!("bytepath-sweep-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(interrupt_after_first_point(&dir), 130);
    let first = lines(&dir);
    let completed: Vec<&String> = first
        .iter()
        .filter(|l| key_and_status(l).1 == "completed")
        .collect();
    assert!(!completed.is_empty() && first.len() < 6, "{first:?}");

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
    let measured_now = stdout.lines().filter(|l| l.starts_with('[')).count();
    assert_eq!(measured_now, 6 - completed.len(), "{stdout}");

    let last = lines(&dir);
    for line in &completed {
        assert!(
            last.contains(line),
            "a completed point was measured again: {line}"
        );
    }
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for line in &last {
        let (key, status) = key_and_status(line);
        assert_eq!(status, "completed");
        *count.entry(key).or_default() += 1;
    }
    assert_eq!(count.len(), 6, "{count:?}");
    assert!(count.values().all(|&n| n == 1), "{count:?}");

    let mut csv = csv::Reader::from_path(dir.join("results.csv")).unwrap();
    let mut csv_keys: Vec<String> = csv.records().map(|r| r.unwrap()[1].to_string()).collect();
    csv_keys.sort();
    assert_eq!(csv_keys, count.keys().cloned().collect::<Vec<_>>());
    std::fs::remove_dir_all(&dir).unwrap();
}
