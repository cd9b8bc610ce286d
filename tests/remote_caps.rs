//! Limits the server holds itself, whatever a token holder does (issue 37, items 3 and 4), on
//! the real binary over loopback: a run's side sends nothing before `Go` and a session that
//! trickles a frame instead of `Go` ends at its --max-duration cap; a run that goes on
//! streaming while its client trickles a `Stop` is stopped at --max-bytes all the same; and a
//! `servers` point's model closes a stranger's connection (no echo, no thread) while the
//! driver's clients are served and the point completes; and a file transfer whose client stops
//! reading is shut at --max-duration from its go.
mod common;
use bytepath::remote::channel::ControlStream;
use bytepath::remote::protocol::{self, Message, RunRequest};
use common::{bytepath, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A fresh token by `bytepath keygen`, in `dir`.
fn keygen(dir: &std::path::Path) -> String {
    let path = dir.join("token");
    bytepath().arg("keygen").arg(&path).assert().success();
    path.to_str().unwrap().to_string()
}

/// A session that has proved the token, ready for its request.
fn authenticated(server: &Server, token_file: &str) -> ControlStream {
    let token = bytepath::remote::auth::read_token(token_file.as_ref()).unwrap();
    common::token_session(&server.address(), &token)
}

/// Asks for `request` and joins its one tcp flow; returns the flow once `Ready` came.
fn joined(s: &mut ControlStream, request: RunRequest) -> TcpStream {
    protocol::write_message(s, &Message::Run { request }).unwrap();
    let Message::Accepted {
        data_port, cookie, ..
    } = protocol::read_message(s).unwrap()
    else {
        panic!("no accepted")
    };
    let cookie = protocol::from_hex(&cookie).unwrap();
    let mut flow = TcpStream::connect(("127.0.0.1", data_port)).unwrap();
    flow.write_all(&bytepath::remote::data_tag(&cookie, 0))
        .unwrap();
    assert!(matches!(protocol::read_message(s).unwrap(), Message::Ready));
    flow
}

/// Reads the flow until its end (or 20 s): the bytes, and when the end came.
fn drain(mut flow: TcpStream) -> std::thread::JoinHandle<(u64, Instant)> {
    std::thread::spawn(move || {
        flow.set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let mut received = 0u64;
        while let Ok(n @ 1..) = flow.read(&mut buf) {
            received += n as u64;
        }
        (received, Instant::now())
    })
}

/// Instead of a frame, a record header and then one byte every 100 ms, on the raw socket,
/// until the server closes it (or 30 s).
fn trickle(s: &ControlStream) -> std::thread::JoinHandle<()> {
    let raw = TcpStream::try_clone(s).unwrap();
    std::thread::spawn(move || {
        if (&raw).write_all(&[0, 64]).is_err() {
            return;
        }
        for _ in 0..300 {
            std::thread::sleep(Duration::from_millis(100));
            if (&raw).write_all(&[0]).is_err() {
                return;
            }
        }
    })
}

/// Reads the control connection's raw socket until the server closes it; when that was.
fn closed_at(s: &ControlStream) -> Instant {
    let mut raw = TcpStream::try_clone(s).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut sink = Vec::new();
    let ended = raw.read_to_end(&mut sink);
    let at = Instant::now();
    if let Err(e) = &ended {
        assert!(
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "still open after 30 s"
        );
    }
    at
}

fn counted_stream(bytes: u64, duration_ms: u64) -> RunRequest {
    RunRequest {
        total_bytes: Some(bytes),
        ..RunRequest::plain(("tcp", "send", "stream"), 64 << 10, duration_ms)
    }
}

#[test]
fn a_token_holder_trickling_instead_of_go_gets_no_byte_and_its_session_ends_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let token = keygen(dir.path());
    let caps = ["--max-bytes", "1M", "--max-duration", "1s"];
    let server = Server::start("5s", &[&["--token-file", &token][..], &caps].concat());
    let mut s = authenticated(&server, &token);
    let asked = Instant::now();
    let flow = joined(&mut s, counted_stream(1 << 20, 1000));
    let drained = drain(flow);
    let trickling = trickle(&s);
    let took = closed_at(&s).duration_since(asked);
    // The cap (1 s) plus 1 s.
    assert!(took < Duration::from_secs(2), "the session lasted {took:?}");
    let (received, _) = drained.join().unwrap();
    assert_eq!(received, 0, "the server's side sent before go");
    trickling.join().unwrap();
    // The server is free again: an honest counted run completes.
    let out = bytepath()
        .args(["run", "--json", "-m", "send", "-p", "stream", "-s", "64K"])
        .args(["--bytes", "512K", "-d", "500ms", "--warmup", "0s"])
        .args(["--remote", &server.address(), "--token-file", &token])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
    // The server's sender handed over the count and the message that opens the receiver's
    // window, no more: a fast path cannot carry an honest run past --max-bytes while its stop
    // travels.
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["sides"][0]["side"], "sender");
    assert_eq!(
        record["sides"][0]["messages"],
        8 + 1,
        "{}",
        record["sides"][0]
    );
    assert_eq!(record["sides"][1]["messages"], 8);
}

