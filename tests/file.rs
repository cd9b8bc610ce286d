//! `bytepath file` end to end: every mechanism delivers awkward sizes intact (--verify), cold
//! cache reports the residency it achieved, bad input is one line and exit 2, and the
//! temporary test files are gone after success, after a failure and after Ctrl-C.
mod common;
use common::{assert_success, bytepath};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The folder the run said it put its test files in.
fn test_folder(stderr: &str) -> PathBuf {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("file: test files in "))
        .unwrap_or_else(|| panic!("no test folder named in {stderr}"));
    PathBuf::from(line.trim())
}

fn run_json(args: &[&str]) -> (Value, String) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = bytepath()
        .arg("file")
        .args(args)
        .args(["--json", "--counters", "software", "--out"])
        .arg(out_dir.path().join("r"))
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_success(&out);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).expect("one JSON document");
    (json, stderr)
}

#[test]
fn every_mechanism_delivers_awkward_sizes_intact_and_cleans_up() {
    let sizes = "1,4095,4096,4097,3145733";
    let (json, stderr) = run_json(&["--sizes", sizes, "--reps", "2", "--verify"]);
    assert_eq!(json["status"], "completed");
    let transfers = json["transfers"].as_array().unwrap();
    assert_eq!(
        transfers.len(),
        5 * 4 * (2 + 1),
        "sizes x mechanisms x (reps + the counted transfer)"
    );
    for t in transfers {
        assert_eq!(t["verified"], true, "{t}");
        assert!(t["error"].is_null(), "{t}");
        assert!(t["elapsed_ms"].as_f64().unwrap() > 0.0);
    }
    // Counters were open only in each (size, mechanism)'s transfer of its own, after the
    // measured ones; the measured transfers carry none.
    let (counted, measured): (Vec<&Value>, Vec<&Value>) = transfers
        .iter()
        .partition(|t| t["counter_transfer"] == true);
    assert_eq!(counted.len(), 5 * 4);
    for t in &counted {
        assert_eq!(t["rep"], 2, "after the measured repetitions: {t}");
        let task_clock = &t["server"]["counters"]["task_clock_ns"];
        assert!(task_clock.get("Counted").is_some(), "{t}");
    }
    for t in &measured {
        assert_eq!(t["server"]["counters"], serde_json::json!({}), "{t}");
        assert_eq!(t["client"]["counters"], serde_json::json!({}), "{t}");
    }
    let summaries = json["summaries"].as_array().unwrap();
    assert_eq!(summaries.len(), 20);
    for s in summaries.iter().filter(|s| s["mechanism"] == "readsend") {
        assert_eq!(s["fraction_of_readsend"], 1.0);
    }
    assert!(
        !test_folder(&stderr).exists(),
        "test files removed after success"
    );
}

#[test]
fn cold_cache_reports_the_residency_it_achieved() {
    let (json, _) = run_json(&[
        "--sizes",
        "4M",
        "--cache",
        "cold",
        "--reps",
        "2",
        "--mechanisms",
        "sendfile,readsend",
    ]);
    for t in json["transfers"].as_array().unwrap() {
        let r = &t["residency_before"];
        assert_eq!(r["total_pages"], 1024, "{t}");
        assert!(r["resident_pages"].as_u64().unwrap() <= 1024);
    }
    let s = &json["summaries"][0];
    assert!(s["residency_before"].as_f64().is_some(), "{s}");
    assert_eq!(json["config"]["cache"], "cold");
}

