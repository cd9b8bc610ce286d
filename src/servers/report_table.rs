//! The servers report's table: one row per (model, clients) point, fixed columns then the
//! hardware counters some point measured, and the note on those no point could count.
use crate::report::study::Table;
use crate::report::units;
use serde_json::Value;

pub(super) fn model(r: &Value) -> &str {
    r["config"]["model"].as_str().unwrap_or("?")
}

/// The model as the table, notes and plots name a point: "epoll", or "epoll per-request" for
/// a point measured with a connection per request (so both modes of one study stay apart).
pub(super) fn label(r: &Value) -> String {
    match super::visits::connection_of(r) {
        "per-request" => format!("{} per-request", model(r)),
        _ => model(r).to_string(),
    }
}

pub(super) fn status(r: &Value) -> &str {
    r["status"].as_str().unwrap_or("?")
}

const FIXED: [&str; 12] = [
    "model",
    "clients",
    "status",
    "req/s",
    "p50 µs",
    "p99 µs",
    "p99.9 µs",
    "server CPU ns/req",
    "context switches/req",
    "server threads",
    "server peak RSS",
    "client CPU/thread",
];

/// A hardware counter of the server process: (column header, key in metrics.server, shown
/// per request rather than as it is).
const HARDWARE: [(&str, &str, bool); 4] = [
    ("cycles/req", "cycles", true),
    ("instructions/req", "instructions", true),
    ("IPC", "ipc", false),
    ("cache misses/req", "cache_misses", true),
];

pub(super) fn server(r: &Value) -> &Value {
    &r["metrics"]["server"]
}

/// The hardware counters measured at some point of the study: only these get a column.
fn hardware_measured(records: &[Value]) -> Vec<(&'static str, &'static str, bool)> {
    HARDWARE
        .into_iter()
        .filter(|(_, key, _)| records.iter().any(|r| server(r)[key].is_number()))
        .collect()
}

/// One line for the hardware counters no point measured, with the first reason recorded
/// (a missing PMU or perf_event_paranoid is the same for every point).
pub(super) fn hardware_note(records: &[Value]) -> Option<String> {
    let measured = hardware_measured(records);
    let missing: Vec<&str> = HARDWARE
        .iter()
        .filter(|h| !measured.contains(h))
        .map(|(header, ..)| header.trim_end_matches("/req"))
        .collect();
    if missing.is_empty() || records.iter().all(|r| server(r).is_null()) {
        return None;
    }
    let reason = records
        .iter()
        .flat_map(|r| {
            HARDWARE.iter().filter_map(move |(_, key, _)| {
                server(r)[format!("{key}_unavailable_reason")].as_str()
            })
        })
        .next()
        .unwrap_or("not counted");
    Some(format!(
        "Server hardware counters ({}): n/a: {reason}.",
        missing.join(", ")
    ))
}

/// A cell: "n/a" where the point was measured but the figure is not there, empty where the
/// point was not measured at all.
fn cell(r: &Value, v: Option<f64>, text: impl Fn(f64) -> String) -> String {
    match v {
        Some(v) => text(v),
        None if r["metrics"].is_null() => String::new(),
        None => "n/a".into(),
    }
}

pub(super) fn clients_cell(r: &Value) -> String {
    let c = &r["config"];
    match (c["clients"].as_u64(), c["clients_requested"].as_u64()) {
        (Some(n), Some(asked)) if n != asked => format!("{n} of {asked}"),
        (Some(n), _) => n.to_string(),
        _ => "?".into(),
    }
}

fn row(r: &Value, hardware: &[(&str, &str, bool)]) -> Vec<String> {
    let m = &r["metrics"];
    let s = server(r);
    let us = |key: &str| {
        cell(r, m["latency_ns"][key].as_f64(), |v| {
            format!("{:.1}", v / 1e3)
        })
    };
    let mut out = vec![
        label(r),
        clients_cell(r),
        status(r).to_string(),
        cell(r, m["requests_per_s"].as_f64(), |v| format!("{v:.0}")),
        us("p50"),
        us("p99"),
        us("p99_9"),
        cell(r, s["cpu_per_request_ns"].as_f64(), |v| format!("{v:.0}")),
        cell(r, s["context_switches_per_request"].as_f64(), |v| {
            format!("{v:.2}")
        }),
        cell(r, s["threads"].as_f64(), |v| format!("{v:.0}")),
        cell(r, s["peak_rss_bytes"].as_f64(), units::bytes),
        cell(r, m["client"]["cpu_share_per_thread"].as_f64(), |v| {
            format!("{:.0} %", v * 100.0)
        }),
    ];
    let requests = m["requests"].as_f64().filter(|&n| n > 0.0);
    for &(_, key, per_request) in hardware {
        let v = s[key].as_f64();
        let v = if per_request {
            v.zip(requests).map(|(v, n)| v / n)
        } else {
            v
        };
        out.push(cell(r, v, |v| format!("{v:.2}")));
    }
    out
}

pub(super) fn table(records: &[Value]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let hardware = hardware_measured(records);
    let header: Vec<&'static str> = FIXED
        .iter()
        .copied()
        .chain(hardware.iter().map(|(h, ..)| *h))
        .collect();
    let rows = records.iter().map(|r| row(r, &hardware)).collect();
    (header, rows)
}

/// Every point that was not measured, or not fully, or not as asked, with why.
pub(super) fn study_table(records: &[Value]) -> Table {
    let (header, rows) = table(records);
    Table {
        header,
        marked: records.iter().map(|r| status(r) != "completed").collect(),
        rows,
    }
}
