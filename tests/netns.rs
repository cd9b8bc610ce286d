//! `--netns` end to end: run, ipc, file and a tiny sweep across two network namespaces joined
//! by a veth pair, with `--verify`; the namespaces are gone afterwards, also after Ctrl-C and
//! after a `kill -9` (the next run removes them); the MTU and netem reach the record; bad
//! input and a missing privilege or command are one line and exit 2. Needs root and `ip`:
//! without them every test that creates namespaces says so and skips (CI runs as root).
mod common;

use common::{bytepath, u};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

macro_rules! needs_netns {
    () => {
        if let Some(why) = common::namespaces_unavailable() {
            common::skip(format!("--netns needs root and ip: {why}"));
            return;
        }
    };
}

fn netns_names() -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

fn names_of(pid: u32) -> Vec<String> {
    let prefix = format!("bytepath-{pid}-");
    netns_names()
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// Runs bytepath with `args`; returns its output and checks that its namespaces are gone.
fn run_and_check_cleanup(args: &[&str]) -> std::process::Output {
    let child = Command::new(env!("CARGO_BIN_EXE_bytepath"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        names_of(pid),
        Vec::<String>::new(),
        "namespaces left by {args:?}"
    );
    out
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn assert_verified_across_veth(r: &Value, mtu: u64) {
    assert_eq!(r["status"], "completed", "{:?}", r["errors"]);
    assert_eq!(r["transfer"]["all_delivered"], true);
    assert!(u(&r["verify"]["checked_bytes"]) > 0);
    assert_eq!(u(&r["verify"]["mismatched_bytes"]), 0);
    let place = r["config"]["where_sides_run"].as_str().unwrap();
    assert!(
        place.contains("veth pair") && place.contains(&format!("MTU {mtu}")),
        "{place}"
    );
    assert_eq!(r["config"]["network"]["placement"], "netns");
    assert_eq!(u(&r["config"]["network"]["mtu"]), mtu);
}

const SHORT: [&str; 6] = [
    "--duration",
    "300ms",
    "--warmup",
    "100ms",
    "--json",
    "--verify",
];

#[test]
fn tcp_stream_and_rr_cross_the_veth_pair_verified_and_leave_no_namespace() {
    needs_netns!();
    for pattern in ["stream", "rr"] {
        let out = run_and_check_cleanup(
            &[
                &["run", "--netns", "-m", "gather", "-p", pattern][..],
                &SHORT,
            ]
            .concat(),
        );
        common::assert_success(&out);
        let r = json_of(&out);
        assert_verified_across_veth(&r, 1500);
        assert!(u(&r["sides"][0]["messages"]) > 0, "{pattern}");
        assert!(r["config"]["where_sides_run"]
            .as_str()
            .unwrap()
            .starts_with("TCP across"));
    }
}

#[test]
fn udp_rr_and_a_jumbo_mtu_are_recorded() {
    needs_netns!();
    let out = run_and_check_cleanup(
        &[
            &[
                "run",
                "--netns",
                "--mtu",
                "9000",
                "-m",
                "send",
                "-p",
                "rr",
                "--transport",
                "udp",
            ][..],
            &SHORT,
        ]
        .concat(),
    );
    common::assert_success(&out);
    let r = json_of(&out);
    assert_verified_across_veth(&r, 9000);
    assert!(r["config"]["where_sides_run"]
        .as_str()
        .unwrap()
        .contains("UDP"));
}

#[test]
fn ipc_over_tcp_and_udp_crosses_namespaces() {
    needs_netns!();
    let dir = tempfile::tempdir().unwrap();
    let out = run_and_check_cleanup(&[
        "ipc",
        "--netns",
        "--transports",
        "tcp,udp",
        "--sizes",
        "64,4K",
        "--trials",
        "200",
        "--bytes",
        "1M",
        "--warmup",
        "0s",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    common::assert_success(&out);
    let text = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        records.len(),
        8,
        "2 transports x 2 sizes x latency and bandwidth"
    );
    for r in &records {
        assert_eq!(r["status"], "completed", "{:?}", r["errors"]);
        assert_eq!(r["config"]["network"]["placement"], "netns");
        assert!(r["config"]["where_sides_run"]
            .as_str()
            .unwrap()
            .contains("veth pair, MTU 1500"));
    }
}

#[test]
fn ipc_leaves_out_transports_that_never_reach_a_network_device_unless_named() {
    // Refusing a named transport happens before any namespace is made: no root needed.
    let out = bytepath()
        .args([
            "ipc",
            "--netns",
            "--transports",
            "tcp,pipe",
            "--sizes",
            "64",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--transport pipe with --netns")
            && err.contains("allowed with --netns: tcp, udp"),
        "{err}"
    );
    needs_netns!();
    let dir = tempfile::tempdir().unwrap();
    let out = run_and_check_cleanup(&[
        "ipc",
        "--netns",
        "--sizes",
        "64",
        "--measure",
        "latency",
        "--trials",
        "50",
        "--warmup",
        "0s",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    common::assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    for t in ["pipe", "unix", "unix-dgram", "shm"] {
        assert!(
            stdout.contains(&format!("ipc: {t} left out with --netns")),
            "{stdout}"
        );
    }
    assert!(stdout.contains("ipc: 2 points"), "{stdout}");
}

#[test]
fn file_is_served_across_namespaces_and_verified() {
    needs_netns!();
    let dir = tempfile::tempdir().unwrap();
    let out = run_and_check_cleanup(&[
        "file",
        "--netns",
        "--sizes",
        "1M",
        "--reps",
        "1",
        "--verify",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    common::assert_success(&out);
    let study = json_of(&out);
    assert_eq!(study["config"]["network"]["placement"], "netns");
    assert!(study["config"]["where_sides_run"]
        .as_str()
        .unwrap()
        .contains("veth pair, MTU 1500"));
    let text = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    assert_eq!(
        text.lines().count(),
        4 * 2,
        "per mechanism one measured transfer and its counted one"
    );
    for line in text.lines() {
        let t: Value = serde_json::from_str(line).unwrap();
        assert_eq!(t["verified"], true, "{t}");
    }
}

#[test]
fn a_tiny_sweep_runs_every_point_across_namespaces() {
    needs_netns!();
    let dir = tempfile::tempdir().unwrap();
    let out = run_and_check_cleanup(&[
        "sweep",
        "--netns",
        "--mtu",
        "65520",
        "--mechanisms",
        "send,gather",
        "--sizes",
        "4K",
        "--threads",
        "1",
        "--slice",
        "20ms",
        "--visit",
        "100ms",
        "--budget",
        "300ms",
        "--warmup",
        "50ms",
        "--verify",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    common::assert_success(&out);
    let text = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 2);
    for line in text.lines() {
        assert_verified_across_veth(&serde_json::from_str(line).unwrap(), 65520);
    }
    let marker: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(
        marker["spec"]["network"]["mtu"], 65520,
        "resume keeps the same link"
    );
    let csv = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
    assert!(
        csv.lines().nth(1).unwrap().contains(",netns,65520,"),
        "{csv}"
    );
}

/// Waits until `pid`'s namespaces exist (both), or panics after 20 s.
fn wait_for_namespaces(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while names_of(pid).len() < 2 {
        assert!(
            Instant::now() < deadline,
            "bytepath {pid} made no namespaces"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn_long_run() -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_bytepath"))
        .args([
            "run", "--netns", "-m", "send", "-d", "30s", "--warmup", "100ms", "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn ctrl_c_ends_the_run_with_130_and_removes_its_namespaces() {
    needs_netns!();
    let child = spawn_long_run();
    let pid = child.id();
    wait_for_namespaces(pid);
    std::thread::sleep(Duration::from_millis(700));
    assert!(Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_of(&out)["status"], "interrupted");
    assert_eq!(names_of(pid), Vec::<String>::new());
}

#[test]
fn the_namespaces_of_a_killed_run_are_removed_by_the_next_run() {
    needs_netns!();
    let mut child = spawn_long_run();
    let pid = child.id();
    wait_for_namespaces(pid);
    assert!(Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    child.wait().unwrap();
    // SIGKILL runs no destructor: the namespaces outlive their process until a run cleans up.
    let out = run_and_check_cleanup(&[&["run", "--netns", "-m", "send"][..], &SHORT].concat());
    common::assert_success(&out);
    assert_eq!(
        names_of(pid),
        Vec::<String>::new(),
        "the killed run's namespaces"
    );
}

#[test]
fn a_killed_server_process_fails_the_run_and_still_removes_the_namespaces() {
    needs_netns!();
    // rr with --processes: the server side of the flow runs in a forked child.
    let child = Command::new(env!("CARGO_BIN_EXE_bytepath"))
        .args([
            "run",
            "--netns",
            "--processes",
            "-m",
            "send",
            "-p",
            "rr",
            "-d",
            "30s",
            "--warmup",
            "100ms",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for_namespaces(pid);
    let server = wait_for_child_of(pid);
    assert!(Command::new("kill")
        .args(["-KILL", &server.to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    assert_ne!(
        out.status.code(),
        Some(0),
        "a run whose server died is no success"
    );
    assert_eq!(names_of(pid), Vec::<String>::new());
}

/// The first child process of `pid` (the forked side of `--processes`).
/// The forked bytepath child of `pid`: not an `ip` or `tc` it runs while setting up the link,
/// which may have exited by the time it would be killed.
fn wait_for_child_of(pid: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    let bytepath = std::fs::canonicalize(env!("CARGO_BIN_EXE_bytepath")).unwrap();
    loop {
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        let forked = children.split_whitespace().find(|c| {
            std::fs::read_link(format!("/proc/{c}/exe")).is_ok_and(|exe| exe == bytepath)
        });
        if let Some(child) = forked {
            return child.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "bytepath {pid} forked no server");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether netem works in this kernel: tried on `lo` of a scratch namespace, never the host's.
fn netem_works() -> bool {
    let ns = format!("bytepath-netem-probe-{}", std::process::id());
    let add = Command::new("ip")
        .args(["netns", "add", &ns])
        .status()
        .unwrap();
    assert!(add.success());
    let works = Command::new("tc")
        .args([
            "-n", &ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
        ])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    Command::new("ip")
        .args(["netns", "del", &ns])
        .status()
        .unwrap();
    works
}

#[test]
fn netem_is_applied_where_the_kernel_has_it_and_refused_in_one_line_where_not() {
    needs_netns!();
    if !common::has_command("tc") {
        common::skip("tc (iproute2) is missing");
        return;
    }
    let works = netem_works();
    let out = run_and_check_cleanup(
        &[
            &[
                "run",
                "--netns",
                "--netem",
                "delay 1ms",
                "-m",
                "send",
                "-p",
                "rr",
            ][..],
            &SHORT,
        ]
        .concat(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    if works {
        assert_eq!(out.status.code(), Some(0), "{err}");
        let r = json_of(&out);
        assert_eq!(r["config"]["network"]["netem"], "delay 1ms");
        assert!(r["config"]["where_sides_run"]
            .as_str()
            .unwrap()
            .contains("netem delay 1ms"));
        let p50 = r["sides"][0]["latency_ns"]["p50"].as_f64().unwrap();
        assert!(
            p50 > 2e6,
            "1 ms each way: a round trip above 2 ms, got {p50} ns"
        );
    } else {
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(
            err.trim(),
            "bytepath: --netem \"delay 1ms\": netem is not available in this kernel (module sch_netem missing); leave out --netem or load sch_netem"
        );
    }
}

#[test]
fn mtu_out_of_range_or_without_netns_is_one_line_and_exit_2() {
    for (args, expect) in [
        (
            &["--netns", "--mtu", "5"][..],
            "--mtu \"5\": allowed: a whole number of bytes from 68 to 65535",
        ),
        (
            &["--mtu", "9000"][..],
            "--mtu \"9000\": applies to the veth pair of --netns only",
        ),
        (
            &["--netem", "delay 1ms"][..],
            "--netem \"delay 1ms\": applies to the veth pair of --netns only",
        ),
        (
            &["--netns", "--transport", "unix"][..],
            "--transport unix with --netns",
        ),
    ] {
        let out = bytepath()
            .args(["run", "-m", "send"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("bytepath: {expect}")), "{err}");
    }
}

#[test]
fn without_root_the_error_says_root_is_needed() {
    let mut cmd = if common::is_root() {
        if !common::has_command("setpriv") {
            common::skip("running as root and setpriv is missing to drop it");
            return;
        }
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_bytepath"),
        ]);
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_bytepath"))
    };
    let out = cmd
        .args(["run", "--netns", "-m", "send", "-d", "1s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim(),
        "bytepath: --netns needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) to create network namespaces; run as root"
    );
}

#[test]
fn without_the_ip_command_the_error_names_it() {
    if !common::is_root() {
        common::skip("not root (the root check comes before the ip check)");
        return;
    }
    let out = bytepath()
        .env("PATH", "/nonexistent")
        .args(["run", "--netns", "-m", "send", "-d", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "bytepath: --netns needs the ip command (iproute2)"
    );
}

#[test]
fn servers_listen_in_one_namespace_and_the_clients_connect_from_the_other() {
    needs_netns!();
    let dir = tempfile::tempdir().unwrap();
    let out = run_and_check_cleanup(&[
        "servers",
        "--netns",
        "--models",
        "epoll,threaded",
        "--clients",
        "5",
        "--duration",
        "300ms",
        "--warmup",
        "50ms",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    common::assert_success(&out);
    let records = json_of(&out);
    for r in records.as_array().unwrap() {
        // The listener has only its veth address in the receiving namespace: a client outside
        // the sending namespace would have no route to it.
        assert_eq!(r["status"], "completed", "{r}");
        assert!(u(&r["metrics"]["requests"]) > 0);
        assert_eq!(u(&r["metrics"]["mismatched_requests"]), 0);
        assert_eq!(r["config"]["network"]["placement"], "netns");
        assert!(r["config"]["where_sides_run"]
            .as_str()
            .unwrap()
            .contains("veth pair, MTU 1500"));
    }
}
