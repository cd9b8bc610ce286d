//! `bytepath compare` on synthetic folders of points measured in visits: a folder against
//! itself is equivalent and against a re-run with other visit noise but the same means shows
//! no change, all points one Holm family named on the summary line; a known 20 % shift is
//! found and fails --fail-on-regression on its corrected interval; a bad --margin is refused; a point measured as one stretch
//! (schema 1) is not judged and says why; bad folders are refused with one line and exit 2.
//! The between-sweep spread τ (issue 36): `--between-spread` is stated and widens every
//! interval, a bad one is refused; `--json` carries the between block; and a regression of a
//! few of 16 points is flagged, where a τ read from the judged points would have absorbed it.
mod common;
use bytepath::analysis::synthetic::{jsonl, Shape};
use common::{bytepath, compare};
use serde_json::Value;
use std::path::Path;

fn folder(dir: &Path, records: &[Value]) {
    std::fs::create_dir_all(dir).unwrap();
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(dir.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn write(dir: &Path, shapes: &[Shape]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("results.jsonl"), jsonl(shapes)).unwrap();
}

/// Eight points with a few percent of visit noise each.
fn study(scale: f64, pair_noise: f64) -> Vec<Shape> {
    let mut shapes = Vec::new();
    for mechanism in ["send", "copy", "gather", "zerocopy"] {
        for size in [4096, 65536] {
            let mut s = Shape::stream(mechanism, size, 1, 10.0 * scale);
            s.ci_rel = 0.05;
            s.pair_noise = pair_noise;
            shapes.push(s);
        }
    }
    shapes
}

#[test]
fn a_rerun_shows_no_change_and_a_known_shift_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name);
    write(&dir("old"), &study(1.0, 0.01));
    // The same means, visited with other noise: a re-run of the same build.
    write(&dir("rerun"), &study(1.0, 0.03));
    write(&dir("faster"), &study(1.2, 0.01));

    let (code, text) = compare(&dir("old"), &dir("old"), &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains(
            "8 points compared: 0 faster, 0 slower, 0 equivalent within ±5 %, 8 undecided"
        ),
        "a 5 % visit spread over a few visits cannot show equivalence within ±5 %: {text}"
    );
    assert!(text.contains("; 8 tests, Holm at α = 0.05"), "{text}");
    let (_, text) = compare(&dir("old"), &dir("rerun"), &[]);
    assert!(
        text.contains("8 points compared: 0 faster, 0 slower,"),
        "{text}"
    );
    assert!(text.contains("Welch's t on the log visit means"), "{text}");

    let (_, text) = compare(&dir("old"), &dir("faster"), &[]);
    assert!(text.contains("8 faster, 0 slower"), "{text}");
    assert!(text.contains("1.200 ["), "{text}");
    let (code, text) = compare(&dir("faster"), &dir("old"), &["--fail-on-regression", "5%"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("8 point(s) got slower by more than 5.0 % (corrected interval"),
        "{text}"
    );
    let (code, _) = compare(&dir("faster"), &dir("old"), &[]);
    assert_eq!(
        code,
        Some(0),
        "without --fail-on-regression a slower point is reported, not failed"
    );
}

