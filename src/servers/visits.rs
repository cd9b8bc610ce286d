//! A servers study's records are one per visit; its table and plots show one row per point.
//! `points` folds each (model, clients)'s visits into one record: rates, per-request figures
//! and latency percentiles are the mean over completed visits (every visit is as long as the
//! others), counts are summed, peaks are the largest; `visits` says how many it rests on.
//! A folder from before visits (one record per point) passes through unchanged.
use serde_json::{json, Value};

/// (model, clients) of a record.
pub fn point_of(r: &Value) -> (String, u64) {
    (
        r["config"]["model"].as_str().unwrap_or("?").to_string(),
        r["config"]["clients"].as_u64().unwrap_or(0),
    )
}

/// The connection mode of a record ("persistent" for a record from before the mode was kept).
pub fn connection_of(r: &Value) -> &str {
    r["config"]["connection"].as_str().unwrap_or("persistent")
}

/// The round a visit was made in (0 for a record from before visits).
pub fn round(r: &Value) -> usize {
    r["visit"]["round"].as_u64().unwrap_or(0) as usize
}

/// One record per point, in the matrix's order.
pub fn points(records: &[Value]) -> Vec<Value> {
    // ((model, clients), connection mode), and the point's index in the matrix.
    type Key<'a> = ((String, u64), &'a str);
    let mut keys: Vec<(Key, u64)> = Vec::new();
    for r in records {
        let key = (point_of(r), connection_of(r));
        if !keys.iter().any(|(k, _)| *k == key) {
            let index = r["sweep_point"]["index"]
                .as_u64()
                .unwrap_or(keys.len() as u64);
            keys.push((key, index));
        }
    }
    keys.sort_by_key(|(_, index)| *index);
    keys.into_iter()
        .map(|(key, _)| {
            let visits: Vec<&Value> = records
                .iter()
                .filter(|r| (point_of(r), connection_of(r)) == key)
                .collect();
            fold(&counted(&visits))
        })
        .collect()
}

/// The visits a point's figures rest on: a disturbed visit made again later in its round
/// gives way to the redo (both stay in results.jsonl).
fn counted<'a>(visits: &[&'a Value]) -> Vec<&'a Value> {
    let disturbed = |r: &Value| r["visit"]["interference"]["disturbed"] == true;
    visits
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            !(disturbed(r) && visits[i + 1..].iter().any(|later| round(later) == round(r)))
        })
        .map(|(_, r)| *r)
        .collect()
}

fn fold(visits: &[&Value]) -> Value {
    let done: Vec<&Value> = visits
        .iter()
        .filter(|r| r["status"] == "completed")
        .copied()
        .collect();
    let mut out = (*done.first().or(visits.first()).expect("a visit")).clone();
    if visits.len() == 1 && visits[0]["visit"].is_null() {
        return out;
    }
    // `--profile` samples one visit of the point (its last round's): the point carries it.
    if let Some(p) = visits.iter().find(|r| !r["profile"].is_null()) {
        out["profile"] = p["profile"].clone();
        out["profiled_window"] = p["profiled_window"].clone();
    }
    let worst = ["failed", "interrupted"]
        .into_iter()
        .find(|s| visits.iter().any(|r| r["status"] == *s));
    if let Some(s) = worst {
        out["status"] = (*s).into();
    }
    let errors: Vec<Value> = visits
        .iter()
        .flat_map(|r| {
            let round = round(r);
            r["errors"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |e| json!(format!("round {round}: {}", e.as_str().unwrap_or(""))))
        })
        .collect();
    out["errors"] = json!(errors);
    out["visits"] = json!({ "count": visits.len(), "completed": done.len() });
    if done.is_empty() || out["metrics"].is_null() {
        return out;
    }
    fold_metrics(&mut out["metrics"], &done);
    out
}

/// A point's metrics from its completed visits: rates and per-request figures averaged,
/// counts summed, peaks the largest, the minimum latency the smallest.
fn fold_metrics(m: &mut Value, done: &[&Value]) {
    for path in [
        "/requests_per_s",
        "/latency_ns/p50",
        "/latency_ns/p99",
        "/latency_ns/p99_9",
        "/latency_ns/mean",
        "/server/cpu_per_request_ns",
        "/server/context_switches_per_request",
        "/client/cpu_share_per_thread",
    ] {
        set(m, path, mean(done, path));
    }
    for path in ["/requests", "/mismatched_requests", "/connection_errors"] {
        set(m, path, Some(values(done, path).iter().sum()));
    }
    for path in [
        "/latency_ns/max",
        "/server/threads",
        "/server/peak_rss_bytes",
    ] {
        set(m, path, values(done, path).into_iter().reduce(f64::max));
    }
    let min = values(done, "/latency_ns/min").into_iter().reduce(f64::min);
    set(m, "/latency_ns/min", min);
}

