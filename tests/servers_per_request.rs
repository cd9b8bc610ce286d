//! `bytepath servers --connection per-request`: every request arrives on a new connection,
//! so the server accepts one connection per request; persistent keeps one per client.
mod common;
use common::{bytepath, u};
use serde_json::Value;

fn study(connection: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = bytepath()
        .args([
            "servers",
            "--models",
            "epoll,threaded",
            "--clients",
            "4",
            "--size",
            "64",
        ])
        .args([
            "--duration",
            "600ms",
            "--visits",
            "1",
            "--connection",
            connection,
        ])
        .arg("--out")
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    common::assert_success(&out);
    let text = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn per_request_clients_make_the_server_accept_one_connection_per_request() {
    let records = study("per-request");
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r["status"], "completed", "{}", r["errors"]);
        assert_eq!(r["config"]["connection"], "per-request");
        let m = &r["metrics"];
        let accepted = u(&m["server"]["accepted_connections"]);
        let all = u(&m["requests_all_phases"]);
        assert!(u(&m["requests"]) > 100, "{m}");
        assert_eq!(u(&m["connection_errors"]), 0, "{m}");
        // One connection per request: only each client's last connection (opened after its
        // last echo, maybe never used) may differ.
        assert!(
            accepted.abs_diff(all) <= 4,
            "accepted {accepted}, requests {all}"
        );
        assert!(u(&m["connections_opened"]).abs_diff(all) <= 4, "{m}");
    }
}

#[test]
fn persistent_clients_are_accepted_once_each() {
    for r in study("persistent") {
        assert_eq!(r["config"]["connection"], "persistent");
        let m = &r["metrics"];
        assert_eq!(u(&m["server"]["accepted_connections"]), 4, "{m}");
        assert!(u(&m["requests"]) > 100, "{m}");
        assert!(m.get("connections_opened").is_none(), "{m}");
    }
}

#[test]
fn an_unknown_connection_model_and_a_clash_are_refused_in_one_line() {
    let out = bytepath()
        .args(["servers", "--connection", "pooled"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--connection \"pooled\": allowed: persistent, per-request"),
        "{err}"
    );
    let out = bytepath()
        .args([
            "servers",
            "--connection",
            "per-request",
            "--requests-per-connection",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}
