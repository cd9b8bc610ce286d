//! No lockout without a token, on the real binary over loopback: strangers from two addresses
//! (127.0.0.1 and 127.0.0.2) holding and reopening hundreds of idle sockets neither keep a
//! driver (from ::1) out nor cost the server a thread each, since each source holds one
//! pending connection and a newcomer evicts the older; and the health endpoint answers every
//! probe while two silent connections a second arrive.
mod common;
use bytepath::sys::source::connect_from;
use common::{bytepath, Server};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";
/// Idle sockets each stranger opens (and keeps open on its side).
const IDLE_EACH: usize = 200;

fn token_file(dir: &std::path::Path) -> String {
    let path = dir.join("token");
    common::write_token(&path, TOKEN);
    path.to_str().unwrap().to_string()
}

/// The server process's thread count (/proc/PID/status).
fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("Threads:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The idle sockets a stranger opened, oldest first, and when it opened the newest.
type Held = (Vec<TcpStream>, Instant);

/// A stranger at `from`: opens `IDLE_EACH` idle sockets to `to`, one every 5 ms, and keeps
/// them all.
fn stranger(from: &'static str, to: SocketAddr) -> std::thread::JoinHandle<Held> {
    std::thread::spawn(move || {
        let from: Ipv4Addr = from.parse().unwrap();
        let sockets = (0..IDLE_EACH)
            .map(|_| {
                std::thread::sleep(Duration::from_millis(5));
                connect_from(from, to).unwrap()
            })
            .collect();
        (sockets, Instant::now())
    })
}

/// Whether the server closed `s` (its read ends, with or without a busy or error frame).
fn closed_by_server(mut s: &TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s.read_to_end(&mut Vec::new()).is_ok()
}

#[test]
fn idle_sockets_from_two_addresses_neither_lock_out_a_driver_nor_cost_a_thread_each() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path());
    // Dual stack: strangers reach it at 127.0.0.1, the driver at ::1. A long --timeout, so
    // only admission (eviction, the handshake deadline) can end the idle sockets.
    let server = Server::start("60s", &["--bind", "::", "--token-file", &token]);
    let to: SocketAddr = format!("127.0.0.1:{}", server.port).parse().unwrap();
    let before = threads(server.child.id());
    let strangers = [stranger("127.0.0.1", to), stranger("127.0.0.2", to)];
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let out = bytepath()
        .args(["run", "--json", "-m", "send", "-p", "rr", "-d", "300ms"])
        .args(["--warmup", "100ms", "--token-file", &token])
        .args(["--remote", &format!("[::1]:{}", server.port)])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let took = started.elapsed();
    common::assert_success(&out);
    assert!(took < Duration::from_secs(5), "the driver took {took:?}");
    // Every idle socket but each stranger's newest was evicted by the next from its address.
    for (mut sockets, opened) in strangers.map(|s| s.join().unwrap()) {
        let newest = sockets.pop().unwrap();
        let closed = sockets.iter().filter(|s| closed_by_server(s)).count();
        assert_eq!(closed, IDLE_EACH - 1);
        held_open_until_the_deadline(newest, opened);
    }
    // 400 sockets held on the strangers' side cost the server no thread once evicted.
    let settled = Instant::now() + Duration::from_secs(3);
    while threads(server.child.id()) > before && Instant::now() < settled {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        threads(server.child.id()) <= before,
        "{} threads",
        threads(server.child.id())
    );
}

/// A stranger's newest idle socket (opened at `opened`) is left alone until the handshake
/// deadline (5 s) ends it.
fn held_open_until_the_deadline(mut newest: TcpStream, opened: Instant) {
    newest
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let ended = newest.read_to_end(&mut Vec::new());
    assert!(ended.is_ok(), "outlived the deadline: {ended:?}");
    let lived = opened.elapsed();
    let deadline = Duration::from_millis(4900)..Duration::from_secs(8);
    assert!(deadline.contains(&lived), "closed after {lived:?}");
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

const PROBE: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: pod\r\nUser-Agent: kube-probe/1.30\r\n\r\n";

/// A probe from `from` to the health port: the answer's status line, or why none came (within
/// the kubelet's default 1 s).
fn probe(from: Ipv4Addr, port: u16) -> Result<String, String> {
    let to = SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = connect_from(from, to).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    s.write_all(PROBE).map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&answer);
    Ok(text.lines().next().unwrap_or_default().to_string())
}

#[test]
fn health_answers_every_probe_while_two_silent_connections_a_second_arrive() {
    let health = free_port();
    let _server = Server::start("1s", &["--health-port", &health.to_string()]);
    let silent = std::thread::spawn(move || {
        // Two a second for 4 s, each kept open (the server ends them at its 1 s deadline).
        (0..8)
            .map(|_| {
                let s = TcpStream::connect(("127.0.0.1", health)).unwrap();
                std::thread::sleep(Duration::from_millis(500));
                s
            })
            .collect::<Vec<_>>()
    });
    std::thread::sleep(Duration::from_millis(200));
    let mut answered = Vec::new();
    // Probes from the silent clients' own address and from another, every 100 ms for 3.5 s.
    for i in 0..35 {
        let from = if i % 2 == 0 {
            [127, 0, 0, 1]
        } else {
            [127, 0, 0, 2]
        };
        answered.push(probe(Ipv4Addr::from(from), health));
        std::thread::sleep(Duration::from_millis(100));
    }
    let silent = silent.join().unwrap();
    assert_eq!(silent.len(), 8);
    let failed: Vec<_> = answered
        .iter()
        .filter(|a| a.as_deref() != Ok("HTTP/1.1 200 OK"))
        .collect();
    assert!(
        failed.is_empty(),
        "{} of 35 probes failed: {failed:?}",
        failed.len()
    );
}
