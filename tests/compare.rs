//! `bytepath compare` on folders built from a real run record: an identical folder shows no
//! significant change, a halved one is a regression that fails --fail-on-regression, and bad
//! folders are refused with one line and exit 2. The record's statistics are pinned to a ±1 %
//! interval: a 300 ms run on a loaded machine can have an interval wide enough that even a halved
//! mean is no significant change, which is right for compare and wrong for a fixture.
mod common;
use common::{bytepath, run_json};
use serde_json::Value;
use std::path::Path;

fn folder(dir: &Path, records: &[Value]) {
    std::fs::create_dir_all(dir).unwrap();
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(dir.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn scaled(record: &Value, factor: f64) -> Value {
    let mut r = record.clone();
    for key in ["mean", "stddev", "ci95_low", "ci95_high", "ci95_half_width"] {
        let v = r["statistics"]["summary"][key].as_f64().unwrap();
        r["statistics"]["summary"][key] = (v * factor).into();
    }
    r
}

#[test]
fn identical_results_show_no_change_and_a_halved_point_is_a_regression() {
    let (mut record, _) = run_json(&["-m", "gather", "-s", "4K"]);
    record["statistics"]["summary"] = serde_json::json!({
        "n": 10, "mean": 10.0, "stddev": 0.14, "ci95_low": 9.9, "ci95_high": 10.1,
        "ci95_half_width": 0.1, "ci95_rel": 0.01, "lag1_autocorrelation": 0.0, "n_effective": 10.0
    });
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let (old, same, worse) = (tmp.join("old"), tmp.join("same"), tmp.join("worse"));
    folder(&old, std::slice::from_ref(&record));
    folder(&same, std::slice::from_ref(&record));
    folder(&worse, &[scaled(&record, 0.5)]);

    let out = bytepath()
        .args(["compare"])
        .arg(&old)
        .arg(&same)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("gather/stream/4096/1") && text.contains("no significant change"),
        "{text}"
    );

    let out = bytepath()
        .args(["compare", "--fail-on-regression", "5%"])
        .arg(&old)
        .arg(&worse)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("slower") && text.contains("0.500"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("got slower by more than 5.0 %"));

    let out = bytepath()
        .args(["compare"])
        .arg(&old)
        .arg(&worse)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "without --fail-on-regression a slower point is reported, not failed"
    );
}

#[test]
fn missing_folders_and_newer_schemas_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let out = bytepath()
        .args(["compare"])
        .arg(tmp.join("nope"))
        .arg(tmp.join("nope2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("results.jsonl"));

    let future = tmp.join("future");
    folder(
        &future,
        &[serde_json::json!({"schema_version": 999, "config": {}})],
    );
    let out = bytepath()
        .args(["compare"])
        .arg(&future)
        .arg(&future)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("schema_version 999") && err.contains(":1:"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1);
}
