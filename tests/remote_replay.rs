//! Deadlines and replays on the real binary over loopback (issue 37, item 2): a legitimate
//! client's first handshake message, recorded and replayed on a new connection, is refused as
//! a wrong token (the server's hello holds fresh random bytes, and nothing about its release
//! or kernel) and counts toward the address's back-off; a token holder trickling a record
//! after the handshake is ended at the session's deadline while a legitimate driver runs; after
//! authentication a frame begun must be whole within the server's --timeout.
mod common;
use bytepath::remote::channel::{self, ControlStream};
use bytepath::remote::protocol::{self, Message, RunRequest};
use common::{bytepath, Server};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

fn token_file(dir: &std::path::Path) -> String {
    let path = dir.join("token");
    common::write_token(&path, TOKEN);
    path.to_str().unwrap().to_string()
}

/// A short legitimate `run --remote` (rr, 300 ms).
fn remote(address: &str, token: &str) -> std::process::Output {
    bytepath()
        .args([
            "run",
            "--json",
            "-m",
            "send",
            "-p",
            "rr",
            "--duration",
            "300ms",
        ])
        .args([
            "--warmup",
            "100ms",
            "--remote",
            address,
            "--token-file",
            token,
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// One frame (a u32 length and its body), whole, as it came.
fn frame(r: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = [0u8; 4];
    r.read_exact(&mut head).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(head) as usize];
    r.read_exact(&mut body).ok()?;
    let mut whole = head.to_vec();
    whole.extend_from_slice(&body);
    Some(whole)
}

fn json(frame: &[u8]) -> Value {
    serde_json::from_slice(&frame[4..]).unwrap()
}

/// The client's first two frames (hello, first handshake message) of one legitimate run,
/// recorded by a relay between it and `server` (the run's first connection: its check).
fn record_first_two(server: &str, token: &str) -> Vec<Vec<u8>> {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let relay = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (server, kept) = (server.to_string(), seen.clone());
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let (server, kept) = (server.clone(), kept.clone());
            std::thread::spawn(move || relay_one(client.unwrap(), &server, &kept));
        }
    });
    common::assert_success(&remote(&relay, token));
    let recorded = seen.lock().unwrap()[..2].to_vec();
    recorded
}

/// Relays one connection, its client's first two frames added to `kept`.
fn relay_one(mut client: TcpStream, server: &str, kept: &Mutex<Vec<Vec<u8>>>) {
    let mut upstream = TcpStream::connect(server).unwrap();
    let (mut back_from, mut back_to) = (upstream.try_clone().unwrap(), client.try_clone().unwrap());
    std::thread::spawn(move || std::io::copy(&mut back_from, &mut back_to));
    for _ in 0..2 {
        let Some(f) = frame(&mut client) else { return };
        kept.lock().unwrap().push(f.clone());
        upstream.write_all(&f).unwrap();
    }
    let _ = std::io::copy(&mut client, &mut upstream);
}

/// Replays `recorded` to `address`; returns the server's hello (or the `busy` that turned the
/// connection away) and its answer to the replayed handshake message (`None` once closed).
fn replay(address: &str, recorded: &[Vec<u8>]) -> (Value, Option<Value>) {
    let mut s = TcpStream::connect(address).unwrap();
    // A connection turned away is told so at once, before it has sent anything (so the
    // server's close cannot reset it before its answer is read); one let in waits for a hello.
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    if let Some(busy) = frame(&mut s) {
        return (json(&busy), None);
    }
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(&recorded[0]).unwrap();
    let hello = json(&frame(&mut s).expect("an answer to the hello"));
    let _ = s.write_all(&recorded[1]);
    (hello, frame(&mut s).map(|f| json(&f)))
}

#[test]
fn a_replayed_first_message_is_refused_as_a_wrong_token_and_the_hello_tells_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path());
    let log = dir.path().join("server.log");
    let server = Server::start_logged("5s", &["--token-file", &token], &log);
    let recorded = record_first_two(&server.address(), &token);
    let (hello, answer) = replay(&server.address(), &recorded);
    let answer = answer.expect("the server's refusal");
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["code"], "auth", "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains("wrong token"),
        "{answer}"
    );
    // The hello: fresh random bytes every time, and neither release nor kernel.
    let random = hello["random"].as_str().unwrap().to_string();
    assert_eq!(random.len(), 64, "{hello}");
    assert!(random.bytes().all(|b| b.is_ascii_hexdigit()), "{hello}");
    let (again, _) = replay(&server.address(), &recorded);
    assert_ne!(again["random"], hello["random"], "the random is fresh");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let text = hello.to_string();
    assert!(hello.get("system").is_none(), "{text}");
    assert!(
        !text.contains(kernel.trim()) && !text.contains(env!("CARGO_PKG_VERSION")),
        "{text}"
    );
    // The legitimate client is still served, and learns the server's system once secure.
    common::assert_success(&remote(&server.address(), &token));
    std::thread::sleep(Duration::from_millis(300));
    drop(server);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("refused (Auth): wrong token"),
        "the replay is logged as a wrong token: {logged}"
    );
}

