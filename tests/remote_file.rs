//! `bytepath file --remote` against a loopback `bytepath server`: the server writes and sends
//! every test file, this host receives and verifies; nothing is left in either side's temporary
//! folder; what cannot work is refused in one line (exit 2) and leaves the server serving.
mod common;
use common::{assert_success, bytepath, u, Server};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// `bytepath file --remote ADDRESS ARGS --json` with its own temporary folder.
fn remote_file(address: &str, args: &[&str], temp: &Path) -> std::process::Output {
    bytepath()
        .args([
            "file",
            "--json",
            "--counters",
            "software",
            "--remote",
            address,
        ])
        .args(args)
        .arg("--out")
        .arg(temp.join("results"))
        .env("TMPDIR", temp)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

#[test]
fn every_mechanism_is_served_remotely_verified_with_both_sides_measured_and_nothing_left() {
    let server = Server::start("2s", &[]);
    let here = tempfile::tempdir().unwrap();
    let out = remote_file(
        &server.address(),
        &[
            "--sizes",
            "4097,1M",
            "--reps",
            "2",
            "--verify",
            "--mechanisms",
            "readsend,sendfile,splice,mmap",
        ],
        here.path(),
    );
    assert_success(&out);
    let study: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(study["status"], "completed");
    let config = &study["config"];
    assert_eq!(config["remote"], server.address().as_str());
    let where_ = config["where_sides_run"].as_str().unwrap();
    assert!(where_.contains(&server.address()), "{where_}");
    assert!(config["timing"].as_str().unwrap().contains("round trip"));
    let transfers = study["transfers"].as_array().unwrap();
    assert_eq!(
        transfers.len(),
        2 * 4 * (2 + 1),
        "sizes x mechanisms x (reps + the counted transfer)"
    );
    // The server opened counters only in the counted transfers it was asked for.
    for t in transfers {
        let counted = t["counter_transfer"] == true;
        let opened = !t["server"]["counters"].as_object().unwrap().is_empty();
        assert_eq!(counted, opened, "{t}");
    }
    for t in transfers {
        assert!(t["error"].is_null(), "{t}");
        assert_eq!(t["verified"], true, "{t}");
        assert!(t["elapsed_ms"].as_f64().unwrap() > 0.0, "{t}");
        // The server's side came back from the server: its calls, usage and residency.
        assert!(u(&t["server_syscalls"]) >= 1, "{t}");
        assert!(t["server"]["system_ns"].is_u64(), "{t}");
        assert!(t["server"]["counters"].is_object(), "{t}");
        assert!(u(&t["client_recv_calls"]) >= 1, "{t}");
        let pages = u(&t["size_bytes"]).div_ceil(4096);
        assert_eq!(u(&t["residency_before"]["total_pages"]), pages, "{t}");
    }
    // The server removes each transfer's folder when its session ends; this host wrote none.
    assert_eq!(entries(server.temp.path()), Vec::<String>::new());
    assert_eq!(entries(here.path()), ["results"]);
}

#[test]
fn a_file_over_the_servers_limit_is_refused_naming_it_and_the_next_client_is_served() {
    let server = Server::start("2s", &["--max-file-size", "1M"]);
    let here = tempfile::tempdir().unwrap();
    let out = remote_file(
        &server.address(),
        &["--sizes", "2M", "--reps", "1"],
        here.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--max-file-size"), "{stderr}");
    assert!(stderr.contains("1048576"), "{stderr}");
    let last = stderr.trim().lines().last().unwrap();
    assert!(
        last.contains("--max-file-size"),
        "the refusal is the last line: {stderr}"
    );

    let next = tempfile::tempdir().unwrap();
    let out = remote_file(
        &server.address(),
        &[
            "--sizes",
            "1M",
            "--reps",
            "1",
            "--verify",
            "--mechanisms",
            "sendfile",
        ],
        next.path(),
    );
    assert_success(&out);
    let study: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(study["transfers"][0]["verified"], true);
    assert_eq!(entries(server.temp.path()), Vec::<String>::new());
}

#[test]
fn what_cannot_work_remotely_is_refused_in_one_line() {
    let here = tempfile::tempdir().unwrap();
    let file = here.path().join("mine.bin");
    std::fs::write(&file, b"bytes").unwrap();
    // Checked before any connection: no server is needed to refuse these.
    for (args, expected) in [
        (
            vec!["--file", file.to_str().unwrap()],
            "--file with --remote",
        ),
        (vec!["--reverse"], "--reverse with file"),
    ] {
        let out = remote_file("127.0.0.1:9", &args, here.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
    }
}

#[test]
fn a_server_without_the_file_capability_is_refused_before_any_transfer() {
    // An older server: its hello announces no "file".
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let older = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut header = [0u8; 4];
        s.read_exact(&mut header).unwrap();
        let mut hello = vec![0u8; u32::from_be_bytes(header) as usize];
        s.read_exact(&mut hello).unwrap();
        // The same protocol version, from a release before the `file` capability.
        let body = format!(
            r#"{{"type":"server_hello","version":{},"capabilities":["tcp","stream","rr","verify"],"random":"00","secure":false}}"#,
            bytepath::remote::protocol::VERSION
        );
        // Insecure: its system follows the hellos at once.
        let system = r#"{"type":"system","system":"bytepath 0.older"}"#;
        for body in [body.as_str(), system] {
            let mut frame = (body.len() as u32).to_be_bytes().to_vec();
            frame.extend_from_slice(body.as_bytes());
            s.write_all(&frame).unwrap();
        }
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
    });
    let here = tempfile::tempdir().unwrap();
    let out = remote_file(&address, &["--sizes", "4K"], here.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot serve files"), "{stderr}");
    assert!(stderr.contains("0.older"), "{stderr}");
    older.join().unwrap();
    assert_eq!(
        entries(here.path()),
        Vec::<String>::new(),
        "no results folder"
    );
}
