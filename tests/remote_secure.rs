//! The secure control channel (protocol version 4) on the real binary over loopback: a frame
//! altered on the way is detected by the side that reads it; a handshake replayed by someone
//! who recorded a legitimate one runs nothing; a token under 128 bits is refused on both
//! sides; a server without a token needs `--insecure`, which a non-loopback bind and
//! `--allow-peers` refuse, and a client with a token refuses such a server.
mod common;
use common::{bytepath, Server};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

fn token_file(dir: &std::path::Path, token: &str) -> String {
    let path = dir.join("token");
    common::write_token(&path, token);
    path.to_str().unwrap().to_string()
}

fn remote(address: &str, token: Option<&str>) -> std::process::Output {
    let mut cmd = bytepath();
    cmd.args([
        "run",
        "--json",
        "-m",
        "send",
        "-p",
        "rr",
        "--duration",
        "300ms",
    ])
    .args(["--warmup", "100ms", "--remote", address]);
    if let Some(t) = token {
        cmd.args(["--token-file", t]);
    }
    cmd.timeout(Duration::from_secs(60)).output().unwrap()
}

/// Reads a length-prefixed unit (`width` bytes of big-endian length, then the body) from `r`,
/// whole, as it came.
fn unit(r: &mut TcpStream, width: usize) -> Option<Vec<u8>> {
    let mut head = vec![0u8; width];
    r.read_exact(&mut head).ok()?;
    let len = head.iter().fold(0usize, |n, &b| n << 8 | b as usize);
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    head.extend_from_slice(&body);
    Some(head)
}

/// A proxy toward `server`, for each connection: the client's two plaintext frames (hello,
/// first handshake message) are recorded in `seen`; `alter` may change each encrypted record
/// the client sends after them (its index, its bytes). The server's bytes pass unchanged.
fn proxy(server: String, seen: Arc<Mutex<Vec<Vec<u8>>>>, alter: fn(usize, &mut Vec<u8>)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let (server, seen) = (server.clone(), seen.clone());
            std::thread::spawn(move || relay(client.unwrap(), &server, &seen, alter));
        }
    });
    address
}

fn relay(
    mut client: TcpStream,
    server: &str,
    seen: &Mutex<Vec<Vec<u8>>>,
    alter: fn(usize, &mut Vec<u8>),
) {
    {
        let mut upstream = TcpStream::connect(server).unwrap();
        let (mut down_from, mut down_to) =
            (upstream.try_clone().unwrap(), client.try_clone().unwrap());
        std::thread::spawn(move || std::io::copy(&mut down_from, &mut down_to));
        for _ in 0..2 {
            let Some(frame) = unit(&mut client, 4) else {
                return;
            };
            seen.lock().unwrap().push(frame.clone());
            upstream.write_all(&frame).unwrap();
        }
        let mut index = 0;
        while let Some(mut record) = unit(&mut client, 2) {
            alter(index, &mut record);
            index += 1;
            if upstream.write_all(&record).is_err() {
                return;
            }
        }
    }
}

#[test]
fn a_byte_flipped_on_the_way_is_detected_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), TOKEN);
    let mut server = Server::start("2s", &["--token-file", &token]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    // The first record is the run request: one bit of its ciphertext flipped.
    let through = proxy(server.address(), seen.clone(), |i, record| {
        if i == 0 {
            record[10] ^= 0x01;
        }
    });
    let out = remote(&through, Some(&token));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("integrity check"), "{err}");
    assert!(
        seen.lock().unwrap().len() >= 2,
        "the hellos crossed unaltered"
    );
    // Unaltered, the same path carries a run.
    let clean = proxy(server.address(), seen, |_, _| {});
    common::assert_success(&remote(&clean, Some(&token)));
    assert!(server.still_running());
}