#[test]
fn a_point_measured_as_one_stretch_is_not_judged_on_its_slices() {
    let tmp = tempfile::tempdir().unwrap();
    let old: Vec<Value> = jsonl(&study(1.0, 0.01)[..1])
        .lines()
        .map(|l| {
            let mut r: Value = serde_json::from_str(l).unwrap();
            r["schema_version"] = 1.into();
            r["statistics"]["basis"] = Value::Null;
            r
        })
        .collect();
    folder(&tmp.path().join("v1"), &old);
    write(&tmp.path().join("v2"), &study(2.0, 0.01)[..1]);
    let (code, text) = compare(&tmp.path().join("v1"), &tmp.path().join("v2"), &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("1 cannot be judged"), "{text}");
    assert!(
        text.contains("cannot be judged: measured as one stretch"),
        "{text}"
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

#[test]
fn a_bad_margin_is_refused_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("old"), &study(1.0, 0.01));
    let old = tmp.path().join("old");
    let (code, text) = compare(&old, &old, &["--margin", "70%"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("--margin \"70%\": allowed:"), "{text}");
    // The same folder at ±20 %: its 90 % intervals (about ±8 %) lie within the margin, but five
    // visits a side are fewer than the eight "equivalent" needs, so every point stays undecided.
    let (code, text) = compare(&old, &old, &["--margin", "20%"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("0 equivalent within ±20 %, 8 undecided"),
        "{text}"
    );
}

/// 16 points (4 mechanisms × 4 sizes), visit noise a few percent; the points named in `slower`
/// at 0.8 times the speed.
fn sixteen(pair_noise: f64, slower: &[(&str, u64)]) -> Vec<Shape> {
    let mut shapes = Vec::new();
    for mechanism in ["send", "copy", "gather", "zerocopy"] {
        for size in [1024, 4096, 16384, 65536] {
            let speed = if slower.contains(&(mechanism, size)) {
                0.8
            } else {
                1.0
            };
            let mut s = Shape::stream(mechanism, size, 1, 10.0 * speed);
            s.ci_rel = 0.05;
            s.pair_noise = pair_noise;
            shapes.push(s);
        }
    }
    shapes
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn a_partial_regression_among_16_points_is_flagged_and_the_json_carries_the_between_block() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    write(&old, &sixteen(0.01, &[]));
    let moved = [("copy", 4096), ("gather", 16384), ("zerocopy", 65536)];
    write(&new, &sixteen(0.02, &moved));
    let (code, text) = compare(&old, &new, &["--fail-on-regression", "5%"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("16 points compared: 0 faster, 3 slower"),
        "{text}"
    );
    assert!(
        text.contains("(trimmed over the 16 judged points"),
        "{text}"
    );
    assert!(
        text.contains("warning: more points moved than an A/A allows"),
        "{text}"
    );
    let (code, text) = compare(&old, &new, &["--json"]);
    assert_eq!(code, Some(0), "{text}");
    let doc = json_of(&text);
    let between = &doc["between"];
    assert_eq!(between["source"], "trimmed", "{between}");
    assert_eq!(between["df"], 15, "{between}");
    assert!(between["q"].as_f64().unwrap() > 25.0, "{between}");
    let dl = between["tau_dersimonian_laird"].as_f64().unwrap();
    assert!(
        dl > 0.05 && between["tau"].as_f64().unwrap() < 0.02,
        "the moved points inflate DL's τ, not the one used: {between}"
    );
    assert!(between["warning"]
        .as_str()
        .unwrap()
        .starts_with("more points moved"));
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 16);
    let slower: Vec<&str> = points
        .iter()
        .filter(|p| p["verdict"] == "slower")
        .map(|p| p["point"].as_str().unwrap())
        .collect();
    assert_eq!(slower.len(), 3, "{slower:?}");
    for p in points.iter().filter(|p| p["verdict"] == "slower") {
        assert!(p["corrected"]["high"].as_f64().unwrap() < 0.95, "{p}");
    }
    assert_eq!(doc["family"]["tests"], 16);
    assert!(
        doc["machine"]["line"].as_str().unwrap().contains("canary"),
        "{}",
        doc["machine"]
    );
    assert!(doc["interference"]["line"]
        .as_str()
        .unwrap()
        .starts_with("interference:"));
}

#[test]
fn a_given_between_spread_is_stated_and_widens_every_interval_and_a_bad_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    write(&old, &study(1.0, 0.01));
    write(&new, &study(1.0, 0.03));
    let (code, text) = compare(&old, &new, &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("τ not estimated: 8 points, an estimate needs 10; intervals hold each study's visits only; give --between-spread"), "{text}");
    let width = |extra: &[&str]| -> f64 {
        let (_, text) = compare(&old, &new, &[extra, &["--json"]].concat());
        let doc = json_of(&text);
        let c = &doc["points"][0]["corrected"];
        c["high"].as_f64().unwrap() / c["low"].as_f64().unwrap()
    };
    let (plain, wide) = (width(&[]), width(&["--between-spread", "10%"]));
    assert!(
        wide > plain * 1.2,
        "τ = 10 % widens the interval: {plain} → {wide}"
    );
    let (code, text) = compare(&old, &new, &["--between-spread", "4.8%"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("τ = 4.8 % (given: --between-spread, an A/A pair's)"),
        "{text}"
    );
    assert!(text.contains("Cochran's Q = "), "{text}");
    for bad in ["80%", "nan", "abc"] {
        let (code, text) = compare(&old, &new, &["--between-spread", bad]);
        assert_eq!(code, Some(2), "{bad}: {text}");
        assert!(
            text.contains(&format!(
                "--between-spread {bad:?}: allowed: a percentage from 0 to 50"
            )),
            "{text}"
        );
        assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    }
    let help = bytepath().args(["compare", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--between-spread") && help.contains("bench/noise.sh"),
        "{help}"
    );
}