#[test]
fn replays_count_toward_the_addresss_back_off_and_a_driver_from_elsewhere_runs() {
    if TcpListener::bind("[::1]:0").is_err() {
        common::skip("no IPv6 loopback (::1) to drive from while 127.0.0.1 is barred");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path());
    let server = Server::start("5s", &["--bind", "::", "--token-file", &token]);
    let recorded = record_first_two(&server.address(), &token);
    // Each replay from 127.0.0.1 is a wrong token; within a few the address is turned away
    // for them (a busy for another reason, a slot not yet freed, is passed over).
    let barred = (0..20).find_map(|_| {
        let (hello, _) = replay(&server.address(), &recorded);
        let message = hello["message"].as_str().unwrap_or_default();
        let barred = hello["type"] == "busy" && message.contains("wrong tokens");
        std::thread::sleep(Duration::from_millis(50));
        barred.then_some(hello)
    });
    assert!(barred.is_some(), "replays are counted as wrong tokens");
    common::assert_success(&remote(&format!("[::1]:{}", server.port), &token));
}

/// Hello, handshake and the server's system, as a token holder's client does them.
fn authenticated(server: &Server) -> ControlStream {
    let (mut s, hello, answer) = common::send_hello(&server.address());
    let prologue = channel::prologue(&hello, &answer);
    s.client_handshake(TOKEN.as_bytes(), &prologue).unwrap();
    match protocol::read_message(&mut s).unwrap() {
        Message::System { system } => assert!(system.starts_with("bytepath "), "{system}"),
        other => panic!("expected its system, got {}", other.kind()),
    }
    s
}

/// Writes `bytes` one every 500 ms on a thread of its own: raw under the encryption, or each as
/// a record of its own; stops once the server has closed.
fn trickle(mut s: ControlStream, bytes: Vec<u8>, records: bool) {
    std::thread::spawn(move || {
        for b in bytes {
            let sent = match records {
                true => s.write_all(&[b]),
                false => (&*s).write_all(&[b]),
            };
            if sent.is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    });
}

#[test]
fn a_record_trickled_after_the_handshake_ends_at_the_deadline_while_a_driver_runs() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path());
    // A long --timeout: only the session's 5 s deadline can end the trickle.
    let server = Server::start("60s", &["--token-file", &token]);
    let started = Instant::now();
    let s = authenticated(&server);
    let raw = s.try_clone().unwrap();
    // A record header announcing 64 bytes, then one byte every 500 ms (34 s in all).
    let mut record = vec![0u8, 64];
    record.extend_from_slice(&[0x5a; 64]);
    trickle(s, record, false);
    let address = server.address();
    let driver = std::thread::spawn(move || remote(&address, &token));
    raw.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut rest = Vec::new();
    let closed = (&*raw).read_to_end(&mut rest);
    let took = started.elapsed();
    assert!(closed.is_ok(), "still open after 30 s: {closed:?}");
    assert!(took < Duration::from_secs(8), "ended after {took:?}");
    common::assert_success(&driver.join().unwrap());
}

#[test]
fn after_authentication_a_frame_begun_must_be_whole_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path());
    let server = Server::start("2s", &["--token-file", &token]);
    let mut s = authenticated(&server);
    let request = RunRequest::plain(("tcp", "send", "rr"), 1024, 500);
    protocol::write_message(&mut s, &Message::Run { request }).unwrap();
    let (port, cookie) = match protocol::read_message(&mut s).unwrap() {
        Message::Accepted {
            data_port, cookie, ..
        } => (data_port, protocol::from_hex(&cookie).unwrap()),
        other => panic!("got {}", other.kind()),
    };
    let mut data = TcpStream::connect(("127.0.0.1", port)).unwrap();
    data.write_all(&bytepath::remote::data_tag(&cookie, 0))
        .unwrap();
    // Instead of `go`, its frame one byte a record every 500 ms (9 s in all).
    let go = protocol::encode(&Message::Go).unwrap();
    let mut frame = (go.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&go);
    let writer = s.try_clone().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let started = Instant::now();
    trickle(writer, frame, true);
    let ended = loop {
        match protocol::read_message(&mut s) {
            Ok(Message::Ready) => continue,
            other => break other,
        }
    };
    let took = started.elapsed();
    // Before whole-frame deadlines the frame completed after 9 s and the run went on.
    assert!(took < Duration::from_millis(4500), "ended after {took:?}");
    match ended {
        Ok(Message::Error {
            code: protocol::ErrorCode::Truncated,
            message,
        }) => assert!(message.contains("a frame ended after"), "{message}"),
        // Another limit of the server's may end a session waiting for `go` first.
        Ok(Message::Error { code, message }) => eprintln!("ended by {code:?}: {message}"),
        Ok(other) => panic!("the trickled go was taken: got {}", other.kind()),
        // The server closed before its error frame could be read: ended in time all the same.
        Err(e) => eprintln!("the server closed: {e}"),
    }
}
