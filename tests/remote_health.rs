//! `bytepath server --health-port`: plain HTTP `GET /healthz` answers the server's state
//! without taking a control slot or starting a session; anything else, too much, or too slow
//! gets a 404 or nothing, and the next probe is answered at once.
mod common;
use common::Server;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Sends `request` and reads the whole answer (the server closes after it).
fn ask(port: u16, request: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // A request past the bound may be reset before it is all written.
    let _ = s.write_all(request);
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

const PROBE: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: pod\r\nUser-Agent: kube-probe/1.30\r\n\r\n";

#[test]
fn healthz_answers_the_state_and_hostile_clients_cannot_hold_it() {
    let health = free_port();
    let server = Server::start("1s", &["--health-port", &health.to_string()]);
    let idle = ask(health, PROBE);
    assert!(idle.starts_with("HTTP/1.1 200 OK\r\n"), "{idle}");
    assert!(
        idle.ends_with("\r\n\r\n{\"state\":\"idle\",\"sessions\":0}\n"),
        "{idle}"
    );
    let other = ask(health, b"GET /metrics HTTP/1.1\r\n\r\n");
    assert!(other.starts_with("HTTP/1.1 404 Not Found"), "{other}");
    // Too much: no answer at all.
    let flood = [b'A'; 4096];
    assert_eq!(ask(health, &flood), "");
    // An idle client holds the endpoint a second at most.
    let _silent = TcpStream::connect(("127.0.0.1", health)).unwrap();
    let asked = Instant::now();
    assert!(ask(health, PROBE).contains("\"state\":\"idle\""));
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    // Probes took no control slot: the control port still serves a run.
    let out = common::bytepath()
        .args([
            "run", "--json", "-m", "send", "-d", "300ms", "--warmup", "100ms",
        ])
        .args(["--remote", &server.address()])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
}

#[test]
fn a_health_port_of_0_or_text_is_refused_in_one_line() {
    for bad in ["0", "http"] {
        let out = common::bytepath()
            .args(["server", "--port", "0", "--health-port", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("--health-port \"{bad}\"")), "{err}");
    }
}
