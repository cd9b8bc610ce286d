//! `--json-stream`: every line parses, the first is `start` and the last `end`, slice lines
//! arrive through a pipe while the run still goes on, and the point line's record is what
//! `--json` prints for the same run (apart from what differs between any two runs).
mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> String {
    assert_cmd::cargo::cargo_bin("bytepath")
        .display()
        .to_string()
}

/// A record with what differs between two runs of the same point set aside: timestamps,
/// process ids and every measured figure. What is left is its shape and configuration.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match k.as_str() {
                    // Measured data in text: the encoded histogram.
                    "latency_histogram_hdr" => (k.clone(), Value::from("hdr")),
                    // TCP_INFO readings: one per slice boundary, and at the start and stop,
                    // which may fall on one.
                    "series" => (k.clone(), series_shape(v)),
                    _ => (k.clone(), shape(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::Number(_) => Value::from(0),
        other => other.clone(),
    }
}

/// A series' fields, without their readings.
fn series_shape(v: &Value) -> Value {
    let fields = v.as_object().expect("a series is an object of arrays");
    Value::Object(fields.keys().map(|k| (k.clone(), Value::Null)).collect())
}

#[test]
fn run_streams_start_slices_point_and_end_lines_as_it_goes() {
    let mut child = Command::new(bin())
        .args([
            "run",
            "-m",
            "send",
            "--duration",
            "300ms",
            "--warmup",
            "100ms",
        ])
        .args(["--counters", "none", "--json-stream"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut lines = Vec::new();
    let mut first_slice_while_running = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line: Value = serde_json::from_str(&line.unwrap()).expect("each line is JSON");
        if line["type"] == "slice" && first_slice_while_running.is_none() {
            // Read from the pipe while the process still runs: it has not exited yet.
            first_slice_while_running = Some(child.try_wait().unwrap().is_none());
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    let stderr = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert_eq!(first_slice_while_running, Some(true), "{lines:?}");

    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"start"));
    assert_eq!(types.last(), Some(&"end"));
    assert_eq!(types.iter().filter(|t| **t == "point").count(), 1);
    let slices: Vec<&Value> = lines.iter().filter(|l| l["type"] == "slice").collect();
    assert!(slices.len() >= 2, "{lines:?}");
    for (i, s) in slices.iter().enumerate() {
        assert_eq!(s["index"], i);
        assert_eq!(s["side"], "receiver");
        assert!(s["bytes"].as_u64().unwrap() > 0);
    }
    assert!(lines.iter().all(|l| l["schema_version"] == 2));
    let start = &lines[0];
    assert_eq!(start["command"], "run");
    assert_eq!(start["config"]["mechanism"], "send");
    assert!(
        start["environment"]["kernel_release"].is_string(),
        "{start}"
    );
    let end = lines.last().unwrap();
    assert_eq!(
        (end["status"].as_str(), end["exit_code"].as_u64()),
        (Some("completed"), Some(0))
    );
    assert!(
        stderr.contains("bytepath run: send over tcp"),
        "the table goes to stderr"
    );

    // The point's record is --json's record for the same run, apart from the figures.
    let mut record = lines.iter().find(|l| l["type"] == "point").unwrap()["record"].clone();
    // The one difference it states itself: the controller woke per slice to tell it.
    let notes = record["notes"].as_array_mut().unwrap();
    let stream_note = notes
        .iter()
        .position(|n| n.as_str().unwrap().starts_with("--json-stream:"))
        .expect("the streamed record says what the stream changed");
    notes.remove(stream_note);
    let record = &record;
    let (json, code) = common::run_json(&["-m", "send", "--counters", "none"]);
    assert_eq!(code, 0);
    assert_eq!(shape(record), shape(&json));
    // The TCP_INFO readings of each slice boundary come with the point, after the run,
    // and are the record's own readings.
    let point = lines.iter().find(|l| l["type"] == "point").unwrap();
    let readings = point["tcp_info_per_slice_after_run"]["readings"]
        .as_array()
        .unwrap_or_else(|| panic!("no readings: {point}"));
    let flows = record["tcp_info"]["flows"].as_array().unwrap();
    let at_ms = flows[0]["series"]["at_ms"].as_array().unwrap();
    assert_eq!(readings.len(), at_ms.len());
    assert!(readings.len() > slices.len(), "start, each boundary, stop");
    let last = readings.last().unwrap();
    assert_eq!(last["at_ms"], *at_ms.last().unwrap());
    assert_eq!(last["flows"].as_array().unwrap().len(), flows.len());
    for (i, side) in flows.iter().enumerate() {
        let at = &last["flows"][i];
        assert_eq!((&at["flow"], &at["side"]), (&side["flow"], &side["side"]));
        for (short, field) in [("cwnd", "snd_cwnd"), ("retrans", "total_retrans")] {
            let series = side["series"][field].as_array().unwrap();
            assert_eq!(at[short], *series.last().unwrap(), "{short}");
        }
    }
    assert!(last["flows"][0]["cwnd"].as_u64().unwrap() > 0);
    // And the slice lines are the record's slices.
    let values = record["statistics"]["values"].as_array().unwrap();
    assert_eq!(values.len(), slices.len());
    for (v, s) in values.iter().zip(&slices) {
        let gbps = s["throughput_gbps"].as_f64().unwrap();
        assert!(
            (v.as_f64().unwrap() - gbps).abs() < 1e-9 * gbps.max(1.0),
            "{v} {gbps}"
        );
    }
}

#[test]
fn json_and_json_stream_together_are_refused_in_one_line() {
    let out = common::bytepath()
        .args(["run", "-m", "send", "--json", "--json-stream"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--json with --json-stream"), "{err}");
}

#[test]
fn a_study_streams_its_visits_and_points_and_keeps_its_text_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let out = common::bytepath()
        .args([
            "ipc",
            "--transports",
            "pipe,unix",
            "--sizes",
            "64",
            "--measure",
            "latency",
        ])
        .args([
            "--trials",
            "500",
            "--warmup",
            "10ms",
            "--json-stream",
            "--out",
        ])
        .arg(tmp.path().join("ipc"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    // ipc measures each point in visits (4 by default): every visit as it ends, then each
    // point aggregated from its visits.
    let mut expected = vec!["start"];
    expected.extend(["visit"; 8]);
    expected.extend(["point", "point", "end"]);
    assert_eq!(types, expected, "{text}");
    assert_eq!(lines[0]["command"], "ipc");
    assert_eq!(lines[11]["summary"]["points"], 2);
    assert_eq!(lines[11]["summary"]["visits"], 8);
    let saved = std::fs::read_to_string(tmp.path().join("ipc/results.jsonl")).unwrap();
    let saved: Vec<Value> = saved
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[9]["record"], saved[0],
        "the point line is the saved record"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("ipc: 2 points"), "{stderr}");
}
