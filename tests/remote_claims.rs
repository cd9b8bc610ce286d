//! One run at a time, by construction: a session that frees the server early (before its
//! samples go back) and then ends slowly must not free it again over the next session's run.
//! Before the claim guard it did, and a third run overlapped the second.
mod common;
use bytepath::engine::peer::Peer;
use bytepath::remote::client::RemotePeer;
use common::Server;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn a_run_whose_client_is_slow_to_take_its_samples_cannot_let_two_runs_overlap() {
    // The server waits up to 1 s for a client's goodbye after its samples.
    let server = Server::start("5s", &[]);
    let spec = common::run_spec(&[
        "-m", "send", "-p", "stream", "-s", "64K", "-d", "300ms", "--warmup", "0s",
    ]);
    let target = bytepath::config::parse_remote(&server.address()).unwrap();
    // Client A: runs, drains its flow, and never reads its samples nor says goodbye.
    let mut slow = RemotePeer::new(target, None, false);
    let flow = slow
        .connect(&spec, spec.socket_options())
        .unwrap()
        .pop()
        .unwrap();
    slow.start().unwrap();
    let go = Instant::now();
    let drain = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = flow.endpoint.read(&mut buf, false) {
            if n == 0 {
                break;
            }
        }
    });
    std::thread::sleep(Duration::from_millis(600));
    // A's side has ended and freed the server; its session waits for A's goodbye. Client B
    // takes the server meanwhile for a 4 s run.
    let mut second = std::process::Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
        .args(["run", "-m", "send", "-p", "stream", "-s", "64K", "-d", "4s"])
        .args(["--warmup", "0s", "--remote", &server.address()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A's session ends (its goodbye never came) while B runs; then C asks.
    std::thread::sleep(Duration::from_millis(2500).saturating_sub(go.elapsed()));
    let third = common::bytepath()
        .args(["run", "-m", "send", "-d", "300ms", "--warmup", "0s"])
        .args(["--remote", &server.address()])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&third.stderr);
    assert!(
        second.try_wait().unwrap().is_none(),
        "B ended before C asked; the test proves nothing"
    );
    assert_eq!(third.status.code(), Some(1), "C ran beside B: {err}");
    assert!(err.contains("busy"), "{err}");
    assert!(second.wait().unwrap().success(), "B's run failed");
    drop(slow);
    drain.join().unwrap();
}
