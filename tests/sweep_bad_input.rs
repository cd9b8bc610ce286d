//! Bad sweep input is refused before anything is measured or overwritten: one line on stderr
//! naming the value and what is allowed, exit code 2.
mod common;

use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("bytepath-sweep-bad-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `bytepath sweep ARGS` and expects exit 2 with one stderr line containing `expected`.
fn refused(args: &[&str], out: Option<&Path>, expected: &str) {
    let mut cmd = common::bytepath();
    cmd.arg("sweep").args(args);
    if let Some(dir) = out {
        cmd.arg("--out").arg(dir);
    }
    let output = cmd
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(
        stderr.contains(expected),
        "{args:?}: expected {expected:?} in {stderr}"
    );
    assert!(output.stdout.is_empty(), "{args:?} printed to stdout");
}

#[test]
fn malformed_lists_and_values_are_refused_with_exit_code_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--mechanisms", ""], "--mechanisms"),
        (&["--sizes", "256,,1K"], "entry 2 is empty"),
        (&["--sizes", "4K,4096"], "repeats"),
        (&["--threads", "1,2,2"], "repeats"),
        (&["--mechanisms", "send,teleport"], "unknown mechanism"),
        (&["--patterns", "stream,crq"], "unknown pattern"),
        (&["--sizes", "12"], "multiple of 8"),
        (&["--sizes", "256,128M"], "multiple of 8"),
        (&["--threads", "0"], "1 to 1024"),
        (&["--ci", "0"], "--ci"),
        (&["--ci", "60%"], "--ci"),
        (&["--ci=-2%"], "--ci"),
        (&["--slice", "1s", "--visit", "500ms"], "slice ≤ visit"),
        (
            &["--min-visits", "1"],
            "--min-visits \"1\": allowed: a whole number from 2 to 1000",
        ),
        // The old spelling is a hidden alias of the floor, so old command lines still run.
        (
            &["--visits", "1"],
            "--min-visits \"1\": allowed: a whole number from 2 to 1000",
        ),
        (&["--budget", "soon"], "--budget \"soon\": allowed"),
        (&["--seed", "x"], "--seed \"x\": allowed: a whole number"),
        (&["--resume"], "--resume: needs --out"),
        (&["--queue-depth", "8"], "without an io_uring mechanism"),
        (
            &["--mechanisms", "uring", "--queue-depth", "0"],
            "--queue-depth \"0\": allowed: a whole number from 1 to 4096",
        ),
        (&["--recv", "mmap"], "--recv \"mmap\": unknown receive path"),
        (&["--recv", "trunc", "--verify"], "nothing to check"),
        (&["--beside-loopback"], "--beside-loopback without --sink"),
        (&["--udp-split"], "--udp-split without --sink"),
        (&["--gso", "1472"], "--gso 1472 with --transport tcp"),
        (&["--sink", "--sizes", "64K"], "or add --udp-split"),
        (
            &["--sink", "--mechanisms", "copy,zerocopy", "--sizes", "40K"],
            "may pin 24 pages",
        ),
        (
            &["--sink", "--gso", "8000"],
            "--gso 8000 with --sink at MTU 1500",
        ),
    ];
    for (args, expected) in cases {
        refused(args, None, expected);
    }
}

#[test]
fn a_folder_that_is_not_a_bytepath_folder_is_left_untouched() {
    let dir = temp_dir("foreign");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("thesis.txt"), "precious").unwrap();
    refused(
        &["--sizes", "256"],
        Some(&dir),
        "not a bytepath results folder",
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("thesis.txt")).unwrap(),
        "precious"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

const ONE_POINT: [&str; 14] = [
    "--mechanisms",
    "send",
    "--sizes",
    "256",
    "--threads",
    "1",
    "--slice",
    "10ms",
    "--visit",
    "100ms",
    "--budget",
    "50ms",
    "--warmup",
    "50ms",
];

/// A real one-point sweep in `dir`.
fn one_point_sweep(dir: &Path) {
    common::bytepath()
        .arg("sweep")
        .args(ONE_POINT)
        .arg("--out")
        .arg(dir)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
}

#[test]
fn an_existing_sweep_is_continued_only_with_resume_and_the_same_flags() {
    let dir = temp_dir("again");
    one_point_sweep(&dir);
    refused(&ONE_POINT, Some(&dir), "add --resume");
    let mut other = ONE_POINT.to_vec();
    other[3] = "512";
    other.push("--resume");
    refused(&other, Some(&dir), "other settings");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn visits_from_a_newer_schema_are_refused_on_resume() {
    let dir = temp_dir("newer");
    one_point_sweep(&dir);
    let jsonl = dir.join("visits.jsonl");
    let before = std::fs::read_to_string(&jsonl).unwrap();
    std::fs::write(&jsonl, format!("{before}{{\"schema_version\": 99}}\n")).unwrap();
    let mut args = ONE_POINT.to_vec();
    args.push("--resume");
    refused(&args, Some(&dir), "schema_version 99");
    assert!(
        std::fs::read_to_string(&jsonl).unwrap().contains("99"),
        "the file was rewritten"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
