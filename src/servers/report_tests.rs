//! The servers report from records shaped as `record::point` writes them.
use super::*;
use crate::servers::report_table::table;
use serde_json::{json, Value};

/// Records given as JSON, as the report reads them.
fn views(records: &[Value]) -> Vec<ServersView> {
    records
        .iter()
        .map(|r| serde_json::from_value(r.clone()).unwrap())
        .collect()
}

/// A record shaped as `record::point` writes it; `rps` None for a point not measured.
fn point(model: &str, clients: u64, status: &str, rps: Option<f64>) -> Value {
    let mut r = json!({
        "config": {"model": model, "clients": clients, "clients_requested": clients,
            "size_bytes": 64, "duration_s": 0.3, "warmup_s": 0.05, "loop": "closed",
            "rate_per_s": null, "client_threads": 2, "server_threads": 1,
            "requests_per_connection": null, "stalled_clients": 0, "open_file_limit": 20000},
        "environment": {"kernel_release": "6.1.0", "cpu_model": "Test CPU", "online_cpus": 2,
            "allowed_cpus": "0-1"},
        "status": status,
        "errors": [],
    });
    if let Some(rps) = rps {
        r["metrics"] = json!({
            "requests": (rps * 0.3) as u64, "requests_per_s": rps,
            "latency_ns": {"min": 9000, "p50": 20000, "p99": 90000, "p99_9": 150000, "max": 400000},
            "mismatched_requests": 0, "connection_errors": 0,
            "server": {"cpu_per_request_ns": 1e9 / rps, "context_switches_per_request": 0.5,
                "threads": 1, "peak_rss_bytes": 3 << 20,
                "cycles": null, "cycles_unavailable_reason": "no PMU",
                "instructions": null, "instructions_unavailable_reason": "no PMU",
                "ipc": null, "ipc_unavailable_reason": "no PMU",
                "cache_misses": null, "cache_misses_unavailable_reason": "no PMU"},
            "client": {"cpu_share_per_thread": 0.4, "threads": 2},
        });
    }
    r
}

fn study() -> Vec<Value> {
    let mut refused = point("select", 2000, "refused", None);
    refused["reason"] = json!("select cannot watch 2000 clients: descriptors would pass FD_SETSIZE (1024); at most 1000 clients here");
    let mut skipped = point("uring", 2000, "skipped", None);
    skipped["reason"] = json!("io_uring_setup: Operation not permitted");
    let mut failed = point("poll", 2000, "failed", Some(1000.0));
    failed["errors"] = json!(["the server process ended: killed by signal 9"]);
    vec![
        point("select", 15, "completed", Some(50000.0)),
        point("epoll", 15, "completed", Some(60000.0)),
        refused,
        point("epoll", 2000, "completed", Some(55000.0)),
        skipped,
        failed,
    ]
}

#[test]
fn the_table_has_a_row_per_record_in_the_order_measured() {
    let records = views(&study());
    let (_, rows) = table(&records);
    let keys: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
        .collect();
    assert_eq!(keys.len(), 6);
    assert_eq!(keys[2], ("select".into(), "2000".into(), "refused".into()));
    assert_eq!(rows[1][3], "60000", "req/s");
    assert_eq!(rows[1][5], "90.0", "p99 in µs");
    assert_eq!(rows[2][3], "", "a refused point has no figures, not zeros");
    let md = markdown(&records, "completed", 0.05);
    assert_eq!(md.lines().filter(|l| l.starts_with("| ")).count(), 1 + 6);
}

#[test]
fn points_not_measured_carry_their_reason() {
    let records = views(&study());
    let notes = notes(&records);
    assert!(notes.contains(&"select at 2000 clients: refused: select cannot watch 2000 clients: descriptors would pass FD_SETSIZE (1024); at most 1000 clients here".to_string()), "{notes:?}");
    assert!(notes
        .iter()
        .any(|n| n.starts_with("uring at 2000 clients: skipped: io_uring_setup")));
    assert!(notes
        .iter()
        .any(|n| n.contains("poll at 2000 clients: failed: the server process ended")));
    assert_eq!(notes.len(), 3, "completed points need no note: {notes:?}");

    let mut waiting = point("iterative", 15, "completed", Some(18000.0));
    waiting["metrics"]["server"]["accepted_connections"] = json!(1);
    assert!(super::notes(&views(&[waiting]))[0].contains("accepted 1 of 15 connections"));
    assert!(html(&records, "failed", 0.05).contains("FD_SETSIZE (1024)"));
}

#[test]
fn a_capped_client_count_shows_what_was_asked_and_why() {
    let mut r = point("epoll", 136, "completed", Some(1000.0));
    r["config"]["clients_requested"] = json!(500);
    r["config"]["clients_capped_reason"] =
        json!("--clients 500 capped to 136: RLIMIT_NOFILE is 200");
    let r = views(&[r]);
    assert_eq!(table(&r).1[0][1], "136 of 500");
    assert!(notes(&r)[0].contains("RLIMIT_NOFILE is 200"));
}

#[test]
fn unmeasured_hardware_counters_get_one_note_and_no_column() {
    let records = views(&study());
    let (header, _) = table(&records);
    assert!(!header.iter().any(|h| h == "IPC"), "{header:?}");
    let md = markdown(&records, "completed", 0.05);
    assert_eq!(md.matches("n/a: no PMU").count(), 1, "{md}");

    let mut counted = study();
    counted[1]["metrics"]["server"]["cycles"] = json!(18000.0 * 1000.0);
    let counted = views(&counted);
    let (header, rows) = table(&counted);
    assert_eq!(header.last().map(String::as_str), Some("cycles/req"));
    assert_eq!(
        rows[1].last().unwrap(),
        "1000.00",
        "cycles / 18000 requests"
    );
    assert_eq!(
        rows[0].last().unwrap(),
        "n/a",
        "measured there, not counted"
    );
    assert!(hardware_note(&counted)
        .unwrap()
        .contains("instructions, IPC, cache misses"));
}

#[test]
fn the_page_is_well_formed_and_holds_the_four_plots() {
    let page = html(&views(&study()), "completed", 0.05);
    let doc = crate::report::study::parse_xhtml(&page);
    for (id, ..) in FIGURES {
        let svg = doc
            .descendants()
            .find(|n| n.has_tag_name("svg") && n.attribute("data-plot") == Some(id))
            .unwrap_or_else(|| panic!("no plot {id}"));
        let points = svg
            .descendants()
            .filter(|n| n.attribute("class") == Some("point"))
            .count();
        assert_eq!(points, 3, "{id}: the three completed points only");
    }
}

#[test]
fn an_empty_study_still_renders_and_says_so() {
    let page = html(&[], "interrupted", 0.05);
    assert!(page.contains("No point was measured. Status: interrupted."));
    assert_eq!(page.matches("no completed point").count(), 4);
    assert_eq!(overall(&[], 3), "interrupted");
    assert_eq!(overall(&views(&study()), 6), "failed");
}
