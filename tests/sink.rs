//! `--sink` end to end on the real binary: every byte sent reaches the peer veth with its
//! headers accounted, nothing leaves the machine (no default route in the sink's namespaces,
//! the host's own interfaces do not transmit the bytes), TCP is refused in one line with exit
//! 2, and the namespaces are gone after Ctrl-C and after a failed set-up. Needs root and `ip`:
//! without them each test that builds a sink says so and skips.
mod common;

use common::{bytepath, u};
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// 14 B of Ethernet, 20 B of IPv4 and 8 B of UDP header: what the veth counts beyond the
/// payload of a datagram that leaves whole.
const HEADERS: u64 = 42;

macro_rules! needs_sink {
    () => {
        if let Some(why) = common::namespaces_unavailable() {
            common::skip(format!("--sink needs root and ip: {why}"));
            return;
        }
    };
}

fn names_of(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let prefix = format!("bytepath-{pid}-");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(String::from)
        .collect()
}

fn wait_for_namespaces(pid: u32) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let names = names_of(pid);
        if names.len() == 2 {
            return names;
        }
        assert!(Instant::now() < deadline, "bytepath {pid} made no sink");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_bytepath"))
        .args(args)
        .env("BYTEPATH_SETTLE", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A sink run of `mechanism` with 1 KiB messages; its record, its namespaces checked gone.
/// A sink run of `mechanism`, 1 KiB messages unless `extra` gives `--size`.
fn sink_run(mechanism: &str, extra: &[&str]) -> (Value, Output) {
    let size: &[&str] = match extra.contains(&"--size") {
        true => &[],
        false => &["--size", "1K"],
    };
    let args = [
        &[
            "run",
            "--sink",
            "--transport",
            "udp",
            "--mechanism",
            mechanism,
        ][..],
        size,
        &["--duration", "300ms", "--warmup", "100ms", "--json"][..],
        extra,
    ]
    .concat();
    let child = spawn(&args);
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(names_of(pid), Vec::<String>::new(), "namespaces left");
    (json_of(&out), out)
}

/// The sink block's proof, checked against figures the test computes itself: one datagram per
/// 1 KiB message at MTU 65535, plus one empty end marker per flow.
fn assert_every_byte_reached_the_sink(r: &Value) {
    assert_eq!(r["status"], "completed", "{:?}", r["errors"]);
    assert_eq!(r["sides"].as_array().unwrap().len(), 1, "the sender alone");
    let sink = &r["sink"];
    let (messages, payload) = (u(&sink["messages_sent"]), u(&sink["payload_bytes_sent"]));
    assert!(messages > 1000, "{sink}");
    assert_eq!(payload, messages * 1024, "{sink}");
    let datagrams = messages + 1;
    assert_eq!(u(&sink["datagrams_expected"]), datagrams);
    assert_eq!(u(&sink["packets_expected"]), datagrams);
    let expected = payload + HEADERS * datagrams;
    assert_eq!(u(&sink["veth_bytes_expected"]), expected);
    assert_eq!(u(&sink["peer_rx_bytes"]), expected, "{sink}");
    assert_eq!(u(&sink["peer_rx_packets"]), datagrams, "{sink}");
    assert_eq!(sink["every_byte_reached_the_sink"], true);
    assert_eq!(u(&sink["mtu_bytes"]), 65_535);
}

#[test]
fn send_and_copy_put_every_byte_sent_on_the_peer_veth_with_its_headers() {
    needs_sink!();
    for mechanism in ["send", "copy"] {
        let (r, _) = sink_run(mechanism, &[]);
        assert_every_byte_reached_the_sink(&r);
        assert!(
            r["zerocopy"].is_null(),
            "{mechanism} makes no zero-copy send"
        );
    }
}

#[test]
fn pinned_senders_have_their_softirq_stated_apart() {
    needs_sink!();
    let (r, _) = sink_run("send", &["--pin", "0"]);
    assert_every_byte_reached_the_sink(&r);
    let sink = &r["sink"];
    assert_eq!(sink["sender_cpus"], serde_json::json!([0]));
    let seconds = sink["sender_cpus_softirq_s"]
        .as_f64()
        .expect("softirq read");
    let per_byte = sink["sender_cpus_softirq_ns_per_byte"].as_f64().unwrap();
    assert!(seconds >= 0.0 && per_byte >= 0.0, "{sink}");
    // The table states it as its own line.
    let table = bytepath()
        .args([
            "run",
            "--sink",
            "--transport",
            "udp",
            "-m",
            "send",
            "--size",
            "1K",
            "-d",
            "200ms",
            "--warmup",
            "50ms",
            "--pin",
            "0",
        ])
        .output()
        .unwrap();
    common::assert_success(&table);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("sink softirq on the sending CPUs: ") && text.contains(" on CPU [0] "),
        "{text}"
    );
    assert!(text.contains("every byte sent left the socket and was dropped at the sink"));
}

