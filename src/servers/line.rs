//! The line a servers visit prints as it ends: throughput, latency and the server's cost.
use super::visits::{ServerFigures, ServersView};
use crate::record::view::shown;
use serde::Deserialize;

/// A count as its record wrote it (`null` where it has none).
fn count(v: Option<f64>) -> String {
    v.map_or("null".into(), |v| v.to_string())
}

/// One line per visit as it ends, from its record as written.
pub fn line(record: &serde_json::Value) -> String {
    match ServersView::deserialize(record) {
        Ok(r) => line_of(&r),
        Err(e) => format!("a record that does not read ({e})"),
    }
}

/// One line per point (per visit, as it ends).
pub fn line_of(r: &ServersView) -> String {
    let c = r.config();
    let head = format!(
        "{:<9} {} clients",
        c.model.as_deref().unwrap_or("?"),
        shown(&c.clients)
    );
    let capped = c
        .clients_capped_reason
        .as_deref()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    if let Some(status @ ("refused" | "skipped")) = r.status.as_deref() {
        return format!(
            "{head} {status}: {}{capped}",
            r.reason.as_deref().unwrap_or("")
        );
    }
    let Some(m) = &r.metrics else {
        return format!("{head} failed: {}", shown(&r.errors));
    };
    let lat = m.latency_ns.unwrap_or_default();
    let us = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{:.1}", v / 1e3));
    let none = ServerFigures::default();
    let s = m.server.as_ref().unwrap_or(&none);
    let mut text = format!(
        "{head} {:>10} req/s  p50 {} p99 {} p99.9 {} max {} µs  server CPU/req {} ns, cs/req {}, threads {}, peak RSS {} KiB; client CPU/thread {}",
        m.requests_per_s.map_or("n/a".into(), |v| format!("{v:.0}")),
        us(lat.p50), us(lat.p99), us(lat.p99_9), us(lat.max),
        s.cpu_per_request_ns.map_or("n/a".into(), |v| format!("{v:.0}")),
        s.context_switches_per_request.map_or("n/a".into(), |v| format!("{v:.2}")),
        count(s.threads),
        s.peak_rss_bytes.map_or("n/a".into(), |b| (b as u64 / 1024).to_string()),
        m.client
            .and_then(|c| c.cpu_share_per_thread)
            .map_or("n/a".into(), |v| format!("{:.0}%", v * 100.0)),
    );
    if r.load_limited().is_some() {
        text += " (load-limited: not ranked)";
    }
    if let Some(n) = m.unserved_clients.filter(|&n| n > 0.0) {
        text += &format!("; {n} clients got no echo (their waits are in the latency)");
    }
    if m.mismatched_requests != Some(0.0) {
        text += &format!("; {} MISMATCHED echoes", count(m.mismatched_requests));
    }
    if !r.errors().is_empty() {
        text += &format!("; errors: {}", shown(&r.errors));
    }
    text + &capped
}
