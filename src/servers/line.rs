//! The line a servers visit prints as it ends: throughput, latency and the server's cost.
use serde_json::Value;

fn f(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// One line per point (per visit, as it ends).
pub fn line(r: &Value) -> String {
    let c = &r["config"];
    let head = format!(
        "{:<9} {:>6} clients",
        c["model"].as_str().unwrap_or("?"),
        c["clients"]
    );
    let capped = c["clients_capped_reason"]
        .as_str()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    match r["status"].as_str() {
        Some("refused") | Some("skipped") => {
            return format!(
                "{head} {}: {}{capped}",
                r["status"].as_str().unwrap_or(""),
                r["reason"].as_str().unwrap_or("")
            )
        }
        _ => {}
    }
    let m = &r["metrics"];
    if m.is_null() {
        return format!("{head} failed: {}", r["errors"]);
    }
    let lat = &m["latency_ns"];
    let us = |k: &str| f(&lat[k]).map_or("n/a".into(), |v| format!("{:.1}", v / 1e3));
    let s = &m["server"];
    let per = |k: &str| f(&s[k]).map_or("n/a".into(), |v| format!("{v:.2}"));
    let mut text = format!(
        "{head} {:>10} req/s  p50 {} p99 {} p99.9 {} max {} µs  server CPU/req {} ns, cs/req {}, threads {}, peak RSS {} KiB; client CPU/thread {}",
        f(&m["requests_per_s"]).map_or("n/a".into(), |v| format!("{v:.0}")),
        us("p50"), us("p99"), us("p99_9"), us("max"),
        f(&s["cpu_per_request_ns"]).map_or("n/a".into(), |v| format!("{v:.0}")),
        per("context_switches_per_request"),
        s["threads"],
        s["peak_rss_bytes"].as_u64().map_or("n/a".into(), |b| (b / 1024).to_string()),
        f(&m["client"]["cpu_share_per_thread"]).map_or("n/a".into(), |v| format!("{:.0}%", v * 100.0)),
    );
    if m["mismatched_requests"].as_u64() != Some(0) {
        text += &format!("; {} MISMATCHED echoes", m["mismatched_requests"]);
    }
    let errors = r["errors"].as_array().map_or(0, Vec::len);
    if errors > 0 {
        text += &format!("; errors: {}", r["errors"]);
    }
    text + &capped
}
