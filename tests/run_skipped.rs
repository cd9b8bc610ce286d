//! A point whose mechanism or receive path this kernel lacks is skipped with the probe's
//! reason, not failed: `run` says so and exits 1 without figures; a sweep records it as
//! skipped, goes on, passes, lists the reason in its report and does not measure it again on
//! --resume. `BYTEPATH_ASSUME_MISSING` stands in for a kernel without the feature.
mod common;
use common::bytepath;
use serde_json::Value;

#[test]
fn run_of_a_missing_mechanism_is_skipped_with_the_reason() {
    let out = bytepath()
        .args(["run", "-m", "uring-zc", "-d", "300ms", "--json"])
        .env("BYTEPATH_ASSUME_MISSING", "uring-zc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "not measured: not a success");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "skipped");
    assert_eq!(r["errors"], serde_json::json!([]), "skipped, not failed");
    let reason = r["skipped_reason"].as_str().unwrap();
    assert!(reason.starts_with("uring-zc: unavailable"), "{reason}");
    assert_eq!(r["transfer"]["sender_sent_bytes"], 0, "nothing was sent");
}

#[test]
fn run_table_of_a_missing_receive_path_says_skipped() {
    let out = bytepath()
        .args(["run", "-m", "send", "--recv", "zc-recv", "-d", "300ms"])
        .env("BYTEPATH_ASSUME_MISSING", "zc-recv")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(text.contains("status: skipped"), "{text}");
    assert!(text.contains("skipped: zc-recv: unavailable"), "{text}");
    assert!(
        !text.contains("Gbit/s"),
        "no figures for a point never run: {text}"
    );
}

#[test]
fn a_sweep_skips_the_missing_mechanism_and_goes_on() {
    let dir = std::env::temp_dir().join(format!("bytepath-skipped-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sweep = |resume: bool| {
        let mut cmd = bytepath();
        cmd.args([
            "sweep",
            "--mechanisms",
            "send,splice",
            "--sizes",
            "4K",
            "--threads",
            "1",
            "--visit",
            "200ms",
            "--budget",
            "300ms",
            "--warmup",
            "0s",
            "--counters",
            "none",
            "--out",
        ])
        .arg(&dir)
        .env("BYTEPATH_ASSUME_MISSING", "splice");
        if resume {
            cmd.arg("--resume");
        }
        cmd.output().unwrap()
    };
    let out = sweep(false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("splice/stream/4096/1  skipped: splice: unavailable"),
        "{stdout}"
    );
    let records = || -> Vec<Value> {
        std::fs::read_to_string(dir.join("results.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let statuses: Vec<Value> = records().iter().map(|r| r["status"].clone()).collect();
    assert_eq!(statuses.len(), 2);
    assert!(statuses.contains(&"completed".into()) && statuses.contains(&"skipped".into()));
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert!(
        csv.contains("splice: unavailable"),
        "the CSV keeps the reason"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("skipped: splice: unavailable"),
        "the report lists the reason"
    );
    assert!(html.contains("1 skipped because this kernel lacks"));
    // --resume: both points are done, nothing is measured again.
    let again = sweep(true);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        records().len(),
        2,
        "the skipped point is not measured again"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
