//! `bytepath servers --remote`: the server models run on a loopback `bytepath server`, which
//! reports what the server alone cost; this process runs the load generator and measures.
mod common;
use common::{bytepath, u, Server};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

fn servers(port: u16, args: &[&str]) -> (Vec<Value>, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let out = bytepath()
        .args([
            "servers",
            "--json",
            "--duration",
            "300ms",
            "--warmup",
            "50ms",
            "--visits",
            "1",
        ])
        .args(["--remote", &format!("127.0.0.1:{port}")])
        .args(["--out", dir.path().to_str().unwrap()])
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let records = serde_json::from_slice(&out.stdout).unwrap_or_default();
    (records, out)
}

#[test]
fn every_model_is_served_by_the_remote_server_and_measured_here() {
    let server = Server::start("2s", &[]);
    let (records, out) = servers(
        server.port,
        &["--models", "epoll,select,iterative", "--clients", "1,15"],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(records.len(), 6);
    for r in &records {
        let c = &r["config"];
        let what = format!("{}/{}", c["model"], c["clients"]);
        assert_eq!(r["status"], "completed", "{what}: {r}");
        let m = &r["metrics"];
        assert!(u(&m["requests"]) > 0, "{what}");
        assert_eq!(u(&m["mismatched_requests"]), 0, "{what}");
        let s = &m["server"];
        assert!(u(&s["threads"]) > 0, "{what}: {s}");
        assert!(s["cpu_per_request_ns"].as_f64().unwrap() > 0.0, "{what}");
        // The iterative server takes one client at a time: the rest wait in its backlog.
        let accepted = u(&s["accepted_connections"]);
        if c["model"] == "iterative" {
            assert!(accepted >= 1, "{what}");
        } else {
            assert_eq!(accepted, u(&c["clients"]), "{what}");
        }
        let place = c["where_sides_run"].as_str().unwrap();
        assert!(
            place.contains(&format!("the server at 127.0.0.1:{}", server.port)),
            "{place}"
        );
        assert_eq!(c["pin"], "none");
    }
}

#[test]
fn clients_above_the_server_limit_are_refused_and_the_server_serves_the_next_client() {
    let server = Server::start("2s", &["--max-clients", "10"]);
    let (records, out) = servers(server.port, &["--models", "epoll", "--clients", "11,2"]);
    assert!(out.status.success(), "{out:?}");
    // The client counts come in the seed's order.
    let at = |c: u64| {
        records
            .iter()
            .find(|r| r["config"]["clients"] == c)
            .unwrap()
    };
    assert_eq!(at(11)["status"], "refused");
    let reason = at(11)["reason"].as_str().unwrap();
    assert!(
        reason.contains("11 clients") && reason.contains("--max-clients"),
        "{reason}"
    );
    assert_eq!(at(2)["status"], "completed", "{}", at(2));
    assert_eq!(u(&at(2)["metrics"]["server"]["accepted_connections"]), 2);
}

#[test]
fn placements_that_do_not_apply_across_hosts_are_refused_in_one_line() {
    for (extra, expected) in [
        (&["--netns"][..], "--netns with --remote"),
        (
            &["--placement", "split"][..],
            "--placement split with --remote",
        ),
        (
            &["--stalled-clients", "3"][..],
            "--stalled-clients with --remote",
        ),
    ] {
        // Refused before any connection: no server needed at the port.
        let (_, out) = servers(9, extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

fn write_frame(s: &mut TcpStream, message: Value) {
    let body = serde_json::to_vec(&message).unwrap();
    s.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
    s.write_all(&body).unwrap();
}

fn read_frame(s: &mut TcpStream) -> Value {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).unwrap();
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

/// A stand-in server whose kernel has no io_uring (this host's may have it): it says hello
/// with `capabilities` and answers every servers request as skipped.
fn fake_server(capabilities: Value) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let mut s = s.unwrap();
            read_frame(&mut s);
            write_frame(
                &mut s,
                json!({"type": "server_hello", "version": bytepath::remote::protocol::VERSION, "capabilities": capabilities,
                       "random": "00", "secure": false}),
            );
            // Insecure: its system follows the hellos at once.
            write_frame(&mut s, json!({"type": "system", "system": "fake"}));
            if read_frame(&mut s)["type"] == "servers_run" {
                let reason = "io_uring: not available (io_uring_setup: ENOSYS)";
                write_frame(&mut s, json!({"type": "servers_skipped", "reason": reason}));
            }
        }
    });
    port
}

#[test]
fn a_model_the_server_cannot_run_is_skipped_with_its_reason() {
    let port = fake_server(json!(["tcp", "servers"]));
    let (records, out) = servers(port, &["--models", "uring", "--clients", "3"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(records[0]["status"], "skipped");
    let reason = records[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("the server at 127.0.0.1:{port}")) && reason.contains("ENOSYS"),
        "{reason}"
    );
}

#[test]
fn a_server_without_server_models_is_refused_before_any_point() {
    let port = fake_server(json!(["tcp", "stream", "rr"]));
    let (_, out) = servers(port, &["--models", "epoll", "--clients", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot run server models"), "{err}");
}
