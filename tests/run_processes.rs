//! `bytepath run --processes`: the measured side stays in this process, the other side of
//! every flow runs in one forked child, and every byte still arrives intact.
mod common;
use common::{assert_delivered, bytepath, u};
use serde_json::Value;

fn run(args: &[&str]) -> Value {
    let out = bytepath()
        .args(["run", "--processes", "--json", "--warmup", "100ms"])
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn two_flows_in_two_processes_deliver_every_byte_verified() {
    for transport in ["tcp", "shm"] {
        for pattern in ["stream", "rr"] {
            let what = format!("{transport}/{pattern}");
            let r = run(&[
                "--transport",
                transport,
                "-m",
                "copy",
                "-p",
                pattern,
                "-s",
                "4K",
                "--threads",
                "2",
                "--duration",
                "1s",
                "--verify",
            ]);
            assert_delivered(&r, &what);
            assert_eq!(r["config"]["processes"], true, "{what}");
            let sides = &r["sides"];
            assert_eq!(u(&sides[0]["threads"]), 2, "{what}");
            assert_eq!(u(&sides[1]["threads"]), 2, "{what}");
            assert_ne!(sides[0]["pid"], sides[1]["pid"], "{what}");
        }
    }
}

#[test]
fn the_measured_side_stays_in_this_process_and_the_other_goes_to_the_child() {
    for (pattern, child_side) in [("stream", "sender"), ("rr", "server")] {
        let process = std::process::Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
            .args([
                "run",
                "--processes",
                "--json",
                "--transport",
                "pipe",
                "-m",
                "send",
            ])
            .args(["-p", pattern, "-d", "300ms", "--warmup", "100ms"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let bytepath_pid = u64::from(process.id());
        let out = process.wait_with_output().unwrap();
        common::assert_success(&out);
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["status"], "completed", "{pattern}: {}", r["errors"]);
        let place = r["config"]["where_sides_run"].as_str().unwrap();
        assert!(
            place.ends_with(&format!("(fork: the {child_side} in the child)")),
            "{place}"
        );
        assert!(!place.contains("one process"), "{place}");
        let pid_of = |name: &str| {
            let sides = r["sides"].as_array().unwrap();
            u(&sides.iter().find(|s| s["side"] == name).unwrap()["pid"])
        };
        let measured = if pattern == "stream" {
            "receiver"
        } else {
            "client"
        };
        assert_eq!(pid_of(measured), bytepath_pid, "{pattern}");
        assert_ne!(pid_of(child_side), bytepath_pid, "{pattern}");
    }
}

/// Pids of the running children of `parent`, from /proc/*/stat (field 4 is the parent pid).
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            after_name.split_whitespace().nth(1) == Some(&parent.to_string())
        })
        .collect()
}

#[test]
fn a_child_that_dies_fails_the_run_at_once_with_an_error_naming_it() {
    // Over shm nothing closes when the child dies: only the parent noticing it ends the run.
    let process = std::process::Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
        .args([
            "run",
            "--processes",
            "--json",
            "--transport",
            "shm",
            "-m",
            "send",
        ])
        .args(["-p", "rr", "-s", "64", "-d", "20s", "--warmup", "100ms"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let child = loop {
        if let Some(&pid) = children_of(process.id()).first() {
            break pid;
        }
        assert!(
            started.elapsed().as_secs() < 10,
            "no child process appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::thread::sleep(std::time::Duration::from_millis(500));
    let killed = std::process::Command::new("kill")
        .args(["-9", &child.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = process.wait_with_output().unwrap();
    assert!(
        started.elapsed().as_secs() < 10,
        "the run went on for {:?} after its child died",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "failed");
    let errors = r["errors"].to_string();
    assert!(
        errors.contains(&format!("no result from the child process (pid {child}")),
        "{errors}"
    );
    assert!(errors.contains("SIGKILL"), "{errors}");
    assert_eq!(
        r["statistics"]["stop_reason"], "side_failed",
        "a dead side is not a planned end"
    );
}