#[test]
fn a_replayed_handshake_gets_no_run_and_is_not_logged_as_authenticated() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), TOKEN);
    let log = dir.path().join("server.log");
    let json = ["--token-file", &token, "--log-format", "json"];
    let server = Server::start_logged("2s", &json, &log);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let through = proxy(server.address(), seen.clone(), |_, _| {});
    common::assert_success(&remote(&through, Some(&token)));
    let recorded = seen.lock().unwrap()[..2].to_vec();
    // Someone who recorded that session replays the client's hello and first handshake
    // message, then sends what a run request's record would look like: without the client's
    // ephemeral key it cannot make one that the server accepts.
    let mut s = TcpStream::connect(server.address()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    for frame in &recorded {
        s.write_all(frame).unwrap();
    }
    let _server_hello = unit(&mut s, 4).expect("the server's hello");
    // Its refusal: the server's hello was fresh, so the replayed message is a wrong token
    // (tests/remote_replay.rs reads it); whatever follows is not read.
    let _answer = unit(&mut s, 4).expect("the server's answer");
    let mut forged = (64u16).to_be_bytes().to_vec();
    forged.extend_from_slice(&[0x5a; 64]);
    s.write_all(&forged).unwrap();
    // The server's refusal comes encrypted for a client that no longer exists; then it closes.
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(
        !rest.windows(8).any(|w| w == b"accepted"),
        "a replayed session got a run"
    );
    // And the legitimate client is still served.
    common::assert_success(&remote(&server.address(), Some(&token)));
    std::thread::sleep(Duration::from_millis(300));
    drop(server);
    // The replayed handshake did not complete, and no frame of it decrypted: the session is
    // logged refused and unauthenticated.
    let sessions: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &serde_json::Value| v["session"].is_u64())
        .collect();
    let refused: Vec<_> = sessions
        .iter()
        .filter(|v| v["result"] == "refused")
        .collect();
    assert_eq!(refused.len(), 1, "{sessions:?}");
    assert!(refused[0]["identity"].is_null(), "{}", refused[0]);
    assert!(refused[0]["asked"].is_null(), "{}", refused[0]);
    assert!(sessions
        .iter()
        .filter(|v| v["result"] == "ok")
        .all(|v| v["identity"] == "token"));
}

#[test]
fn a_token_under_128_bits_is_refused_on_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let short = token_file(dir.path(), "s3cret-passw0rd");
    let out = bytepath()
        .args(["server", "--port", "0", "--token-file", &short])
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("128 bits") && err.contains("15 characters"),
        "{err}"
    );
    let out = remote("127.0.0.1:9", Some(&short));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("128 bits"), "{err}");
}

#[test]
fn a_server_without_a_token_needs_insecure_on_loopback_without_peers() {
    for (args, expected) in [
        (vec![], "no --token-file"),
        (vec!["--allow-peers", "127.0.0.0/8"], "no --token-file"),
        (
            vec!["--insecure", "--allow-peers", "127.0.0.0/8"],
            "--insecure with --allow-peers",
        ),
        (
            vec!["--insecure", "--bind", "0.0.0.0"],
            "--insecure --bind 0.0.0.0",
        ),
    ] {
        let out = bytepath()
            .args(["server", "--port", "0"])
            .args(&args)
            .timeout(Duration::from_secs(10))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

#[test]
fn an_insecure_server_warns_and_a_client_with_a_token_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), TOKEN);
    let server = Server::start("2s", &[]);
    let out = remote(&server.address(), Some(&token));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("runs --insecure"), "{err}");
    let out = remote(&server.address(), None);
    common::assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("WARNING") && err.contains("--insecure"),
        "{err}"
    );
}

