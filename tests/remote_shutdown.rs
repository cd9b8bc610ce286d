//! `bytepath server`'s graceful end: SIGTERM stops the run in progress, tells its client why,
//! and the server exits 0, also as PID 1 of a PID namespace (where the kernel drops signals
//! that have no handler); a server starting removes the test folders a killed one left.
mod common;
use common::Server;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn sigterm(pid: u32) {
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -TERM {pid}");
}

/// The child's exit status, waiting at most `limit`; kills it and fails past that.
fn exits_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let since = Instant::now();
    while since.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("still running {limit:?} after SIGTERM");
}

fn long_run(server: &Server) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
        .args([
            "run", "-m", "send", "-p", "stream", "-s", "64K", "-d", "30s",
        ])
        .args(["--remote", &server.address()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn sigterm_stops_the_run_in_progress_tells_its_client_and_exits_0() {
    let mut server = Server::start("1s", &[]);
    let client = long_run(&server);
    std::thread::sleep(Duration::from_millis(2000));
    assert!(server.still_running());
    sigterm(server.child.id());
    let status = exits_within(&mut server.child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "the server's exit: {status:?}");
    // The client was told why its 30 s run ended after about 2 s, and stopped its side too.
    let out = client.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("error: flow 0 sender: the server was asked to end (SIGTERM or SIGINT)"),
        "the client's report: {text}"
    );
    assert!(text.contains("status: failed"), "{text}");
}

/// The pid of `parent`'s only child (unshare --fork's: the process it made PID 1).
fn only_child(parent: u32) -> Option<u32> {
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(5) {
        let path = format!("/proc/{parent}/task/{parent}/children");
        let children = std::fs::read_to_string(path).unwrap_or_default();
        if let Some(pid) = children.split_whitespace().next() {
            return pid.parse().ok();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn sigterm_ends_the_server_with_0_also_as_pid_1_of_a_pid_namespace() {
    let spawned = Command::new("unshare")
        .args(["--pid", "--fork", "--"])
        .arg(assert_cmd::cargo::cargo_bin("bytepath"))
        .args(["server", "--port", "0", "--timeout", "1s", "--insecure"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut unshare) = spawned else {
        common::skip("unshare(1) cannot be run here");
        return;
    };
    let mut line = String::new();
    let _ = std::io::BufReader::new(unshare.stdout.take().unwrap()).read_line(&mut line);
    if !line.contains("listening on") {
        let status = unshare.wait().unwrap();
        common::skip(format!(
            "no PID namespace here (unshare --pid needs root): {status:?}"
        ));
        return;
    }
    let server = only_child(unshare.id()).expect("unshare's child, the server");
    let status = std::fs::read_to_string(format!("/proc/{server}/status")).unwrap();
    let in_namespace = status.lines().find(|l| l.starts_with("NSpid:")).unwrap();
    assert!(
        in_namespace.trim_end().ends_with("\t1"),
        "the server is PID 1 in its namespace: {in_namespace}"
    );
    sigterm(server);
    // unshare --fork exits with its child's status.
    let status = exits_within(&mut unshare, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// A server with `temp` as its temporary folder and `stderr` where said; with its address,
/// once it has printed its listening line.
fn server_in(temp: &std::path::Path, stderr: Stdio, extra: &[&str]) -> (Child, String) {
    let mut server = Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
        .args(["server", "--port", "0", "--insecure"])
        .args(extra)
        .env("TMPDIR", temp)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("listening on"), "{line}");
    let address = line.split_whitespace().nth(4).unwrap().to_string();
    (server, address)
}

#[test]
fn a_starting_server_removes_test_folders_a_killed_one_left_but_not_a_live_ones() {
    let temp = tempfile::tempdir().unwrap();
    // No process has this id (above the kernel's pid_max limit of 2^22).
    let stale = temp.path().join("bytepath-file-99999999-1");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("1024.bin"), [0u8; 1024]).unwrap();
    let live = temp
        .path()
        .join(format!("bytepath-file-{}-1", std::process::id()));
    std::fs::create_dir(&live).unwrap();
    let (server, _) = server_in(temp.path(), Stdio::piped(), &[]);
    assert!(!stale.exists(), "the stale folder is still there");
    assert!(live.exists(), "a live process's folder was removed");
    sigterm(server.id());
    let out = server.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bytepath-file-99999999-1"), "{err}");
    assert!(err.contains("SIGTERM received"), "{err}");
}

/// A server writing a 4 GiB test file for a `file --remote` client; with its log's path, the
/// client, and the folder once it appeared.
struct Writing {
    server: Child,
    log: std::path::PathBuf,
    client: Child,
    folder: std::path::PathBuf,
    _temps: (tempfile::TempDir, tempfile::TempDir),
}

impl Drop for Writing {
    fn drop(&mut self) {
        for child in [&mut self.client, &mut self.server] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn writing() -> Writing {
    let temp = tempfile::tempdir().unwrap();
    let log = temp.path().join("server.log");
    let stderr = Stdio::from(std::fs::File::create(&log).unwrap());
    let (server, address) = server_in(temp.path(), stderr, &["--timeout", "5s"]);
    let client_temp = tempfile::tempdir().unwrap();
    // 4 GiB: written and fsynced, far longer than the moment the test waits.
    let client = Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
        .args(["file", "--json", "--remote", &address, "--sizes", "4G"])
        .arg("--out")
        .arg(client_temp.path().join("results"))
        .env("TMPDIR", client_temp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let folder = || {
        std::fs::read_dir(temp.path())
            .unwrap()
            .flatten()
            .find(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("bytepath-file-")
            })
            .map(|e| e.path())
    };
    let since = Instant::now();
    while folder().is_none() && since.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let folder = folder().expect("the server's test folder");
    Writing {
        server,
        log,
        client,
        folder,
        _temps: (temp, client_temp),
    }
}

/// Waits up to 10 s for `folder` to go; true if it went.
fn goes(folder: &std::path::Path) -> bool {
    let since = Instant::now();
    while folder.exists() && since.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    !folder.exists()
}

const WRITE_STOPPED: &str =
    "the client left, or the server was asked to end, while the test file was written";

#[test]
fn a_file_write_stops_when_its_client_leaves_and_its_folder_goes() {
    let mut w = writing();
    w.client.kill().unwrap(); // SIGKILL: the control connection just closes.
    w.client.wait().unwrap();
    assert!(goes(&w.folder), "the folder outlived its client by 10 s");
    sigterm(w.server.id());
    assert_eq!(w.server.wait().unwrap().code(), Some(0));
    let text = std::fs::read_to_string(&w.log).unwrap();
    assert!(text.contains(WRITE_STOPPED), "the server's log: {text}");
}

#[test]
fn sigterm_mid_write_stops_it_removes_the_folder_and_exits_0() {
    let mut w = writing();
    sigterm(w.server.id());
    let status = exits_within(&mut w.server, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
    assert!(!w.folder.exists(), "the folder outlived the server");
    let text = std::fs::read_to_string(&w.log).unwrap();
    assert!(text.contains(WRITE_STOPPED), "the server's log: {text}");
    // The client's transfer failed with the server's refusal, and it ended.
    assert!(!exits_within(&mut w.client, Duration::from_secs(10)).success());
}
