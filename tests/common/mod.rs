//! Helpers shared by the integration tests: run the real binary, parse its JSON.
#![allow(dead_code)]
pub mod folders;
pub mod noise;

use assert_cmd::Command;
use serde_json::Value;

/// The binary, with `--settle` off and no visit ever marked disturbed unless a test asks:
/// many short studies on a shared machine would otherwise each wait for quiet, and count
/// visits made again (tests/machine_watch.rs tests both itself).
pub fn bytepath() -> Command {
    let mut command = Command::cargo_bin("bytepath").expect("binary built");
    command.env("BYTEPATH_SETTLE", "off");
    command.env("BYTEPATH_QUIET_THRESHOLD", "100%");
    command
}

/// Writes a token file as the binary requires one: readable by its owner only (mode 0600; a
/// token file group or others may read is refused).
pub fn write_token(path: &std::path::Path, token: &str) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    writeln!(file, "{token}").unwrap();
}

/// `bytepath compare [extra] OLD NEW`: its exit code, and stdout followed by stderr.
pub fn compare(
    old: &std::path::Path,
    new: &std::path::Path,
    extra: &[&str],
) -> (Option<i32>, String) {
    let out = bytepath()
        .arg("compare")
        .args(extra)
        .arg(old)
        .arg(new)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    (
        out.status.code(),
        text + &String::from_utf8_lossy(&out.stderr),
    )
}

/// Runs `bytepath run` with short durations plus `args`, expecting JSON on stdout.
pub fn run_json(args: &[&str]) -> (Value, i32) {
    let out = bytepath()
        .args(["run", "--duration", "300ms", "--warmup", "100ms", "--json"])
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("bytepath ran");
    let code = out.status.code().unwrap_or(-1);
    let text = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): stdout {text} stderr {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (json, code)
}

pub fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}

/// Says that the running test did not run here, and why: one line `SKIP <file>::<test>:
/// <reason>` on stderr (seen with `--nocapture`), appended to the file `BYTEPATH_SKIP_LOG`
/// names when it is set. `.ci/run` sets it and sums the lines up after `cargo test`, because
/// the harness hides what a passing test prints. The caller returns right after; a test that
/// can never run here is `#[ignore = "why"]` instead.
pub fn skip(reason: impl std::fmt::Display) {
    log_skip(&test_name(), &reason.to_string());
}

/// Says that `part` of the running test (a mechanism, a case) did not run here, and why; the
/// rest of the test goes on.
pub fn skip_part(part: &str, reason: impl std::fmt::Display) {
    log_skip(&format!("{} ({part})", test_name()), &reason.to_string());
}

/// `file::test`: the test binary's crate and the harness's name for the test (it names each
/// test's thread after it).
fn test_name() -> String {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("(a thread of its own)");
    format!("{}::{test}", env!("CARGO_CRATE_NAME"))
}

fn log_skip(what: &str, reason: &str) {
    use std::io::Write;
    let line = format!("SKIP {what}: {}\n", reason.replace('\n', " "));
    eprint!("{line}");
    let Some(path) = std::env::var_os("BYTEPATH_SKIP_LOG") else {
        return;
    };
    // One write with O_APPEND: lines from tests running at once do not interleave.
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut log| log.write_all(line.as_bytes()))
        .unwrap_or_else(|e| panic!("BYTEPATH_SKIP_LOG {}: {e}", path.to_string_lossy()));
}

pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// Why network namespaces cannot be made here (they need root and the `ip` command), if not.
pub fn namespaces_unavailable() -> Option<&'static str> {
    if !is_root() {
        Some("not root")
    } else if !has_command("ip") {
        Some("the ip command (iproute2) is missing")
    } else {
        None
    }
}

