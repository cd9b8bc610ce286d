//! Hygiene of a server on a hostile network, on the real binary over loopback: a token file
//! others may read is refused on both sides with the fix (standard input is exempt); a peer
//! run toward a port outside `--peer-ports` is refused in generic words, the cause in the
//! server's log only; and a refused peer run takes the same time whatever refused it (a port
//! outside the list, a closed port, a silent service), so the server is no port scanner.
mod common;
use bytepath::remote::channel::ControlStream;
use bytepath::remote::protocol::{self, Message, RunRequest};
use common::{bytepath, Server};
use std::io::{BufRead, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

const TOKEN: &str = "3e54e94fdddce7e2134158cca5e20979";

/// When the server answers a refused peer run, after the request (its `REFUSED_AFTER`: the
/// client's 10 s hello budget and a second).
const REFUSED_AFTER: Duration = Duration::from_secs(11);
/// How far from `REFUSED_AFTER` an answer may come, and two answers from each other. Both are
/// sent by the server's own clock at the same offset from their request; what differs is
/// scheduling on a loaded test machine (tens of milliseconds) and, for the silent service,
/// the hello's budget ending a few milliseconds before the answer is due. Without the fixed
/// delay the answers differ by the whole hello budget (a closed port: about a millisecond;
/// a silent service: 10 s), far outside it.
const TOLERANCE: Duration = Duration::from_millis(1500);

#[test]
fn a_token_file_others_may_read_is_refused_with_the_fix_and_stdin_is_exempt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("token");
    common::write_token(&path, TOKEN);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let file = path.to_str().unwrap();
    let server = bytepath()
        .args(["server", "--port", "0", "--token-file", file])
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    let driver = bytepath()
        .args(["run", "--remote", "127.0.0.1:9", "--token-file", file])
        .args(["-m", "send", "--duration", "100ms"])
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    for out in [server, driver] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("--token-file {file}: mode 0644 lets others read"))
                && err.contains(&format!("run `chmod 600 {file}`")),
            "{err}"
        );
    }
    // The same token on standard input (how `mesh --launch ssh` hands it over) is taken.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
        .args(["server", "--port", "0", "--token-file", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    writeln!(child.stdin.as_mut().unwrap(), "{TOKEN}").unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("token required"), "{line:?}");
}

/// An authenticated control session with `server`.
fn session(server: &Server) -> ControlStream {
    common::token_session(&server.address(), TOKEN.as_bytes())
}

/// Asks `server` for a peer run toward `peer`: the answer and how long it took.
fn peer_run(server: &Server, peer: &str) -> (Message, Duration) {
    let mut s = session(server);
    let run = Message::PeerRun {
        peer: peer.into(),
        src: "a".into(),
        dst: "b".into(),
        request: RunRequest {
            warmup_ms: 50,
            reverse: true,
            ..RunRequest::plain(("tcp", "send", "stream"), 4096, 200)
        },
    };
    let asked = Instant::now();
    protocol::write_message(&mut s, &run).unwrap();
    let answer = protocol::read_message(&mut s).unwrap();
    (answer, asked.elapsed())
}