#[test]
fn a_run_whose_client_floods_and_trickles_its_stop_is_stopped_at_max_bytes_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let token = keygen(dir.path());
    let caps = ["--max-bytes", "1M", "--max-duration", "10s"];
    let server = Server::start("5s", &[&["--token-file", &token][..], &caps].concat());
    let mut s = authenticated(&server, &token);
    // Declares one 64 KiB round trip over a 10 s run, says go, then asks without end and
    // never stops: an rr server answers what comes (a stream sender keeps to the count).
    let request = RunRequest {
        total_bytes: Some(64 << 10),
        ..RunRequest::plain(("tcp", "send", "rr"), 64 << 10, 10_000)
    };
    let flow = joined(&mut s, request);
    let asking = flood(flow.try_clone().unwrap());
    let drained = drain(flow);
    protocol::write_message(&mut s, &Message::Go).unwrap();
    let went = Instant::now();
    let trickling = trickle(&s);
    let (received, ended) = drained.join().unwrap();
    let took = ended.duration_since(went);
    assert!(
        received > 1 << 20,
        "stopped before the limit: {received} bytes"
    );
    // The limit, its margin (a quarter, or the socket buffers in flight), and one 20 ms
    // poll's worth at a few GB/s.
    assert!(received < 256 << 20, "{received} bytes went through");
    // Stopped, then its flow shut 0.5 s later: far from the 10 s the run asked for.
    assert!(took < Duration::from_secs(3), "the flow lasted {took:?}");
    drop(s);
    drop(server);
    asking.join().unwrap();
    trickling.join().unwrap();
}

/// Writes 64 KiB requests on the flow until the server shuts it (or 20 s).
fn flood(mut flow: TcpStream) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        flow.set_write_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let request = vec![0u8; 64 << 10];
        while flow.write_all(&request).is_ok() {}
    })
}

/// The process whose parent is `pid` (the forked model of a servers point).
fn child_of(pid: u32) -> u32 {
    let children: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            // pid (comm) state ppid ...: the comm may hold spaces, so after its last ')'.
            let after = stat.rsplit(')').next().unwrap_or_default();
            after.split_whitespace().nth(1) == Some(pid.to_string().as_str())
        })
        .collect();
    assert_eq!(children.len(), 1, "children of {pid}: {children:?}");
    children[0]
}

