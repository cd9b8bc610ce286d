//! `bytepath server` and `bytepath run --remote`: a server started here on loopback runs the
//! other side and returns its metrics; bad clients of every kind (wrong token, other version,
//! oversized frame, garbage, silence, killed mid-run) each leave it serving the next one.
mod common;
use bytepath::sys::source::connect_from;
use common::{assert_delivered, bytepath, u, Server};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn remote(server: &Server, args: &[&str]) -> std::process::Output {
    bytepath()
        .args(["run", "--json", "--duration", "300ms", "--warmup", "100ms"])
        .args(["--remote", &server.address()])
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// A valid client gets a complete run with both sides, the server's side in its process.
fn assert_serves(server: &mut Server, pattern: &str) -> Value {
    let out = remote(
        server,
        &["-m", "send", "-p", pattern, "-s", "4K", "--verify"],
    );
    common::assert_success(&out);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_delivered(&r, pattern);
    // The server runs the side the statistics do not follow: the stream sender (listed
    // first) or the rr server (listed second).
    let theirs = if pattern == "stream" { 0 } else { 1 };
    let server_pid = server.child.id() as u64;
    assert_eq!(u(&r["sides"][theirs]["pid"]), server_pid, "{pattern}");
    assert!(u(&r["sides"][0]["messages"]) > 0);
    assert!(u(&r["sides"][1]["messages"]) > 0);
    assert!(server.still_running());
    r
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

/// Reads one frame as JSON (the server's answer), then expects the connection closed.
fn answer_then_close(s: &mut TcpStream) -> Value {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut header = [0u8; 4];
    s.read_exact(&mut header).unwrap();
    let mut body = vec![0u8; u32::from_be_bytes(header) as usize];
    s.read_exact(&mut body).unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(rest.is_empty(), "more after the error: {rest:?}");
    serde_json::from_slice(&body).unwrap()
}

/// Sends `bytes` on a new connection and reads the answer. A `busy` answer (this address's
/// earlier sessions, each at most 4 at once, not yet closed on a loaded machine) is tried again.
fn raw(server: &Server, bytes: &[u8]) -> Value {
    for _ in 0..50 {
        let mut s = TcpStream::connect(server.address()).unwrap();
        s.write_all(bytes).unwrap();
        let answer = answer_then_close(&mut s);
        if answer["type"] != "busy" {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("busy for 5 s")
}

#[test]
fn remote_stream_and_rr_hold_both_sides_verified() {
    let mut server = Server::start("1s", &[]);
    let stream = assert_serves(&mut server, "stream");
    let place = stream["config"]["where_sides_run"].as_str().unwrap();
    assert!(
        place.starts_with(&format!("remote: the server at {}", server.address())),
        "{place}"
    );
    assert!(place.contains("ran the sender"), "{place}");
    assert_eq!(stream["config"]["network"]["placement"], "remote");
    let rr = assert_serves(&mut server, "rr");
    let place = rr["config"]["where_sides_run"].as_str().unwrap();
    assert!(place.contains("ran the server"), "{place}");
    assert!(u(&rr["sides"][0]["latency_ns"]["p50"]) > 0);
}

#[test]
fn a_wrong_or_missing_token_is_refused_and_the_right_one_served() {
    let dir = tempfile::tempdir().unwrap();
    let (right, wrong) = (dir.path().join("right"), dir.path().join("wrong"));
    common::write_token(&right, "0123456789abcdef0123456789abcdef");
    common::write_token(&wrong, "fedcba9876543210fedcba9876543210");
    let mut server = Server::start("1s", &["--token-file", right.to_str().unwrap()]);
    let out = remote(
        &server,
        &["-m", "send", "--token-file", wrong.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("wrong token"), "{err}");
    let out = remote(&server, &["-m", "send"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("requires a token") && err.contains("--token-file"),
        "{err}"
    );
    let out = remote(
        &server,
        &[
            "-m",
            "send",
            "-p",
            "rr",
            "--token-file",
            right.to_str().unwrap(),
        ],
    );
    common::assert_success(&out);
    assert!(server.still_running());
}

#[test]
fn bad_frames_get_an_error_frame_and_a_close_and_the_next_client_is_served() {
    let mut server = Server::start("1s", &[]);
    let hello = br#"{"type":"client_hello","version":999,"capabilities":[]}"#;
    let e = raw(&server, &frame(hello));
    assert_eq!(e["type"], "error");
    assert_eq!(e["code"], "version");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("version 999") && msg.contains("version 4"),
        "{msg}"
    );

    let e = raw(&server, &(1u32 << 30).to_be_bytes());
    assert_eq!(e["code"], "oversized", "{e}");
    // Only that it was over the limit: the length it declared is what the peer sent.
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("over the limit") && !msg.contains("1073741824"),
        "{e}"
    );

    // An HTTP request's first four bytes read as a length of about 1.2 GB.
    assert_eq!(raw(&server, b"GET / HTTP/1.1\r\n\r\n")["code"], "oversized");
    assert_eq!(
        raw(&server, &frame(b"\xff\xfe garbage"))["code"],
        "malformed"
    );
    // A valid message out of order: a run request before the hello.
    let e = raw(&server, &frame(br#"{"type":"stop"}"#));
    assert_eq!(e["code"], "out_of_order", "{e}");
    // A frame cut short: the rest never comes.
    let mut s = TcpStream::connect(server.address()).unwrap();
    s.write_all(&[0, 0, 1, 0, b'{']).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(answer_then_close(&mut s)["code"], "truncated");
    assert_serves(&mut server, "rr");
}

#[test]
fn a_silent_connection_times_out_without_holding_the_server() {
    let mut server = Server::start("1s", &[]);
    // From another address: the driver's own newer connection would evict a silent one from
    // its address before its deadline (one place per source before authentication).
    let to = server.address().parse().unwrap();
    let mut silent = connect_from("127.0.0.2".parse().unwrap(), to).unwrap();
    // Served while the silent one is still open.
    assert_serves(&mut server, "rr");
    let started = Instant::now();
    let e = answer_then_close(&mut silent);
    assert_eq!(e["code"], "timeout", "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_serves(&mut server, "stream");
}

#[test]
fn requests_over_the_limits_are_refused_naming_the_limit() {
    let server = Server::start("1s", &["--max-threads", "2", "--max-bytes", "1M"]);
    let out = remote(&server, &["-m", "send", "-t", "4", "--bytes", "64K"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--max-threads") && err.contains("4 threads"),
        "{err}"
    );
    let out = remote(&server, &["-m", "send"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--max-bytes"), "{err}");
    // Under --max-bytes the warm-up counts toward the bytes, so a counted run asks none.
    let out = remote(&server, &["-m", "send", "--bytes", "512K"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--warmup 0s"), "{err}");
    let out = bytepath()
        .args(["run", "--json", "--duration", "300ms", "--warmup", "0s"])
        .args([
            "--remote",
            &server.address(),
            "-m",
            "send",
            "--bytes",
            "512K",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
}

#[test]
fn a_client_killed_mid_run_frees_the_server_and_others_meanwhile_get_busy() {
    let mut server = Server::start("1s", &[]);
    let mut victim = Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
        .args([
            "run", "-m", "send", "-p", "stream", "-s", "64K", "-d", "30s",
        ])
        .args(["--remote", &server.address()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let out = remote(&server, &["-m", "send"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("busy"), "{err}");
    victim.kill().unwrap(); // SIGKILL: no Stop, no goodbye.
    victim.wait().unwrap();
    let killed = Instant::now();
    // The server notices within its poll and shutdown grace; until then it is still busy.
    while killed.elapsed() < Duration::from_secs(10) {
        let out = remote(&server, &["-m", "send", "-p", "rr"]);
        if out.status.success() {
            break;
        }
        assert!(String::from_utf8_lossy(&out.stderr).contains("busy"));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        killed.elapsed() < Duration::from_secs(10),
        "still busy after 10 s"
    );
    assert_serves(&mut server, "rr");
}

#[test]
fn a_server_that_vanishes_mid_run_fails_the_run_with_what_was_measured() {
    let mut server = Server::start("1s", &[]);
    let address = server.address();
    let client = std::thread::spawn(move || {
        bytepath()
            .args([
                "run", "--json", "-m", "send", "-p", "rr", "-s", "64", "-d", "20s",
            ])
            .args(["--warmup", "100ms", "--remote", &address])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap()
    });
    std::thread::sleep(Duration::from_millis(1500));
    server.child.kill().unwrap();
    let out = client.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(r["status"], "completed");
    let errors = r["errors"].to_string();
    assert!(errors.contains("no result from the server"), "{errors}");
    assert!(
        u(&r["sides"][0]["messages"]) > 0,
        "the client's own figures are kept"
    );
}

#[test]
fn remote_flags_that_cannot_apply_are_refused() {
    for (args, needle) in [
        (&["--remote", "h:0"][..], "--remote \"h:0\""),
        (
            &["--remote", "h", "--transport", "unix"],
            "bytepath server carries tcp and udp only",
        ),
        (
            &["--remote", "h", "--processes"],
            "--processes with --remote",
        ),
        (
            &["--remote", "h", "--reverse", "-p", "rr"],
            "--reverse with --pattern rr",
        ),
        (
            &["--remote", "h", "--reverse", "--bytes", "1M"],
            "--reverse with --messages/--bytes",
        ),
        (&["--reverse"], "--reverse: applies with --remote"),
    ] {
        let out = bytepath()
            .args(["run", "-m", "send"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// A tiny sweep (2 mechanisms × 1 size × 1 thread, short slices) with `--remote`.
fn remote_sweep(server: &Server, dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    bytepath()
        .args([
            "sweep", "--sizes", "4K", "--slice", "20ms", "--visit", "100ms",
        ])
        .args(["--budget", "300ms", "--warmup", "50ms", "--remote"])
        .arg(server.address())
        .arg("--out")
        .arg(dir)
        .args(extra)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

fn records(dir: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_remote_sweep_runs_every_point_against_the_server_and_resumes_only_there() {
    let mut server = Server::start("1s", &[]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sweep");
    let out = remote_sweep(
        &server,
        &dir,
        &["--mechanisms", "send,copy", "--threads", "1", "--verify"],
    );
    common::assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "sides on two hosts: the server at {}",
            server.address()
        )),
        "{stdout}"
    );
    let all = records(&dir);
    assert_eq!(all.len(), 2);
    let server_pid = server.child.id() as u64;
    for r in &all {
        assert_eq!(r["status"], "completed", "{r}");
        assert_delivered(r, "stream");
        // The server ran the sender (listed first); this process received and measured.
        let (theirs, ours) = (u(&r["sides"][0]["pid"]), u(&r["sides"][1]["pid"]));
        assert_eq!(theirs, server_pid);
        assert_ne!(theirs, ours);
        let place = r["config"]["where_sides_run"].as_str().unwrap();
        assert!(
            place.starts_with(&format!("remote: the server at {}", server.address())),
            "{place}"
        );
    }
    let marker: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(marker["spec"]["remote"], server.address().as_str());
    // The same folder continued on loopback would mix placements: refused, naming the setting.
    let out = bytepath()
        .args([
            "sweep", "--sizes", "4K", "--slice", "20ms", "--visit", "100ms",
        ])
        .args(["--budget", "300ms", "--warmup", "50ms"])
        .args(["--mechanisms", "send,copy", "--threads", "1", "--verify"])
        .arg("--resume")
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("(remote: "), "{err}");
    assert!(server.still_running());
}

#[test]
fn a_remote_sweep_records_a_refused_point_and_goes_on_but_an_absent_server_is_one_error() {
    let server = Server::start("1s", &["--max-threads", "1"]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sweep");
    let out = remote_sweep(&server, &dir, &["--mechanisms", "send", "--threads", "2,1"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let all = records(&dir);
    assert_eq!(all.len(), 2, "the sweep went on after the refused point");
    assert_ne!(all[0]["status"], "completed");
    let why = all[0]["errors"].to_string();
    assert!(why.contains("--max-threads"), "{why}");
    assert_eq!(all[1]["status"], "completed", "{}", all[1]);

    // Nothing listens on the port a dropped server had: one line, exit 1, no folder made.
    let gone = Server::start("1s", &[]);
    let address = gone.address();
    drop(gone);
    let never = tmp.path().join("never");
    let out = bytepath()
        .args([
            "sweep",
            "--mechanisms",
            "send",
            "--sizes",
            "4K",
            "--threads",
            "1",
        ])
        .args(["--remote", &address, "--out"])
        .arg(&never)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&address) && err.contains("connecting"),
        "{err}"
    );
    assert!(!never.exists());
}

#[test]
fn ipc_with_remote_measures_tcp_and_udp_there_with_exact_counts_and_leaves_the_rest_out() {
    let server = Server::start("1s", &[]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ipc");
    let out = bytepath()
        .args(["ipc", "--remote", &server.address()])
        .args(["--sizes", "64,4K", "--trials", "200", "--bytes", "1M"])
        .args(["--visits", "2"])
        .args(["--warmup", "50ms", "--out"])
        .arg(&dir)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    for t in ["pipe", "unix", "unix-dgram", "shm"] {
        let line = format!("ipc: {t} left out with --remote: ");
        assert_eq!(stdout.matches(&line).count(), 1, "{t}: {stdout}");
    }
    assert!(!stdout.contains("udp left out"), "{stdout}");
    let all = records(&dir);
    assert_eq!(all.len(), 8, "(tcp, udp) × (latency, bandwidth) × 2 sizes");
    for t in ["tcp", "udp"] {
        let points = all.iter().filter(|r| r["config"]["transport"] == t);
        assert_eq!(points.count(), 4, "{t}");
    }
    let server_pid = server.child.id() as u64;
    for r in &all {
        assert_eq!(r["status"], "completed", "{r}");
        let place = r["config"]["where_sides_run"].as_str().unwrap();
        assert!(place.starts_with("remote: the server at"), "{place}");
        let ours = if r["config"]["pattern"] == "rr" {
            // The rr client (listed first) asked exactly --trials round trips here.
            assert_eq!(u(&r["sides"][1]["pid"]), server_pid);
            assert_eq!(u(&r["sides"][0]["messages"]), 200, "{r}");
            0
        } else {
            // The remote sender kept sending until told to stop; the receiver here counted.
            assert_eq!(u(&r["sides"][0]["pid"]), server_pid);
            assert!(u(&r["sides"][1]["payload_bytes"]) >= 1 << 20, "{r}");
            1
        };
        assert_ne!(u(&r["sides"][ours]["pid"]), server_pid);
    }

    let out = bytepath()
        .args([
            "ipc",
            "--remote",
            &server.address(),
            "--transports",
            "tcp,unix",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--transports unix with --remote")
            && err.contains("allowed with --remote: tcp, udp"),
        "{err}"
    );
}

#[test]
fn reverse_sends_from_here_and_the_server_receives_and_measures() {
    let server = Server::start("1s", &[]);
    let out = remote(
        &server,
        &["--reverse", "-m", "copy", "-s", "64K", "--verify"],
    );
    common::assert_success(&out);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_delivered(&r, "reverse");
    let (sender, receiver) = (&r["sides"][0], &r["sides"][1]);
    assert_eq!(receiver["side"], "receiver");
    assert_eq!(u(&receiver["pid"]), server.child.id() as u64);
    assert_ne!(u(&sender["pid"]), u(&receiver["pid"]));
    // Every byte sent here arrived there (assert_delivered), and the figures follow the
    // server's receiver: its per-slice series came back.
    let stats = &r["statistics"];
    assert_eq!(stats["side"], "receiver");
    assert!(u(&stats["slices"]) >= 2, "{stats}");
    assert!(stats["summary"]["mean"].as_f64().unwrap() > 0.0, "{stats}");
    let place = r["config"]["where_sides_run"].as_str().unwrap();
    assert!(place.contains("ran the receiver and measured"), "{place}");
}

#[test]
fn reverse_is_refused_where_the_measuring_side_must_stay_here() {
    for (args, needle) in [
        (
            &["sweep", "--remote", "h", "--reverse"][..],
            "--reverse with sweep",
        ),
        (&["ipc", "--remote", "h", "--reverse"], "--reverse with ipc"),
        (&["sweep", "--reverse"], "--reverse: applies with --remote"),
    ] {
        let out = bytepath().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// udp across the placement: the server's socket is joined by the client's hello, which never
/// counts as data; both sides' datagram numbers add up and every byte verifies.
#[test]
fn remote_udp_rr_and_stream_carry_numbered_datagrams_verified() {
    let mut server = Server::start("1s", &[]);
    for (pattern, size) in [("rr", "64"), ("stream", "1K")] {
        let out = remote(
            &server,
            &[
                "--transport",
                "udp",
                "-m",
                "send",
                "-p",
                pattern,
                "-s",
                size,
                "--verify",
            ],
        );
        common::assert_success(&out);
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["status"], "completed", "{pattern}: {r}");
        assert_eq!(r["config"]["transport"], "udp");
        let theirs = if pattern == "stream" { 0 } else { 1 };
        assert_eq!(u(&r["sides"][theirs]["pid"]), server.child.id() as u64);
        assert_ne!(u(&r["sides"][1 - theirs]["pid"]), server.child.id() as u64);
        assert!(u(&r["sides"][0]["messages"]) > 0, "{pattern}");
        assert!(u(&r["sides"][1]["messages"]) > 0, "{pattern}");
        let forward = &r["datagrams"]["forward"];
        let (sent, received) = (u(&forward["sent"]), u(&forward["received"]));
        assert!(sent >= received && received > 0, "{pattern}: {forward}");
        // A hello read as data would show as a reordered or mismatched datagram.
        assert_eq!(u(&forward["reordered"]), 0, "{pattern}: {forward}");
        if pattern == "rr" {
            let back = &r["datagrams"]["back"];
            assert!(u(&back["received"]) > 0, "{back}");
        }
        assert_eq!(r["verify"]["enabled"], true);
        assert!(u(&r["verify"]["checked_bytes"]) > 0, "{pattern}");
        assert_eq!(u(&r["verify"]["mismatched_bytes"]), 0, "{pattern}");
        assert!(server.still_running());
    }
}