fn source(dir: &std::path::Path, name: &str, extra: &[&str]) -> Server {
    let token = dir.join(format!("{name}.token"));
    common::write_token(&token, TOKEN);
    let mut args = vec!["--allow-peers", "127.0.0.0/8", "--token-file"];
    args.push(token.to_str().unwrap());
    args.extend(extra);
    Server::start_logged("5s", &args, &dir.join(format!("{name}.log")))
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let probe = TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

#[test]
fn peer_runs_are_refused_in_the_same_words_after_the_same_time_whatever_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let closed = closed_port();
    // Listens and never answers: the hello waits for its whole budget.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let listed = format!("{closed},{silent_port}");
    // Two sources: a peer run holds its source (one test at a time) while it connects.
    let a = source(dir.path(), "a", &["--peer-ports", &listed]);
    let b = source(dir.path(), "b", &["--peer-ports", &listed]);
    let outside = (0..)
        .map(|_| closed_port())
        .find(|p| ![closed, silent_port].contains(p))
        .unwrap();
    let asks = [
        (&a, format!("127.0.0.1:{outside}")),
        (&a, format!("127.0.0.1:{closed}")),
        (&b, format!("127.0.0.1:{silent_port}")),
    ];
    let answers: Vec<(Message, Duration)> = std::thread::scope(|scope| {
        let runs: Vec<_> = asks
            .iter()
            .enumerate()
            .map(|(i, (server, peer))| {
                // One source has one place before its token is proved: the sessions do not
                // start their handshakes at the same instant.
                scope.spawn(move || {
                    std::thread::sleep(Duration::from_millis(300 * i as u64));
                    peer_run(server, peer)
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    drop(silent);
    // Outside the list: an error frame in generic words.
    match &answers[0].0 {
        Message::Error { message, .. } => assert_eq!(
            message,
            &format!("peer 127.0.0.1:{outside}: not a host and port this server may run tests toward (its --allow-peers and --peer-ports; the server's log says why)")
        ),
        other => panic!("expected an error frame, got {}", other.kind()),
    }
    // Closed and silent: a record that says only that no bytepath hello came.
    for (answer, port) in answers[1..].iter().zip([closed, silent_port]) {
        match &answer.0 {
            Message::PeerRecord { record } => {
                let errors = record["errors"].to_string();
                assert!(
                    errors.contains(&format!(
                        "the peer at 127.0.0.1:{port} did not answer a bytepath hello"
                    )) && !errors.contains("os error"),
                    "{errors}"
                );
            }
            other => panic!("expected a record, got {}", other.kind()),
        }
    }
    let took: Vec<Duration> = answers.iter().map(|a| a.1).collect();
    println!("outside the list, closed, silent: answered after {took:?}");
    for t in &took {
        assert!(
            *t >= REFUSED_AFTER && *t < REFUSED_AFTER + TOLERANCE,
            "answered after {t:?}; all: {took:?}"
        );
    }
    let spread = took
        .iter()
        .max()
        .unwrap()
        .saturating_sub(*took.iter().min().unwrap());
    assert!(spread < TOLERANCE, "{took:?}");
    // The log has the cause the driver was not told.
    std::thread::sleep(Duration::from_millis(200));
    let log = std::fs::read_to_string(dir.path().join("a.log")).unwrap();
    assert!(
        log.contains(&format!("port {outside} is outside --peer-ports {listed}")),
        "{log}"
    );
    assert!(log.contains("Connection refused"), "{log}");
}

#[test]
fn by_default_a_peer_run_goes_only_to_the_servers_own_port() {
    let dir = tempfile::tempdir().unwrap();
    let a = source(dir.path(), "a", &[]);
    let listening = TcpListener::bind("127.0.0.2:0").unwrap();
    let own = format!("127.0.0.2:{}", a.port);
    let other = format!("127.0.0.2:{}", listening.local_addr().unwrap().port());
    // Both at once: each is answered after the fixed delay.
    let (refused, tried) = std::thread::scope(|scope| {
        let refused = scope.spawn(|| peer_run(&a, &other).0);
        // One source has one place before its token is proved: not the same instant.
        std::thread::sleep(Duration::from_millis(300));
        let tried = scope.spawn(|| peer_run(&a, &own).0);
        (refused.join().unwrap(), tried.join().unwrap())
    });
    match refused {
        Message::Error { message, .. } => {
            assert!(message.contains("not a host and port"), "{message}")
        }
        other => panic!("expected an error frame, got {}", other.kind()),
    }
    // Its own port on another address passes the lists: nothing listens there, so the record
    // says no bytepath hello came (the run was tried, not refused).
    match tried {
        Message::PeerRecord { record } => {
            let errors = record["errors"].to_string();
            assert!(
                errors.contains("did not answer a bytepath hello"),
                "{errors}"
            );
        }
        other => panic!("expected a record, got {}", other.kind()),
    }
    std::thread::sleep(Duration::from_millis(200));
    let log = std::fs::read_to_string(dir.path().join("a.log")).unwrap();
    assert!(
        log.contains("outside --peer-ports this server's own port"),
        "{log}"
    );
}
