//! The peer run, from a client that speaks the protocol by hand: a request
//! toward an address outside `--allow-peers` (or to a server started without it) is refused
//! with an error frame and the server serves the next client; a request without the right
//! token is refused before any peer run; other versions are refused with both versions named, both
//! ways; and a peer run inside the list comes back as a record with `src` and `dst`.
mod common;
use bytepath::remote::channel::{self, ControlStream, HandshakeError, Refusal};
use bytepath::remote::protocol::{self, Message, RunRequest};
use common::Server;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// A token of 128 bits: 32 hex digits.
const FLEET: &str = "0123456789abcdef0123456789abcdef";

fn request() -> RunRequest {
    RunRequest {
        warmup_ms: 50,
        reverse: true,
        ..RunRequest::plain(("tcp", "send", "stream"), 4096, 200)
    }
}

/// Connects, says hello as this version and runs the handshake keyed by `token` when the
/// server has one; a refused handshake is the server's error frame.
fn try_hello(server: &Server, token: &[u8]) -> Result<ControlStream, (String, String)> {
    let (mut s, hello, answer) = common::send_hello(&server.address());
    match protocol::parse(&answer).unwrap() {
        Message::ServerHello {
            secure,
            capabilities,
            ..
        } => {
            assert!(
                capabilities.iter().any(|c| c == "peers"),
                "{capabilities:?}"
            );
            if secure {
                let prologue = channel::prologue(&hello, &answer);
                match s.client_handshake(token, &prologue) {
                    Ok(()) => {}
                    Err(HandshakeError::Answered(Refusal(code, message))) => {
                        return Err(error_of(Message::Error { code, message }))
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }
        other => panic!("got {}", other.kind()),
    }
    // The server's release and kernel come first, once the client is authenticated.
    match protocol::read_message(&mut s).unwrap() {
        Message::System { .. } => {}
        other => panic!("expected its system, got {}", other.kind()),
    }
    Ok(s)
}

fn hello(server: &Server, token: &[u8]) -> ControlStream {
    try_hello(server, token).unwrap_or_else(|(code, m)| panic!("refused ({code}): {m}"))
}

fn peer_run(s: &mut ControlStream, peer: &str) -> Message {
    let run = Message::PeerRun {
        peer: peer.into(),
        src: "a".into(),
        dst: "b".into(),
        request: request(),
    };
    protocol::write_message(s, &run).unwrap();
    protocol::read_message(s).unwrap()
}

fn error_of(m: Message) -> (String, String) {
    match m {
        Message::Error { code, message } => (
            serde_json::to_value(code).unwrap().as_str().unwrap().into(),
            message,
        ),
        other => panic!("expected an error frame, got {}", other.kind()),
    }
}

#[test]
fn a_peer_outside_the_list_is_refused_and_the_next_client_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    common::write_token(&token, FLEET);
    let token_arg = token.to_str().unwrap();
    let mut peer = Server::start("5s", &["--token-file", token_arg]);
    let mut source = Server::start(
        "5s",
        &[
            "--allow-peers",
            "127.0.0.0/8",
            "--peer-ports",
            "1-65535",
            "--token-file",
            token_arg,
        ],
    );
    let mut s = hello(&source, FLEET.as_bytes());
    let (code, message) = error_of(peer_run(&mut s, "192.0.2.9:5301"));
    assert_eq!(code, "forbidden");
    // The same words for every cause (tests/remote_hygiene.rs): not the list, not the address.
    assert!(
        message
            .contains("peer 192.0.2.9:5301: not a host and port this server may run tests toward")
            && !message.contains("127.0.0.0/8"),
        "{message}"
    );
    // The next client gets its run: a peer run inside the list, answered with the record.
    let mut s = hello(&source, FLEET.as_bytes());
    let record = match peer_run(&mut s, &peer.address()) {
        Message::PeerRecord { record } => record,
        other => panic!("got {}", other.kind()),
    };
    assert_eq!(record["status"], "completed", "{}", record["errors"]);
    assert_eq!(
        (record["src"].as_str(), record["dst"].as_str()),
        (Some("a"), Some("b"))
    );
    assert_eq!(record["command"], "mesh");
    // stream: the source sent, the peer received and measured.
    assert_eq!(
        record["sides"][1]["pid"].as_u64(),
        Some(peer.child.id() as u64)
    );
    assert_eq!(
        record["sides"][0]["pid"].as_u64(),
        Some(source.child.id() as u64)
    );
    assert!(
        record["transfer"]["receiver_received_bytes"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(source.still_running() && peer.still_running());
}

#[test]
fn a_server_without_allow_peers_runs_no_peer_test() {
    let peer = Server::start("5s", &[]);
    let source = Server::start("5s", &[]);
    let mut s = hello(&source, b"");
    let (code, message) = error_of(peer_run(&mut s, &peer.address()));
    assert_eq!(code, "forbidden");
    assert!(
        message.contains("started without --allow-peers"),
        "{message}"
    );
}

#[test]
fn a_request_without_the_right_token_is_refused_before_any_peer_run() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    common::write_token(&token, FLEET);
    let mut source = Server::start(
        "5s",
        &[
            "--allow-peers",
            "127.0.0.0/8",
            "--token-file",
            token.to_str().unwrap(),
        ],
    );
    let refused = try_hello(&source, b"fedcba9876543210fedcba9876543210").map(|_| ());
    let (code, message) = refused.unwrap_err();
    assert_eq!(code, "auth");
    assert!(message.contains("wrong token"), "{message}");
    assert!(source.still_running());
}

#[test]
fn other_versions_are_refused_both_ways_with_both_versions_named() {
    // An old client at this server.
    let server = Server::start("5s", &[]);
    let mut s = TcpStream::connect(server.address()).unwrap();
    let old = Message::ClientHello {
        version: 2,
        capabilities: vec![],
    };
    protocol::write_message(&mut s, &old).unwrap();
    let (code, message) = error_of(protocol::read_message(&mut s).unwrap());
    assert_eq!(code, "version");
    assert!(
        message.contains("the client speaks version 2, this server speaks version 4"),
        "{message}"
    );
    // This client at an old server, played by a listener that answers as version 2 would had
    // it taken the hello (a real one refuses it first, naming both versions).
    let old_server = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = old_server.local_addr().unwrap().to_string();
    let answer = std::thread::spawn(move || {
        let (mut c, _) = old_server.accept().unwrap();
        let _ = protocol::read_message(&mut c);
        let hello = br#"{"type":"server_hello","version":2,"capabilities":["tcp"],"system":"bytepath 0.0.1","challenge":null}"#;
        protocol::write_frame(&mut c, hello).unwrap();
        let mut rest = Vec::new();
        let _ = c.read_to_end(&mut rest);
    });
    let out = common::bytepath()
        .args(["mesh", "--hosts", &format!("{address},127.0.0.1:9")])
        .args(["--visits", "1", "--sizes", "4K", "--patterns", "stream"])
        .arg("--out")
        .arg(tempfile::tempdir().unwrap().path().join("m"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("this client speaks version 4, the server speaks version 2"),
        "{err}"
    );
    answer.join().unwrap();
}

#[test]
fn a_peer_that_answers_no_bytepath_hello_is_refused_without_detail_and_logged_in_full() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let token = dir.path().join("token");
    common::write_token(&token, FLEET);
    let source = Server::start_logged(
        "5s",
        &[
            "--allow-peers",
            "127.0.0.0/8",
            "--peer-ports",
            "1-65535",
            "--token-file",
            token.to_str().unwrap(),
        ],
        &log,
    );
    // A closed port: a listener bound, then closed.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    // Another service: answers every connection with an HTTP status line.
    let http = TcpListener::bind("127.0.0.1:0").unwrap();
    let http_port = http.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut c in http.incoming().flatten() {
            use std::io::Write;
            let _ = c.write_all(b"HTTP/1.0 400 Bad Request\r\n\r\n");
        }
    });
    // Nearly at once: each answer comes after the same fixed delay (tests/remote_hygiene.rs);
    // the second a second later, once the first no longer holds the server (one at a time).
    let told: Vec<String> = std::thread::scope(|scope| {
        let asks: Vec<_> = [(0, closed_port), (1, http_port)]
            .map(|(after, port)| {
                let source = &source;
                scope.spawn(move || {
                    std::thread::sleep(Duration::from_secs(after));
                    let mut s = hello(source, FLEET.as_bytes());
                    let record = match peer_run(&mut s, &format!("127.0.0.1:{port}")) {
                        Message::PeerRecord { record } => record,
                        other => panic!("got {}", other.kind()),
                    };
                    assert_ne!(record["status"], "completed", "{record}");
                    record["errors"]
                        .to_string()
                        .replace(&port.to_string(), "PORT")
                })
            })
            .into();
        asks.into_iter().map(|a| a.join().unwrap()).collect()
    });
    // Both the same, and naming nothing of what was there.
    assert_eq!(told[0], told[1]);
    assert!(
        told[0].contains("the peer at 127.0.0.1:PORT did not answer a bytepath hello"),
        "{}",
        told[0]
    );
    for leak in ["refused", "os error", "declared", "HTTP", "frame"] {
        assert!(!told[0].contains(leak), "{leak} in {}", told[0]);
    }
    std::thread::sleep(Duration::from_millis(200));
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("Connection refused"), "{logged}");
    assert!(
        logged.contains(&format!("127.0.0.1:{http_port}: waiting for its hello")),
        "{logged}"
    );
}