#[test]
fn idle_sockets_from_one_address_neither_lock_out_a_driver_nor_outlive_the_handshake_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), TOKEN);
    // Dual-stack: the idle sockets come from ::ffff:127.0.0.1, the driver from ::1. A long
    // --timeout, so only the handshake's own deadline can end the idle ones.
    let server = Server::start("60s", &["--bind", "::", "--token-file", &token]);
    let idle: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(("127.0.0.1", server.port)).unwrap())
        .collect();
    let out = remote(&format!("[::1]:{}", server.port), Some(&token));
    common::assert_success(&out);
    for mut s in idle {
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut rest = Vec::new();
        let ended = s.read_to_end(&mut rest);
        assert!(
            ended.is_ok(),
            "an idle socket still open after 30 s: {ended:?}"
        );
    }
}

#[test]
fn log_format_json_writes_one_audit_line_per_session() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), TOKEN);
    let log = dir.path().join("server.log");
    let mut server = std::process::Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
        .args(["server", "--port", "0", "--token-file", &token])
        .args(["--log-format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line.split_whitespace().nth(4).unwrap().to_string();
    common::assert_success(&remote(&address, Some(&token)));
    let wrong = dir.path().join("wrong");
    common::write_token(&wrong, "fedcba9876543210fedcba9876543210");
    assert_eq!(remote(&address, wrong.to_str()).status.code(), Some(2));
    std::thread::sleep(Duration::from_millis(300));
    let _ = server.kill();
    let _ = server.wait();
    let sessions: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    // The client's check (hello only), its run, and the wrong token.
    assert_eq!(sessions.len(), 3, "{sessions:?}");
    assert!(sessions
        .iter()
        .all(|s| s["peer"].as_str().unwrap().starts_with("127.0.0.1:")
            && s["time_unix_ms"].as_u64().is_some()));
    let ran = &sessions[1];
    assert_eq!(
        (ran["identity"].as_str(), ran["result"].as_str()),
        (Some("token"), Some("ok"))
    );
    assert!(ran["detail"].as_str().unwrap().contains("tcp rr"), "{ran}");
    // What was asked, what ran and its bytes are fields of their own.
    assert_eq!(
        ran["asked"], "run tcp rr 4096 B x1 send for 300 ms",
        "{ran}"
    );
    assert_eq!(ran["ran"], "tcp rr 4096 B x1 send for 300 ms", "{ran}");
    assert!(ran["bytes"].as_u64().unwrap() >= 2 * 4096, "{ran}");
    let check = &sessions[0];
    assert_eq!(check["asked"], "check (hello only)", "{check}");
    assert!(
        check["ran"].is_null() && check["bytes"].is_null(),
        "{check}"
    );
    let refused = &sessions[2];
    assert_eq!(refused["identity"], serde_json::Value::Null);
    assert!(
        refused["asked"].is_null() && refused["ran"].is_null(),
        "{refused}"
    );
    assert_eq!(
        (refused["result"].as_str(), refused["code"].as_str()),
        (Some("refused"), Some("auth"))
    );
}

#[test]
fn a_service_that_is_not_bytepath_is_told_apart_without_echoing_what_it_sent() {
    // Another service's greeting, read as a frame's length: "SSH-" is 1397966893 bytes.
    let service = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = service.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for mut c in service.incoming().flatten() {
            let _ = c.write_all(b"SSH-2.0-OpenSSH_9.6\r\n");
        }
    });
    let out = remote(&address, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("a frame was over the limit"), "{err}");
    assert!(!err.contains(&0x5353_482du32.to_string()), "{err}");
}

#[test]
fn the_text_log_names_what_was_asked_what_ran_and_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), TOKEN);
    let log = dir.path().join("server.log");
    let server = Server::start_logged("5s", &["--token-file", &token], &log);
    common::assert_success(&remote(&server.address(), Some(&token)));
    std::thread::sleep(Duration::from_millis(300));
    drop(server);
    let logged = std::fs::read_to_string(&log).unwrap();
    let line = logged
        .lines()
        .find(|l| l.contains(" ran="))
        .unwrap_or_else(|| panic!("no line with ran=: {logged}"));
    assert!(
        line.contains(r#" asked="run tcp rr 4096 B x1 send for 300 ms" ran="tcp rr 4096 B x1 send for 300 ms" bytes="#),
        "{line}"
    );
    let bytes: u64 = line.rsplit("bytes=").next().unwrap().parse().unwrap();
    assert!(bytes >= 2 * 4096, "{line}");
}

