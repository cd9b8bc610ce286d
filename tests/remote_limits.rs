//! `--max-bytes` held by the server itself: a client that declares a tiny count and then
//! never sends `Stop` (it keeps reading) gets what it declared and no more (the server's
//! stream sender keeps to the count; an rr client that floods is stopped past the limit:
//! tests/remote_caps.rs); an honest client whose count is within the limit completes
//! untouched.
mod common;
use bytepath::engine::peer::Peer;
use bytepath::remote::client::RemotePeer;
use bytepath::transport::Endpoint;
use common::Server;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LIMIT: u64 = 4 << 20;

/// A client of `server` that declares one message of the point `args` names over a 20 s run
/// (well within --max-bytes) and has said `Go`: its peer and its one flow.
fn declared_and_going(server: &Server, args: &[&str]) -> (RemotePeer, Endpoint) {
    let declared = [
        "-m",
        "send",
        "--messages",
        "1",
        "-d",
        "20s",
        "--warmup",
        "0s",
    ];
    let spec = common::run_spec(&[&declared[..], args].concat());
    let target = bytepath::config::parse_remote(&server.address()).unwrap();
    let mut peer = RemotePeer::new(target, None, false);
    let mut ends = peer.connect(&spec, spec.socket_options()).unwrap();
    peer.start().unwrap();
    (peer, ends.pop().unwrap().endpoint)
}

#[test]
fn a_client_that_declares_one_message_and_never_stops_gets_that_message_and_no_more() {
    let server = Server::start("5s", &["--max-bytes", "4M"]);
    // Declares one 64 KiB message over a 20 s run: well within --max-bytes.
    let (peer, flow) = declared_and_going(&server, &["-p", "stream", "-s", "64K"]);
    // Reads everything the server sends, never sending Stop.
    let received = Arc::new(AtomicU64::new(0));
    let reading = {
        let received = received.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n @ 1..) = flow.read(&mut buf, false) {
                received.fetch_add(n as u64, Ordering::Relaxed);
            }
        })
    };
    std::thread::sleep(Duration::from_secs(2));
    // The one message counted and the one whose arrival opens the receiver's window: the
    // server's sender keeps to what its client declared, whoever reads on.
    assert_eq!(received.load(Ordering::Relaxed), 2 * (64 << 10));
    // Gone, the client's flow is shut by the server.
    let gone = Instant::now();
    drop(peer);
    reading.join().unwrap();
    assert!(
        gone.elapsed() < Duration::from_secs(5),
        "{:?}",
        gone.elapsed()
    );
}

#[test]
fn an_honest_count_within_the_limit_completes() {
    let server = Server::start("5s", &["--max-bytes", "4M"]);
    let out = common::bytepath()
        .args(["run", "--json", "-m", "send", "-p", "stream", "-s", "64K"])
        .args(["--bytes", "4M", "-d", "30s", "--warmup", "0s"])
        .args(["--remote", &server.address()])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["status"], "completed", "{record}");
}

#[test]
fn a_udp_client_that_declares_one_request_and_keeps_asking_is_stopped_by_the_server() {
    let server = Server::start("5s", &["--max-bytes", "4M"]);
    // rr over udp: the client declares one 8 KiB round trip over a 20 s run, then sends
    // requests on (never reading the answers) without a `Stop`.
    let (peer, flow) = declared_and_going(&server, &["-p", "rr", "-s", "8K", "--transport", "udp"]);
    let started = Instant::now();
    let buf = vec![0u8; 8 << 10];
    let mut sent = 0u64;
    // Until the server's side is gone: its closed socket answers with "connection refused".
    let refused = loop {
        match flow.write(&buf) {
            Ok(n) => sent += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => break true,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("sending: {e}"),
        }
        if started.elapsed() > Duration::from_secs(15) {
            break false;
        }
    };
    let took = started.elapsed();
    assert!(refused, "still received after 15 s: {sent} bytes sent");
    assert!(sent > LIMIT, "stopped before the limit: {sent} bytes sent");
    assert!(took < Duration::from_secs(10), "{took:?}");
    drop(peer);
}
