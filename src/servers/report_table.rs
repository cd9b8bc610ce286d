//! The servers report's table: one row per (model, clients) point, fixed columns then the
//! hardware counters some point measured, and the note on those no point could count.
use super::visits::{ServerFigures, ServersView};
use crate::report::study::Table;
use crate::report::units;

pub(super) fn model(r: &ServersView) -> &str {
    r.config().model.as_deref().unwrap_or("?")
}

/// The model as the table, notes and plots name a point: "epoll", or "epoll per-request" for
/// a point measured with a connection per request (so both modes of one study stay apart).
pub(super) fn label(r: &ServersView) -> String {
    match super::visits::connection_of(r) {
        "per-request" => format!("{} per-request", model(r)),
        _ => model(r).to_string(),
    }
}

pub(super) fn status(r: &ServersView) -> &str {
    r.status()
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

/// A hardware counter of the server process: its column header, its figure and the reason
/// the record gives where it has none, and whether it is shown per request rather than as it is.
type Hardware = (
    &'static str,
    fn(&ServerFigures) -> Option<f64>,
    fn(&ServerFigures) -> Option<&str>,
    bool,
);
const HARDWARE: [Hardware; 4] = [
    (
        "cycles/req",
        |s| s.cycles,
        |s| s.cycles_unavailable_reason.as_deref(),
        true,
    ),
    (
        "instructions/req",
        |s| s.instructions,
        |s| s.instructions_unavailable_reason.as_deref(),
        true,
    ),
    (
        "IPC",
        |s| s.ipc,
        |s| s.ipc_unavailable_reason.as_deref(),
        false,
    ),
    (
        "cache misses/req",
        |s| s.cache_misses,
        |s| s.cache_misses_unavailable_reason.as_deref(),
        true,
    ),
];

/// The hardware counters measured at some point of the study: only these get a column.
fn hardware_measured(records: &[ServersView]) -> Vec<Hardware> {
    HARDWARE
        .into_iter()
        .filter(|(_, figure, ..)| {
            records
                .iter()
                .any(|r| r.server().and_then(figure).is_some())
        })
        .collect()
}

/// One line for the hardware counters no point measured, with the first reason recorded
/// (a missing PMU or perf_event_paranoid is the same for every point).
pub(super) fn hardware_note(records: &[ServersView]) -> Option<String> {
    let measured: Vec<&str> = hardware_measured(records).iter().map(|h| h.0).collect();
    let missing: Vec<&str> = HARDWARE
        .iter()
        .filter(|h| !measured.contains(&h.0))
        .map(|(header, ..)| header.trim_end_matches("/req"))
        .collect();
    if missing.is_empty() || records.iter().all(|r| r.server().is_none()) {
        return None;
    }
    let reason = records
        .iter()
        .filter_map(ServersView::server)
        .flat_map(|s| HARDWARE.iter().filter_map(move |(_, _, why, _)| why(s)))
        .next()
        .unwrap_or("not counted");
    Some(format!(
        "Server hardware counters ({}): n/a: {reason}.",
        missing.join(", ")
    ))
}

/// A cell: "n/a" where the point was measured but the figure is not there, empty where the
/// point was not measured at all.
fn cell(r: &ServersView, v: Option<f64>, text: impl Fn(f64) -> String) -> String {
    match v {
        Some(v) => text(v),
        None if r.metrics.is_none() => String::new(),
        None => "n/a".into(),
    }
}

pub(super) fn clients_cell(r: &ServersView) -> String {
    let c = r.config();
    match (c.clients, c.clients_requested) {
        (Some(n), Some(asked)) if n != asked => format!("{n} of {asked}"),
        (Some(n), _) => n.to_string(),
        _ => "?".into(),
    }
}

fn row(r: &ServersView, hardware: &[Hardware], chosen: &[f64]) -> Vec<String> {
    let m = r.metrics.clone().unwrap_or_default();
    let s = m.server.clone().unwrap_or_default();
    let lat = m.latency_ns.unwrap_or_default();
    let us = |v: Option<f64>| cell(r, v, |v| format!("{:.1}", v / 1e3));
    let mut out = vec![
        label(r),
        clients_cell(r),
        status(r).to_string(),
        cell(r, m.requests_per_s, |v| format!("{v:.0}")),
        us(lat.p50),
        us(lat.p99),
        us(lat.p99_9),
        cell(r, s.cpu_per_request_ns, |v| format!("{v:.0}")),
        cell(r, s.context_switches_per_request, |v| format!("{v:.2}")),
        cell(r, s.threads, |v| format!("{v:.0}")),
        cell(r, s.peak_rss_bytes, units::bytes),
        cell(r, m.client.and_then(|c| c.cpu_share_per_thread), |v| {
            // The mark the answers read: a visit at LOAD_LIMITED_SHARE or more.
            let mark = match r.load_limited() {
                Some(_) => " (load-limited)",
                None => "",
            };
            format!("{:.0} %{mark}", v * 100.0)
        }),
    ];
    for &p in chosen {
        out.push(us(super::percentiles::value(&m.distribution, p)));
    }
    let requests = m.requests.filter(|&n| n > 0.0);
    for &(_, figure, _, per_request) in hardware {
        let v = figure(&s);
        let v = if per_request {
            v.zip(requests).map(|(v, n)| v / n)
        } else {
            v
        };
        out.push(cell(r, v, |v| format!("{v:.2}")));
    }
    out
}

/// The header and rows: the fixed columns, the chosen percentiles beyond them
/// (`--percentiles`), then the hardware counters some point measured.
pub(super) fn table(records: &[ServersView]) -> (Vec<String>, Vec<Vec<String>>) {
    let hardware = hardware_measured(records);
    let chosen = super::percentiles::extra(
        records
            .iter()
            .filter_map(|r| r.metrics.as_ref())
            .map(|m| &m.distribution),
    );
    let header: Vec<String> = FIXED
        .iter()
        .map(|h| h.to_string())
        .chain(chosen.iter().map(|&p| super::percentiles::header(p)))
        .chain(hardware.iter().map(|(h, ..)| h.to_string()))
        .collect();
    let rows = records.iter().map(|r| row(r, &hardware, &chosen)).collect();
    (header, rows)
}

/// Every point that was not measured, or not fully, or not as asked, with why.
pub(super) fn study_table(records: &[ServersView]) -> Table {
    let (header, rows) = table(records);
    Table {
        header,
        marked: records.iter().map(|r| status(r) != "completed").collect(),
        rows,
    }
}