#[test]
fn anonymous_clients_refused_by_the_dozen_leave_one_line_and_a_count_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), TOKEN);
    let log = dir.path().join("server.log");
    let server = Server::start_logged("5s", &["--token-file", &token], &log);
    for _ in 0..30 {
        let mut s = TcpStream::connect(server.address()).unwrap();
        s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        let _ = s.read_to_end(&mut Vec::new());
    }
    // The accept loop's idle poll (0.5 s) writes the summary once the interval (1 s) passed.
    std::thread::sleep(Duration::from_millis(2500));
    // A legitimate session is logged as always.
    common::assert_success(&remote(&server.address(), Some(&token)));
    std::thread::sleep(Duration::from_millis(300));
    drop(server);
    let logged = std::fs::read_to_string(&log).unwrap();
    // Each connection is a session refused before authentication, or turned away before one
    // when its address's earlier sessions are not yet closed on the server's side.
    let written =
        logged.matches("refused (Oversized)").count() + logged.matches(": turned away: ").count();
    let held: u64 = logged
        .lines()
        .filter(|l| l.contains(" held back over "))
        .filter_map(|l| l.strip_prefix("bytepath server: "))
        .map(|l| l.split_whitespace().next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(written as u64 + held, 30, "{logged}");
    assert!(written <= 5, "{written} lines: {logged}");
    assert!(
        logged.contains(" ran=\"tcp rr 4096 B x1 send for 300 ms\""),
        "{logged}"
    );
}

#[test]
fn keygen_writes_a_fresh_owner_only_token_never_over_an_existing_file_and_it_serves() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    let path = token.to_str().unwrap();
    let out = bytepath().args(["keygen", path]).output().unwrap();
    common::assert_success(&out);
    let written = std::fs::read_to_string(&token).unwrap();
    assert_eq!(written.trim().len(), 64, "{written}");
    assert!(written.trim().bytes().all(|b| b.is_ascii_hexdigit()));
    let mode = std::fs::metadata(&token).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // An existing file is never replaced: one line naming it, exit 2, the token unchanged.
    let again = bytepath().args(["keygen", path]).output().unwrap();
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(path), "{err}");
    assert_eq!(std::fs::read_to_string(&token).unwrap(), written);
    // Another file gets another token, and the written one serves a run.
    let other = dir.path().join("other");
    common::assert_success(&bytepath().arg("keygen").arg(&other).output().unwrap());
    assert_ne!(std::fs::read_to_string(&other).unwrap(), written);
    let server = Server::start("5s", &["--token-file", path]);
    common::assert_success(&remote(&server.address(), Some(path)));
}

#[test]
fn a_replayed_handshake_that_then_idles_is_closed_at_the_handshake_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), TOKEN);
    // A long --timeout: only the handshake's own deadline (5 s) can end the replayed session.
    let server = Server::start("60s", &["--token-file", &token]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let through = proxy(server.address(), seen.clone(), |_, _| {});
    common::assert_success(&remote(&through, Some(&token)));
    let recorded = seen.lock().unwrap()[..2].to_vec();
    let started = std::time::Instant::now();
    let mut s = TcpStream::connect(server.address()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    for frame in &recorded {
        s.write_all(frame).unwrap();
    }
    let _server_hello = unit(&mut s, 4).expect("the server's hello");
    let _answer = unit(&mut s, 4).expect("the server's answer");
    // This side now says nothing (since version 4 the replayed message is refused at once;
    // either way the connection must end within the handshake's deadline).
    let mut rest = Vec::new();
    let ended = s.read_to_end(&mut rest);
    assert!(ended.is_ok(), "still open after 30 s: {ended:?}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}