/// Bytes each interface of the root namespace has transmitted, by name.
fn host_tx_bytes() -> BTreeMap<String, u64> {
    std::fs::read_dir("/sys/class/net")
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let path = format!("/sys/class/net/{name}/statistics/tx_bytes");
            let bytes = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
            Some((name, bytes))
        })
        .collect()
}

#[test]
fn nothing_leaves_the_machine_no_route_off_it_and_the_host_transmits_none_of_the_bytes() {
    needs_sink!();
    let before = host_tx_bytes();
    let child = spawn(&[
        "run",
        "--sink",
        "--transport",
        "udp",
        "-m",
        "send",
        "--size",
        "16K",
        "-d",
        "1500ms",
        "--warmup",
        "100ms",
        "--json",
    ]);
    let pid = child.id();
    for ns in wait_for_namespaces(pid) {
        for family in ["-4", "-6"] {
            let out = Command::new("ip")
                .args([family, "-n", &ns, "route", "show", "table", "all"])
                .output()
                .unwrap();
            let routes = String::from_utf8_lossy(&out.stdout);
            assert!(
                !routes.lines().any(|l| l.starts_with("default")),
                "{ns} ({family}) has a default route: {routes}"
            );
        }
    }
    let out = child.wait_with_output().unwrap();
    let after = host_tx_bytes();
    let r = json_of(&out);
    let sent = u(&r["sink"]["payload_bytes_sent"]);
    assert!(sent > 50 << 20, "too few bytes sent to tell: {sent}");
    assert_eq!(r["sink"]["every_byte_reached_the_sink"], true);
    for (name, bytes) in &after {
        // Loopback cannot leave the machine, and other runs on this host use it.
        if name == "lo" {
            continue;
        }
        let grew = bytes - before.get(name).copied().unwrap_or(*bytes);
        assert!(
            grew < sent / 100,
            "{name} transmitted {grew} B while the sink took {sent} B"
        );
    }
    assert_eq!(names_of(pid), Vec::<String>::new());
}

#[test]
fn tcp_on_a_sink_is_refused_in_one_line_with_exit_2() {
    for command in [
        &["run", "--sink", "--transport", "tcp", "-m", "send"][..],
        &["run", "--sink", "--transport", "unix", "-m", "send"][..],
    ] {
        let out = bytepath().args(command).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.starts_with("bytepath: --transport ")
                && err.contains("with --sink")
                && err.trim_end().ends_with("allowed with --sink: udp"),
            "{err}"
        );
    }
    let out = bytepath()
        .args(["run", "--sink", "--transport", "tcp", "-m", "send"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("TCP needs a receiver"));
}