fn threads(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("Threads:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A connection from 127.0.0.2 to `port` that sends one request of `size` bytes: what came
/// back, by python3 (std cannot bind before it connects); `None` when python3 is missing.
fn stranger(port: u16, size: usize) -> Option<String> {
    let script = format!(
        "import socket\ns = socket.socket()\ns.bind(('127.0.0.2', 0))\n\
         s.connect(('127.0.0.1', {port}))\ns.settimeout(5)\n\
         try:\n    s.sendall(b'x' * {size})\n    print('echoed', len(s.recv(65536)))\n\
         except (ConnectionResetError, BrokenPipeError):\n    print('echoed 0')\n"
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

#[test]
fn a_stranger_gets_no_echo_and_no_thread_from_a_servers_point_and_the_point_completes() {
    let dir = tempfile::tempdir().unwrap();
    let token = keygen(dir.path());
    let server = Server::start("5s", &["--token-file", &token]);
    let mut s = authenticated(&server, &token);
    let point = Message::ServersRun {
        model: "threaded".into(),
        size: 64,
        server_threads: 1,
        clients: 2,
        connections: Some(2),
    };
    protocol::write_message(&mut s, &point).unwrap();
    let Message::ServersAccepted { port } = protocol::read_message(&mut s).unwrap() else {
        panic!("no servers_accepted")
    };
    let model = child_of(server.child.id());
    std::thread::sleep(Duration::from_millis(200));
    let before = threads(model);
    let Some(answer) = stranger(port, 64) else {
        println!("skipped: python3 is not here to connect from 127.0.0.2");
        return;
    };
    assert_eq!(answer.trim(), "echoed 0", "the stranger got: {answer}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(threads(model), before, "the stranger added a thread");
    // The driver's two clients, from the control connection's address, are echoed.
    let clients: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            c.write_all(&[7u8; 64]).unwrap();
            let mut echo = [0u8; 64];
            c.read_exact(&mut echo).unwrap();
            assert_eq!(echo, [7u8; 64]);
            c
        })
        .collect();
    // A thread per driver client; the acceptor ends once the point's count is in.
    let with_clients = threads(model);
    assert!(
        with_clients == before + 2 || with_clients == before + 1,
        "a thread per driver client: {before} before, {with_clients} with them"
    );
    // The point's count is in: a third connection, even from the driver, is not served.
    let third = TcpStream::connect(("127.0.0.1", port));
    if let Ok(mut third) = third {
        third
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let _ = third.write_all(&[7u8; 64]);
        let mut echo = [0u8; 64];
        assert!(third.read_exact(&mut echo).is_err(), "a third was echoed");
    }
    // (The acceptor itself may have ended once the count was in.)
    assert!(
        threads(model) <= before + 2,
        "a third connection added a thread"
    );
    protocol::write_message(&mut s, &Message::ServersWindow).unwrap();
    protocol::write_message(&mut s, &Message::ServersStop).unwrap();
    let Message::ServersReport { report } = protocol::read_message(&mut s).unwrap() else {
        panic!("no servers_report")
    };
    assert_eq!(report.accepted, 2, "the stranger was counted: {report:?}");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    drop(clients);
    protocol::write_message(&mut s, &Message::Bye).unwrap();
    assert!(matches!(
        protocol::read_message(&mut s).unwrap(),
        Message::Bye
    ));
}

#[test]
fn a_file_client_that_stops_reading_is_cut_at_max_duration_from_its_go() {
    let dir = tempfile::tempdir().unwrap();
    let token = keygen(dir.path());
    let caps = ["--token-file", &token, "--max-duration", "1s"];
    let server = Server::start("5s", &caps);
    let mut s = authenticated(&server, &token);
    let request = serde_json::json!({"type": "file_run", "request": {"size": 64 << 20,
        "mechanism": "sendfile", "chunk": 65536, "cache": "warm", "verify": false,
        "counters": "none"}});
    protocol::write_frame(&mut s, request.to_string().as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let Message::FileAccepted {
        data_port, cookie, ..
    } = protocol::read_message(&mut s).unwrap()
    else {
        panic!("no file_accepted")
    };
    let cookie = protocol::from_hex(&cookie).unwrap();
    let mut flow = TcpStream::connect(("127.0.0.1", data_port)).unwrap();
    flow.write_all(&bytepath::remote::data_tag(&cookie, 0))
        .unwrap();
    protocol::write_message(&mut s, &Message::FileGo { rep: 0 }).unwrap();
    let go = Instant::now();
    // The flow is never read: 64 MiB cannot fit the sockets' buffers, so the send blocks
    // until the server's own cap shuts it and the session.
    let closed = closed_at(&s).duration_since(go);
    assert!(
        closed >= Duration::from_millis(900) && closed < Duration::from_millis(2500),
        "the session ended {closed:?} after its go"
    );
    drop(flow);
    // The server is free again for an honest run.
    let out = bytepath()
        .args([
            "run", "--json", "-m", "send", "-p", "rr", "-d", "300ms", "--warmup", "0s",
        ])
        .args(["--remote", &server.address(), "--token-file", &token])
        .output()
        .unwrap();
    common::assert_success(&out);
}