fn values(done: &[&Value], path: &str) -> Vec<f64> {
    done.iter()
        .filter_map(|r| r["metrics"].pointer(path)?.as_f64())
        .collect()
}

fn mean(done: &[&Value], path: &str) -> Option<f64> {
    let v = values(done, path);
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Sets `path` (which must exist) to `v`; integers stay integers.
fn set(m: &mut Value, path: &str, v: Option<f64>) {
    let (Some(slot), Some(v)) = (m.pointer_mut(path), v) else {
        return;
    };
    *slot = if slot.is_u64() && v.fract() == 0.0 && v >= 0.0 {
        json!(v as u64)
    } else {
        json!(v)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visit(model: &str, clients: u64, round: usize, rps: f64, status: &str) -> Value {
        json!({
            "config": {"model": model, "clients": clients},
            "status": status, "errors": [],
            "sweep_point": {"index": if model == "epoll" { 0 } else { 1 }},
            "visit": {"round": round},
            "metrics": {"requests": 10, "requests_per_s": rps,
                        "latency_ns": {"min": 100 + round, "p99": rps / 10.0, "max": 1000 * round},
                        "server": {"threads": round + 1, "cpu_per_request_ns": rps}},
        })
    }

    #[test]
    fn visits_fold_into_one_record_per_point_in_the_matrix_order() {
        let records = [
            visit("select", 5, 0, 100.0, "completed"),
            visit("epoll", 5, 0, 300.0, "completed"),
            visit("epoll", 5, 1, 500.0, "completed"),
            visit("select", 5, 1, 200.0, "failed"),
        ];
        let p = points(&records);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0]["config"]["model"], "epoll", "index 0 first");
        assert_eq!(p[0]["metrics"]["requests_per_s"], 400.0);
        assert_eq!(p[0]["metrics"]["requests"], 20);
        assert_eq!(p[0]["metrics"]["latency_ns"]["min"], 100);
        assert_eq!(p[0]["metrics"]["latency_ns"]["max"], 1000);
        assert_eq!(p[0]["metrics"]["server"]["threads"], 2);
        assert_eq!(p[0]["visits"]["count"], 2);
        assert_eq!(p[1]["status"], "failed", "a failed visit marks its point");
        assert_eq!(
            p[1]["metrics"]["requests_per_s"], 100.0,
            "from the completed visit"
        );
    }

    #[test]
    fn a_disturbed_visit_made_again_gives_way_to_its_redo() {
        let mut disturbed = visit("epoll", 5, 0, 900.0, "completed");
        disturbed["visit"]["interference"] = json!({"disturbed": true});
        let mut last_round = visit("epoll", 5, 1, 700.0, "completed");
        last_round["visit"]["interference"] = json!({"disturbed": true});
        let records = [
            disturbed,
            visit("epoll", 5, 0, 300.0, "completed"),
            visit("epoll", 5, 1, 500.0, "completed"),
            last_round,
        ];
        let p = points(&records);
        // Round 0's disturbed 900 gives way to its redo (300); round 1's disturbed redo has
        // no later visit in its round, so the earlier quiet 500 stays beside it.
        assert_eq!(p[0]["visits"]["count"], 3);
        assert_eq!(p[0]["metrics"]["requests_per_s"], 500.0);
    }

    #[test]
    fn the_profiled_visit_gives_its_point_the_profile() {
        let mut last = visit("epoll", 5, 1, 500.0, "completed");
        last["profile"] = json!({"status": "measured", "samples": 7});
        last["profiled_window"] = json!("after the last round's visit");
        let p = points(&[visit("epoll", 5, 0, 300.0, "completed"), last]);
        assert_eq!(p[0]["profile"]["samples"], 7);
        assert_eq!(p[0]["profiled_window"], "after the last round's visit");
        let unprofiled = points(&[visit("epoll", 5, 0, 300.0, "completed")]);
        assert!(unprofiled[0].get("profile").is_none());
    }

    #[test]
    fn a_record_from_before_visits_passes_through() {
        let mut old = visit("epoll", 5, 0, 300.0, "completed");
        old.as_object_mut().unwrap().remove("visit");
        assert_eq!(points(std::slice::from_ref(&old)), vec![old]);
    }
}