#[test]
fn ctrl_c_ends_a_sink_run_with_130_and_removes_its_namespaces() {
    needs_sink!();
    let child = spawn(&[
        "run",
        "--sink",
        "--transport",
        "udp",
        "-m",
        "send",
        "-d",
        "30s",
        "--warmup",
        "100ms",
        "--json",
    ]);
    let pid = child.id();
    wait_for_namespaces(pid);
    std::thread::sleep(Duration::from_millis(700));
    assert!(Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(json_of(&out)["status"], "interrupted");
    assert_eq!(names_of(pid), Vec::<String>::new());
}

/// A directory holding an `ip` that runs the real one but fails the step that sets the sink's
/// neighbour entry: the set-up fails after both namespaces exist.
fn failing_ip() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let real = Command::new("sh")
        .args(["-c", "command -v ip"])
        .output()
        .unwrap();
    let real = String::from_utf8_lossy(&real.stdout).trim().to_string();
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in *\" neigh add \"*) echo 'RTNETLINK answers: injected by the test' >&2; exit 2;; esac\nexec {real} \"$@\"\n"
    );
    let path = dir.path().join("ip");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

#[test]
fn a_set_up_that_fails_after_the_namespaces_exist_removes_them() {
    needs_sink!();
    let dir = failing_ip();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let child = Command::new(env!("CARGO_BIN_EXE_bytepath"))
        .args([
            "run",
            "--sink",
            "--transport",
            "udp",
            "-m",
            "send",
            "-d",
            "1s",
        ])
        .env("PATH", path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("injected by the test"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(names_of(pid), Vec::<String>::new(), "{err}");
}

#[test]
fn zerocopy_and_uring_zc_on_a_sink_are_not_copied() {
    needs_sink!();
    for mechanism in ["zerocopy", "uring-zc"] {
        let kind: bytepath::mechanism::MechanismKind = mechanism.parse().unwrap();
        if let Err(reason) = bytepath::mechanism::supported(kind) {
            common::skip_part(&format!("{mechanism} on a sink"), reason);
            continue;
        }
        let (r, _) = sink_run(mechanism, &[]);
        assert_every_byte_reached_the_sink(&r);
        assert_not_copied(&r, mechanism);
    }
}

/// Every zero-copy completion of the run came back, none flagged copied.
fn assert_not_copied(r: &Value, mechanism: &str) {
    let z = &r["zerocopy"];
    assert!(u(&z["completions"]) > 0, "{mechanism}: {z}");
    assert_eq!(u(&z["copied"]), 0, "{mechanism}: {z}");
    assert_eq!(z["copied_anyway_percent"].as_f64(), Some(0.0), "{z}");
    let summary = z["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("copied anyway: 0.0 % — on a sink no local socket receives"),
        "{summary}"
    );
}

/// With UDP GSO the sink's link is a NIC's 1500 B, each send of 16 KiB is 12 datagrams of
/// 1472 B (the last 192 B) that cross the veth as one packet, and zero copy stays uncopied.
#[test]
fn gso_sends_cross_the_sink_whole_and_zero_copy_stays_uncopied() {
    needs_sink!();
    for mechanism in ["copy", "zerocopy", "sendmmsg"] {
        let (r, _) = sink_run(mechanism, &["--size", "16K", "--gso", "1472"]);
        assert_eq!(r["status"], "completed", "{:?}", r["errors"]);
        let sink = &r["sink"];
        assert_eq!(u(&sink["mtu_bytes"]), 1_500, "{sink}");
        let messages = u(&sink["messages_sent"]);
        assert_eq!(u(&sink["payload_bytes_sent"]), messages * 16_384, "{sink}");
        assert_eq!(u(&sink["datagrams_expected"]), messages * 12 + 1, "{sink}");
        assert_eq!(u(&sink["peer_rx_packets"]), messages + 1, "{sink}");
        assert_eq!(
            u(&sink["peer_rx_bytes"]),
            messages * (16_384 + HEADERS) + HEADERS
        );
        assert_eq!(sink["every_byte_reached_the_sink"], true, "{sink}");
        if mechanism == "zerocopy" {
            assert_not_copied(&r, mechanism);
        }
    }
}

/// Short of file descriptors, a run may finish yet be unable to start `ip` to delete its
/// namespaces; it unmounts them directly instead. Whatever the limit does to the run (set-up
/// refused, or a run completed), no namespace of it is left.
#[test]
fn a_run_short_of_file_descriptors_leaves_no_namespace() {
    needs_sink!();
    for limit in 6..=12 {
        let command = format!(
            "ulimit -n {limit}; exec {} run --sink --transport udp -m send --size 1K -d 100ms --warmup 50ms",
            env!("CARGO_BIN_EXE_bytepath")
        );
        let child = Command::new("sh")
            .args(["-c", &command])
            .env("BYTEPATH_SETTLE", "off")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            names_of(pid),
            Vec::<String>::new(),
            "ulimit -n {limit}: {err}"
        );
        assert!(
            !err.contains("could not remove"),
            "ulimit -n {limit}: {err}"
        );
    }
}

#[test]
fn probe_says_a_sink_works_here_and_its_zero_copy_send_was_not_copied() {
    needs_sink!();
    let out = bytepath()
        .args(["probe", "--quick", "--json"])
        .output()
        .unwrap();
    common::assert_success(&out);
    let sink = &json_of(&out)["sink"];
    assert_eq!(sink["available"], true, "{sink}");
    assert_eq!(sink["zero_copy_copied"], false, "{sink}");
    assert_eq!(u(&sink["peer_rx_bytes"]), 8192 + HEADERS, "{sink}");
    let out = bytepath().args(["probe", "--quick"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("--sink")
            && l.ends_with("yes (a zero-copy send reached the sink and was not copied)")),
        "{text}"
    );
}

/// `--sink` without `--transport` runs udp, the one transport a sink carries.
#[test]
fn a_sink_run_without_a_transport_sends_udp() {
    needs_sink!();
    let child = spawn(&[
        "run", "--sink", "-m", "send", "-s", "1K", "-d", "200ms", "--json",
    ]);
    let out = child.wait_with_output().unwrap();
    let r = json_of(&out);
    assert_eq!(r["config"]["transport"], "udp", "{:?}", r["errors"]);
    assert_eq!(r["status"], "completed", "{:?}", r["errors"]);
}

/// A sink's sweep with its loopback twins (`--beside-loopback`) answers the seeds' crossover in
/// both places, and its records say why they differ: on the sink no zero-copy send is copied,
/// beside it over loopback every one is.
#[test]
fn a_sink_sweep_beside_loopback_answers_in_both_places() {
    needs_sink!();
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let child = spawn(&[
        "sweep",
        "--sink",
        "--beside-loopback",
        "--mechanisms",
        "copy,zerocopy",
        "--sizes",
        "1K,16K",
        "--threads",
        "1",
        "--visit",
        "50ms",
        "--min-visits",
        "2",
        "--budget",
        "0.2s",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap();
    let records: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 8, "4 points on the sink, 4 beside it");
    for r in records
        .iter()
        .filter(|r| r["config"]["mechanism"] == "zerocopy")
    {
        let key = r["sweep_point"]["key"].as_str().unwrap();
        let z = &r["zerocopy"];
        let expected = match key.ends_with("/loopback") {
            true => u(&z["completions"]),
            false => 0,
        };
        assert!(u(&z["completions"]) > 0, "{key}: {z}");
        assert_eq!(u(&z["copied"]), expected, "{key}: {z}");
    }
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    let sink = report.find("### On the sending side, with zero copy that is not copied");
    let beside = report.find("### Beside it, over loopback UDP");
    let (Some(sink), Some(beside)) = (sink, beside) else {
        panic!("both questions asked: {report}");
    };
    assert!(sink < beside, "the sink's answer first");
    assert!(
        report[sink..beside].contains("copied 0.0 %"),
        "{}",
        &report[sink..beside]
    );
    assert!(
        report[beside..].contains("copied 100.0 %"),
        "{}",
        &report[beside..]
    );
}
