//! Protocol version 2's peer run, from a client that speaks the protocol by hand: a request
//! toward an address outside `--allow-peers` (or to a server started without it) is refused
//! with an error frame and the server serves the next client; a request without the right
//! token is refused before any peer run; version 1 is refused with both versions named, both
//! ways; and a peer run inside the list comes back as a record with `src` and `dst`.
mod common;
use bytepath::remote::protocol::{self, Message, RunRequest, VERSION};
use common::Server;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

fn request() -> RunRequest {
    RunRequest {
        transport: "tcp".into(),
        mechanism: "send".into(),
        pattern: "stream".into(),
        message_size: 4096,
        threads: 1,
        duration_ms: 200,
        warmup_ms: 50,
        total_bytes: None,
        recv_size: None,
        spin: false,
        verify: false,
        counters: "none".into(),
        reverse: true,
        udp_split: false,
        queue_depth: None,
        recv: None,
        profile: false,
    }
}

/// Connects, says hello as version 2 and proves `token` when the server asks for one.
fn hello(server: &Server, token: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(server.address()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let hello = Message::ClientHello {
        version: VERSION,
        capabilities: vec![],
    };
    protocol::write_message(&mut s, &hello).unwrap();
    match protocol::read_message(&mut s).unwrap() {
        Message::ServerHello {
            challenge: Some(c),
            capabilities,
            ..
        } => {
            assert!(
                capabilities.iter().any(|c| c == "peers"),
                "{capabilities:?}"
            );
            let nonce = protocol::from_hex(&c).unwrap();
            let proof = protocol::to_hex(&protocol::proof(token, &nonce));
            protocol::write_message(&mut s, &Message::Auth { proof }).unwrap();
        }
        Message::ServerHello {
            challenge: None, ..
        } => {}
        other => panic!("got {}", other.kind()),
    }
    s
}

fn peer_run(s: &mut TcpStream, peer: &str) -> Message {
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
    std::fs::write(&token, "fleet\n").unwrap();
    let token_arg = token.to_str().unwrap();
    let mut peer = Server::start("5s", &["--token-file", token_arg]);
    let mut source = Server::start(
        "5s",
        &["--allow-peers", "127.0.0.0/8", "--token-file", token_arg],
    );
    let mut s = hello(&source, b"fleet");
    let (code, message) = error_of(peer_run(&mut s, "192.0.2.9:5301"));
    assert_eq!(code, "forbidden");
    assert!(
        message.contains("192.0.2.9") && message.contains("--allow-peers 127.0.0.0/8"),
        "{message}"
    );
    // The next client gets its run: a peer run inside the list, answered with the record.
    let mut s = hello(&source, b"fleet");
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
    std::fs::write(&token, "fleet\n").unwrap();
    let mut source = Server::start(
        "5s",
        &[
            "--allow-peers",
            "127.0.0.0/8",
            "--token-file",
            token.to_str().unwrap(),
        ],
    );
    let mut s = hello(&source, b"guess");
    let (code, message) = error_of(peer_run(&mut s, "127.0.0.1:9"));
    assert_eq!(code, "auth");
    assert!(message.contains("wrong token"), "{message}");
    assert!(source.still_running());
}

#[test]
fn version_1_is_refused_both_ways_with_both_versions_named() {
    // An old client at this server.
    let server = Server::start("5s", &[]);
    let mut s = TcpStream::connect(server.address()).unwrap();
    let old = Message::ClientHello {
        version: 1,
        capabilities: vec![],
    };
    protocol::write_message(&mut s, &old).unwrap();
    let (code, message) = error_of(protocol::read_message(&mut s).unwrap());
    assert_eq!(code, "version");
    assert!(
        message.contains("the client speaks version 1, this server speaks version 2"),
        "{message}"
    );
    // This client at an old server, played by a listener that answers as version 1 would.
    let old_server = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = old_server.local_addr().unwrap().to_string();
    let answer = std::thread::spawn(move || {
        let (mut c, _) = old_server.accept().unwrap();
        let _ = protocol::read_message(&mut c);
        let hello = Message::ServerHello {
            version: 1,
            capabilities: vec!["tcp".into()],
            system: "bytepath 0.0.1".into(),
            challenge: None,
        };
        protocol::write_message(&mut c, &hello).unwrap();
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
        err.contains("this client speaks version 2, the server speaks version 1"),
        "{err}"
    );
    answer.join().unwrap();
}