#[test]
fn both_caches_are_measured_for_every_mechanism_and_the_report_compares_them() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("r");
    let out = bytepath()
        .args([
            "file",
            "--sizes",
            "1M",
            "--reps",
            "2",
            "--cache",
            "warm,cold",
        ])
        .args(["--json", "--out"])
        .arg(&out_dir)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_success(&out);
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(json["config"]["cache"], "warm,cold");
    let transfers = json["transfers"].as_array().unwrap();
    assert_eq!(
        transfers.len(),
        4 * 2 * (2 + 1),
        "mechanisms x caches x (reps + the counted transfer)"
    );
    for m in ["readsend", "sendfile", "splice", "mmap"] {
        for cache in ["warm", "cold"] {
            let n = transfers
                .iter()
                .filter(|t| t["mechanism"] == m && t["cache"] == cache && t["error"].is_null())
                .filter(|t| t["counter_transfer"].is_null())
                .count();
            assert_eq!(n, 2, "{m} {cache}");
        }
    }
    // Cold was asked for before every cold transfer: fadvise needs no root, and what mincore
    // saw is recorded (tmpfs may keep the pages, so only the record is asserted).
    assert!(transfers
        .iter()
        .all(|t| t["residency_before"]["total_pages"] == 256));
    assert_eq!(json["summaries"].as_array().unwrap().len(), 8);
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    let answer = md
        .split("Does a cold page cache change the answer?")
        .nth(1)
        .expect("the cold-against-warm question");
    let answer = &answer[..answer.find("\n#").unwrap_or(answer.len())];
    assert!(!answer.contains("Cannot be said"), "{answer}");
    assert!(answer.contains("Cold against warm"), "{answer}");
    assert!(answer.contains("1 MiB sendfile: cold "), "{answer}");
}

fn refuse(args: &[&str], must_contain: &[&str]) {
    let out = bytepath().arg("file").args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: nothing printed");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line: {err}"
    );
    for needle in must_contain {
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    refuse(&["--sizes", "0"], &["--sizes", "\"0\"", "above 0"]);
    refuse(&["--sizes", "5X"], &["\"5X\"", "K, M or G"]);
    refuse(
        &["--file", "/nonexistent"],
        &["/nonexistent", "cannot be opened"],
    );
    refuse(
        &["--mechanisms", "readsend,zerocopy"],
        &["\"zerocopy\"", "sendfile"],
    );
    refuse(&["--sizes", "100000G"], &["need", "available"]);
    refuse(&["--sizes", "1M,1024K"], &["repeats"]);
    refuse(&["--cache", "tepid"], &["warm, cold"]);
    refuse(
        &["--cache", "warm,tepid"],
        &["--cache", "\"tepid\"", "warm,cold"],
    );
    refuse(&["--cache", "cold,cold"], &["--cache", "repeats"]);
    refuse(&["--chunk", "0"], &["--chunk"]);
    refuse(&["--reps", "0"], &["--reps", "above 0"]);
    refuse(&["--pin", "7,9"], &["--pin", "CPU 7", "available CPUs"]);
}

#[test]
fn the_users_own_file_is_served_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.bin");
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let (json, _) = run_json(&["--file", path.to_str().unwrap(), "--reps", "1", "--verify"]);
    assert_eq!(json["config"]["sizes_bytes"][0], 100_000);
    assert!(json["transfers"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["verified"] == true));
    assert_eq!(std::fs::read(&path).unwrap(), data, "never modified");
}

/// A file-size limit (with SIGXFSZ ignored, so write fails with EFBIG) makes the second test
/// file fail after the first was measured: a failed run, exit 1.
#[test]
fn test_files_are_removed_after_a_failed_run() {
    let out_dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("bytepath");
    let script = format!(
        "trap '' XFSZ; ulimit -f 4096; exec '{}' file --sizes 1M,8M --reps 1 --counters none --out '{}'",
        bin.display(),
        out_dir.path().join("r").display()
    );
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    assert!(!test_folder(&stderr).exists(), "removed after a failure");
}

