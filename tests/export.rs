//! `bytepath export` of real results folders: the OpenMetrics text is read back by an
//! independent parser (the openmetrics-parser crate), with the names, units, labels and the
//! `# EOF` the issue asks for, and every point once per side; csv and json give the folder's
//! records; a folder that is not one, or an unknown format, is one line and exit 2.
mod common;

use openmetrics_parser::openmetrics::parse_openmetrics;
use openmetrics_parser::{OpenMetricsType, OpenMetricsValue};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A two-point sweep (send at 4 KiB and 64 KiB, one flow), as short as a sweep gets.
fn small_sweep(dir: &Path) {
    let out = common::bytepath()
        .args([
            "sweep",
            "--mechanisms",
            "send",
            "--sizes",
            "4K,64K",
            "--threads",
            "1",
        ])
        .args([
            "--visits", "2", "--visit", "60ms", "--slice", "30ms", "--warmup", "20ms",
        ])
        .args([
            "--budget",
            "150ms",
            "--counters",
            "none",
            "--seed",
            "3",
            "--out",
        ])
        .arg(dir)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

fn export(dir: &Path, format: &str) -> (String, String, i32) {
    let out = common::bytepath()
        .arg("export")
        .arg(dir)
        .args(["--format", format])
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn a_sweep_exports_as_openmetrics_that_a_parser_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sweep");
    small_sweep(&dir);
    let (text, err, code) = export(&dir, "openmetrics");
    assert_eq!(code, 0, "{err}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    let parsed = parse_openmetrics(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));

    let expected = [
        ("bytepath_throughput_gbit_per_second", "gbit_per_second"),
        ("bytepath_messages_per_second", "per_second"),
        ("bytepath_cpu_nanoseconds_per_byte", "nanoseconds_per_byte"),
        ("bytepath_latency_p50_seconds", "seconds"),
        ("bytepath_latency_p99_seconds", "seconds"),
    ];
    for (name, unit) in expected {
        let family = parsed
            .families
            .get(name)
            .unwrap_or_else(|| panic!("no {name} in {text}"));
        assert_eq!(family.unit, unit);
        assert_eq!(family.family_type, OpenMetricsType::Gauge);
        assert!(!family.help.is_empty());
        // Every point once per side: 2 points × (sender, receiver), no label set twice.
        let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
        for sample in family.iter_samples() {
            let labels = sample.get_labelset().unwrap();
            let get = |k: &str| labels.get_label_value(k).unwrap_or_else(|| panic!("{k}"));
            assert_eq!(get("mechanism"), "send");
            assert_eq!(get("transport"), "tcp");
            assert_eq!(get("pattern"), "stream");
            assert_eq!(get("flows"), "1");
            assert_eq!(get("placement"), "loopback");
            *seen
                .entry((get("size").to_string(), get("side").to_string()))
                .or_default() += 1;
            let OpenMetricsValue::Gauge(v) = &sample.value else {
                panic!("not a gauge: {:?}", sample.value)
            };
            assert!(v.as_f64() > 0.0, "{name}: {v:?}");
        }
        let keys: Vec<(&str, &str)> = seen.keys().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(
            keys,
            [
                ("4096", "receiver"),
                ("4096", "sender"),
                ("65536", "receiver"),
                ("65536", "sender")
            ],
            "{name}"
        );
        assert!(seen.values().all(|&n| n == 1), "{name}: {seen:?}");
    }
    // The figures are the records', not recomputed.
    let records: Vec<Value> = std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let gbps = records[0]["sides"][1]["throughput_gbps"].as_f64().unwrap();
    assert!(text.contains(&format!("{gbps:?}")), "{gbps} not in {text}");

    // The parser is strict: without its end marker the same text is refused.
    assert!(parse_openmetrics(text.trim_end_matches("# EOF\n")).is_err());

    // csv and json: the folder's records.
    let (csv, _, code) = export(&dir, "csv");
    assert_eq!(code, 0);
    assert_eq!(csv.lines().count(), 1 + records.len());
    assert!(csv.starts_with("schema_version,key,"), "{csv}");
    let (json, _, code) = export(&dir, "json");
    assert_eq!(code, 0);
    let lines: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, records);
}

#[test]
fn a_servers_folder_exports_requests_and_server_cpu_per_point() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("servers");
    let out = common::bytepath()
        .args(["servers", "--models", "epoll,threaded", "--clients", "4"])
        .args(["--duration", "150ms", "--warmup", "20ms", "--out"])
        .arg(&dir)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let (text, err, code) = export(&dir, "openmetrics");
    assert_eq!(code, 0, "{err}");
    let parsed = parse_openmetrics(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    let requests = &parsed.families["bytepath_requests_per_second"];
    let models: Vec<String> = requests
        .iter_samples()
        .map(|s| {
            let labels = s.get_labelset().unwrap();
            assert_eq!(labels.get_label_value("side"), Some("client"));
            assert_eq!(labels.get_label_value("flows"), Some("4"));
            labels.get_label_value("mechanism").unwrap().to_string()
        })
        .collect();
    assert_eq!(models, ["epoll", "threaded"]);
    assert!(parsed
        .families
        .contains_key("bytepath_cpu_per_request_seconds"));
}

#[test]
fn not_a_results_folder_or_an_unknown_format_is_one_line_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, err, code) = export(tmp.path(), "openmetrics");
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a bytepath results folder"), "{err}");
    let (_, err, code) = export(tmp.path(), "xml");
    assert_eq!(code, 2);
    assert_eq!(
        err.trim(),
        "bytepath: --format xml: not a format export writes; allowed: openmetrics, csv, json"
    );
}
