//! `--max-bytes` held by the server itself: a client that declares a tiny count and then
//! never sends `Stop` (it keeps reading, so the server could stream until the duration ends)
//! has its run stopped by the server once the run moved past the limit; an honest client
//! whose count is within the limit completes untouched.
mod common;
use bytepath::engine::peer::Peer;
use bytepath::remote::client::RemotePeer;
use bytepath::transport::Endpoint;
use common::Server;
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
fn a_client_that_declares_one_message_and_never_stops_is_stopped_by_the_server() {
    let server = Server::start("5s", &["--max-bytes", "4M"]);
    // Declares one 64 KiB message over a 20 s run: well within --max-bytes.
    let (peer, flow) = declared_and_going(&server, &["-p", "stream", "-s", "64K"]);
    // Reads everything the server sends, never sending Stop, until the server ends the flow.
    let started = Instant::now();
    let mut received = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match flow.read(&mut buf, false) {
            Ok(0) | Err(_) => break,
            Ok(n) => received += n as u64,
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "still streaming after 15 s: {received} bytes"
        );
    }
    let took = started.elapsed();
    assert!(
        received > LIMIT,
        "stopped before the limit: {received} bytes"
    );
    // The limit, its margin (a quarter, or the socket buffers in flight), and one 20 ms
    // poll's worth at a few GB/s.
    assert!(received < 256 << 20, "{received} bytes went through");
    assert!(took < Duration::from_secs(10), "{took:?}");
    drop(peer);
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
