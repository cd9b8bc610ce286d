//! TCP_INFO and `--under-load` in every output of a real sweep (rr over tcp, one point and its
//! loaded twin): results.csv's headline and pair columns agree with the records, the
//! OpenMetrics export has the per-flow families and the latency ratio to the twin and parses,
//! and report.md holds the per-flow table.
mod common;

use openmetrics_parser::openmetrics::parse_openmetrics;
use openmetrics_parser::OpenMetricsValue;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `send` rr at 64 B, with one load flow beside its twin, as short as a sweep gets.
fn loaded_sweep() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("bytepath-tcp-out-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = common::bytepath()
            .args(["sweep", "--mechanisms", "send", "--patterns", "rr"])
            .args(["--sizes", "64", "--threads", "1", "--under-load", "1"])
            .args(["--visit", "200ms", "--slice", "20ms", "--warmup", "50ms"])
            .args(["--budget", "300ms", "--counters", "none", "--seed", "5"])
            .arg("--out")
            .arg(&dir)
            .timeout(std::time::Duration::from_secs(180))
            .output()
            .expect("bytepath ran");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        dir
    })
}

fn records(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A cell holds the record's value: empty for null, else the same number (to the last bits
/// JSON text keeps).
fn agrees(cell: &str, v: &Value) -> bool {
    match (v, cell.parse::<f64>()) {
        (Value::Null, _) => cell.is_empty(),
        (Value::Number(n), Ok(c)) => {
            let n = n.as_f64().unwrap();
            (c - n).abs() <= 1e-12 * n.abs().max(1.0)
        }
        _ => false,
    }
}

#[test]
fn the_csv_columns_agree_with_the_records_tcp_info_and_load() {
    let dir = loaded_sweep();
    let records = records(dir);
    let mut reader = csv::Reader::from_path(dir.join("results.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    let col = |row: &csv::StringRecord, name: &str| {
        let at = header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name}"));
        row[at].to_string()
    };
    let mut visits = Vec::new();
    for (row, r) in rows.iter().zip(&records) {
        let h = &r["tcp_info"]["headline"];
        for name in ["retransmits", "rtt_us", "busy_share", "rwnd_limited_share"] {
            let cell = col(row, &format!("tcp_{name}"));
            assert!(
                agrees(&cell, &h[name]),
                "{name}: {cell} against {}",
                h[name]
            );
        }
        // The headline is the flows' own: retransmits summed over every sampled socket.
        let flows = r["tcp_info"]["flows"].as_array().unwrap();
        let sum: u64 = flows
            .iter()
            .map(|f| f["measured"]["retransmits"].as_u64().unwrap())
            .sum();
        assert_eq!(h["retransmits"].as_u64(), Some(sum));
        let rtt = h["rtt_us"].as_f64().unwrap();
        assert!(rtt > 0.0, "{h}");
        assert_eq!(col(row, "tcp_info_unavailable_reason"), "");
        visits.push((
            col(row, "key"),
            col(row, "under_load_visit"),
            col(row, "under_load_flows"),
        ));
        let gbps = col(row, "under_load_gbps");
        assert!(agrees(&gbps, &r["under_load"]["gbps"]), "{gbps}");
    }
    visits.sort();
    assert_eq!(
        visits,
        [
            ("send/rr/64/1".into(), "unloaded".into(), String::new()),
            (
                "send/rr/64/1/under-load".into(),
                "loaded".into(),
                "1".into()
            ),
        ]
    );
}

#[test]
fn openmetrics_has_the_tcp_families_per_flow_and_side_and_the_load_ratio() {
    let dir = loaded_sweep();
    let out = common::bytepath().arg("export").arg(dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let parsed = parse_openmetrics(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    for (name, unit) in [
        ("bytepath_tcp_retransmits_segments", "segments"),
        ("bytepath_tcp_rtt_seconds", "seconds"),
        ("bytepath_tcp_cwnd_segments", "segments"),
        (
            "bytepath_tcp_delivery_rate_bytes_per_second",
            "bytes_per_second",
        ),
        ("bytepath_tcp_busy_ratio", "ratio"),
        ("bytepath_tcp_rwnd_limited_ratio", "ratio"),
        ("bytepath_tcp_sndbuf_limited_ratio", "ratio"),
    ] {
        let family = &parsed
            .families
            .get(name)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(family.unit, unit);
        // Two points (0 and 1 load flows) × (client, server) of flow 0, each once.
        let mut seen: Vec<(String, String, String)> = family
            .iter_samples()
            .map(|s| {
                let l = s.get_labelset().unwrap();
                let get = |k: &str| l.get_label_value(k).unwrap_or("").to_string();
                (get("under_load_flows"), get("flow"), get("side"))
            })
            .collect();
        seen.sort();
        let expected: Vec<(String, String, String)> = ["0", "1"]
            .iter()
            .flat_map(|u| ["client", "server"].map(|s| (u.to_string(), "0".into(), s.into())))
            .collect();
        assert_eq!(seen, expected, "{name}");
    }
    // The ratio is the loaded point's client p50 over its twin's.
    let records = records(dir);
    let p50 = |loaded: bool| {
        let r = records
            .iter()
            .find(|r| r["under_load"].is_object() == loaded)
            .unwrap();
        r["sides"][0]["latency_ns"]["p50"].as_f64().unwrap()
    };
    let family = &parsed.families["bytepath_under_load_latency_p50_ratio"];
    let samples: Vec<_> = family.iter_samples().collect();
    assert_eq!(samples.len(), 1);
    let OpenMetricsValue::Gauge(v) = &samples[0].value else {
        panic!("not a gauge")
    };
    let expected = p50(true) / p50(false);
    assert!(
        (v.as_f64() - expected).abs() <= 1e-12 * expected,
        "{v:?} {expected}"
    );
    assert!(parsed
        .families
        .contains_key("bytepath_under_load_load_throughput_gbit_per_second"));
}

#[test]
fn report_md_holds_the_per_flow_table_with_the_records_figures() {
    let dir = loaded_sweep();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let section = md
        .split("## What limited each flow? (per flow and side)")
        .nth(1)
        .unwrap_or_else(|| panic!("no section: {md}"));
    let rows: Vec<&str> = section
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| send/rr/64/1"))
        .collect();
    assert_eq!(rows.len(), 4, "{section}");
    let records = records(dir);
    let flow = &records[0]["tcp_info"]["flows"][0];
    let key = records[0]["sweep_point"]["key"].as_str().unwrap();
    let retransmits = flow["measured"]["retransmits"].as_u64().unwrap();
    let row = format!("| {key} | 0 | {} | ", flow["side"].as_str().unwrap());
    let line = rows.iter().find(|l| l.starts_with(&row)).unwrap();
    assert!(line.contains(&format!(" | {retransmits} | ")), "{line}");
}