pub fn has_command(name: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Fails the test with the child's stderr and stdout (a `--json` run's errors are in its
/// record) unless it exited 0.
pub fn assert_success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "exit {:?}: {}\nstdout: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A completed run that delivered every byte both ways, checked every byte it received and
/// measured messages on both sides.
pub fn assert_delivered(r: &Value, what: &str) {
    assert_eq!(r["status"], "completed", "{what}: {}", r["errors"]);
    let t = &r["transfer"];
    assert!(u(&t["sender_sent_bytes"]) > 0, "{what}: nothing sent");
    assert_eq!(
        t["sender_sent_bytes"], t["receiver_received_bytes"],
        "{what}"
    );
    assert_eq!(
        t["receiver_sent_bytes"], t["sender_received_bytes"],
        "{what}"
    );
    assert_eq!(t["all_delivered"], true, "{what}");
    let v = &r["verify"];
    assert_eq!(
        v["mismatched_bytes"], 0,
        "{what}: {}",
        v["first_mismatches"]
    );
    let received = u(&t["receiver_received_bytes"]) + u(&t["sender_received_bytes"]);
    assert_eq!(
        u(&v["checked_bytes"]),
        received,
        "{what}: every received byte is checked"
    );
    for side in r["sides"].as_array().unwrap() {
        assert!(
            u(&side["messages"]) > 0,
            "{what}: {} measured no message",
            side["side"]
        );
    }
}

/// A `bytepath server` on a free loopback port, with a temporary folder of its own (`TMPDIR`),
/// killed when dropped.
pub struct Server {
    pub child: std::process::Child,
    pub port: u16,
    pub temp: tempfile::TempDir,
}

impl Server {
    /// Starts a server whose every read times out after `timeout` (e.g. "1s"), with `extra`;
    /// `--insecure` when `extra` gives no `--token-file` (a test on loopback).
    pub fn start(timeout: &str, extra: &[&str]) -> Server {
        Server::start_with(timeout, extra, std::process::Stdio::null())
    }

    /// Like `start`, with the server's stderr (its log) written to `log`.
    pub fn start_logged(timeout: &str, extra: &[&str], log: &std::path::Path) -> Server {
        let log = std::fs::File::create(log).unwrap();
        Server::start_with(timeout, extra, log.into())
    }

    fn start_with(timeout: &str, extra: &[&str], stderr: std::process::Stdio) -> Server {
        use std::io::BufRead;
        let temp = tempfile::tempdir().unwrap();
        let insecure = match extra.contains(&"--token-file") {
            true => None,
            false => Some("--insecure"),
        };
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
            .args(["server", "--port", "0", "--timeout", timeout])
            .args(extra)
            .args(insecure)
            .env("TMPDIR", temp.path())
            .stdout(std::process::Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("server started");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "bytepath server listening on 127.0.0.1:PORT (protocol version 4, ...)"
        let port = line
            .split_whitespace()
            .nth(4)
            .and_then(|addr| addr.rsplit(':').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Server { child, port, temp }
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn still_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The sweep report's questions, read from the report `bytepath report` renders for the demo
/// sweep (so the list follows the code, not a copy of it).
/// The answer in `dir/answers.json` whose question contains `words`.
pub fn answer_in(dir: &std::path::Path, words: &str) -> Value {
    let text = std::fs::read_to_string(dir.join("answers.json")).unwrap();
    let answers: Value = serde_json::from_str(&text).unwrap();
    answers
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["question"].as_str().unwrap().contains(words))
        .cloned()
        .unwrap_or_else(|| panic!("no answer about {words:?}: {answers}"))
}

/// A report page parsed as XML (every page is XHTML with a doctype): well formed or the test
/// fails here.
pub fn parse_xhtml(page: &str) -> roxmltree::Document<'_> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(page, options).expect("well-formed XHTML")
}

pub fn sweep_questions() -> Vec<String> {
    static QUESTIONS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    QUESTIONS
        .get_or_init(|| {
            use bytepath::analysis::synthetic::{demo_sweep, jsonl};
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("results.jsonl"), jsonl(&demo_sweep(false))).unwrap();
            bytepath().arg("report").arg(dir.path()).assert().success();
            let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
            let questions: Vec<String> = md
                .lines()
                .filter_map(|l| l.strip_prefix("### "))
                .map(str::to_string)
                .collect();
            assert!(questions.len() >= 7, "the sweep asks its questions: {md}");
            questions
        })
        .clone()
}

/// `page` (HTML or Markdown) holds none of the sweep's questions.
pub fn assert_no_sweep_question(page: &str) {
    for q in sweep_questions() {
        let html = bytepath::report::plot::escape(&q);
        assert!(
            !page.contains(&q) && !page.contains(&html),
            "a sweep question in another study's report: {q}"
        );
    }
}

/// The `RunSpec` `bytepath run ARGS` would measure, for tests that drive a session through the
/// library's client.
pub fn run_spec(args: &[&str]) -> bytepath::config::RunSpec {
    use clap::Parser;
    let cli = bytepath::cli::Cli::try_parse_from(["bytepath", "run"].iter().chain(args)).unwrap();
    let bytepath::cli::Command::Run(run) = cli.command else {
        unreachable!("parsed as run")
    };
    bytepath::args::run::run_spec(&run, &[0]).unwrap()
}

/// Connects to a server's control port and says hello as this version (no capabilities);
/// returns the connection, the client's hello and the server's answer (the handshake's
/// prologue).
pub fn send_hello(address: &str) -> (bytepath::remote::channel::ControlStream, Vec<u8>, Vec<u8>) {
    use bytepath::remote::protocol::{self, Message, VERSION};
    let tcp = std::net::TcpStream::connect(address).unwrap();
    let mut s = bytepath::remote::channel::ControlStream::plain(tcp);
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let hello = protocol::encode(&Message::ClientHello {
        version: VERSION,
        capabilities: vec![],
    })
    .unwrap();
    protocol::write_frame(&mut s, &hello).unwrap();
    let answer = protocol::read_frame(&mut s).unwrap();
    (s, hello, answer)
}

/// An authenticated control session with the server at `address` (hellos, the token's
/// handshake, the server's system read), for tests that then speak the protocol by hand.
pub fn token_session(address: &str, token: &[u8]) -> bytepath::remote::channel::ControlStream {
    let timeout = std::time::Duration::from_secs(20);
    bytepath::remote::client::raw::token_session(address, token, timeout)
        .unwrap_or_else(|e| panic!("{address}: {e}"))
        .0
}