#[test]
fn test_files_are_removed_after_ctrl_c_and_the_exit_code_is_130() {
    let out_dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
        .args([
            "file",
            "--sizes",
            "32M,64M",
            "--reps",
            "200",
            "--counters",
            "none",
        ])
        .arg("--out")
        .arg(out_dir.path().join("r"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let folder = test_folder(&first);
    assert!(folder.exists());
    std::thread::sleep(Duration::from_millis(1500));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let started = Instant::now();
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "stopped promptly"
    );
    assert_eq!(status.code(), Some(130));
    assert!(
        !folder.exists(),
        "removed after Ctrl-C: {}",
        folder.display()
    );
}

#[test]
fn the_folder_holds_a_tidy_csv_and_report_re_renders_it() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("r");
    let out = bytepath()
        .args(["file", "--sizes", "4K,64K", "--reps", "2", "--pin", "same"])
        .args(["--mechanisms", "readsend,sendfile", "--seed", "5", "--out"])
        .arg(&out_dir)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_success(&out);
    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[1..4], ["size_bytes", "mechanism", "rep"]);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows.len(),
        2 * 2 * (2 + 1),
        "one row per transfer, the counted ones included"
    );
    let counted = header
        .iter()
        .position(|h| *h == "counter_transfer")
        .unwrap();
    assert_eq!(rows.iter().filter(|r| r[counted] == "true").count(), 2 * 2);
    let elapsed = header.iter().position(|h| *h == "elapsed_ms").unwrap();
    assert!(rows
        .iter()
        .all(|r| r[elapsed].parse::<f64>().unwrap() > 0.0));

    let marker: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    let placement = &marker["spec"]["placement"];
    assert_eq!(marker["spec"]["pin"], "same");
    assert_eq!(placement["sender_cpu"], placement["receiver_cpu"]);

    let html = out_dir.join("report.html");
    std::fs::remove_file(&html).unwrap();
    let out = bytepath().arg("report").arg(&out_dir).output().unwrap();
    assert_success(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("sendfile") && page.contains("64 KiB"),
        "{page}"
    );
    assert!(page.contains("<svg"), "the plots are back");
    // A margin chosen after the data: the answers are judged at it, the method text says so
    // and the folder records it; a plain report again is the study's own margin.
    let out = bytepath()
        .args(["report", "--margin", "3%"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_success(&out);
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        md.contains(
            "Re-judged at ±3 %; the study was run with ±5 %: a margin chosen after the data"
        ),
        "{md}"
    );
    assert!(md.contains("equivalence margin ±3 % (--margin)"), "{md}");
    assert!(
        !md.contains("within ±5 %") && !md.contains("[0.95, 1.05]"),
        "{md}"
    );
    let changes: Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("margin_changes.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(changes.as_array().unwrap().len(), 1, "{changes}");
    assert_eq!(
        (&changes[0]["from"], &changes[0]["to"]),
        (&0.05.into(), &0.03.into())
    );
    let out = bytepath().arg("report").arg(&out_dir).output().unwrap();
    assert_success(&out);
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        !md.contains("Re-judged") && md.contains("[0.95, 1.05]"),
        "{md}"
    );
    // Each repetition is a round: both mechanisms once, the second in the reverse order.
    let rep = header.iter().position(|h| *h == "rep").unwrap();
    let mechanism = header.iter().position(|h| *h == "mechanism").unwrap();
    // Per size: 2 repetitions of 2 mechanisms, then each mechanism's counted transfer.
    for size in rows.chunks(6) {
        assert_eq!((size[0][rep], size[2][rep], size[4][rep]), ("0", "1", "2"));
        assert_eq!((size[3][counted], size[4][counted]), ("", "true"));
        assert_eq!(
            (size[0][mechanism], size[1][mechanism]),
            (size[3][mechanism], size[2][mechanism])
        );
    }
    assert_eq!(marker["spec"]["seed"], 5);
    // A canary before each repetition of each size, with the repetition as its round.
    let canaries: Vec<Value> = std::fs::read_to_string(out_dir.join("canary.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rounds: Vec<u64> = canaries
        .iter()
        .map(|c| c["round"].as_u64().unwrap())
        .collect();
    assert_eq!(rounds, [0, 1, 0, 1], "2 sizes x 2 repetitions");
    assert!(canaries[0]["canary"]["getpid_ns"].as_f64().unwrap() > 0.0);
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    for text in [&page, &md] {
        assert!(
            text.contains("What share of readsend&#39;s time")
                || text.contains("What share of readsend's time")
        );
        common::assert_no_sweep_question(text);
    }
}
