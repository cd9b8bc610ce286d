//! `bytepath servers` end to end: every model echoes exactly, stalled clients stall no
//! event-driven server, iterative serves one client at a time, select's FD_SETSIZE refusal,
//! the RLIMIT_NOFILE cap, and bad input.
mod common;
use common::{assert_success, bytepath, u};
use serde_json::Value;

/// Runs `bytepath servers --json` with short points plus `args`; returns the records.
fn servers(args: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = bytepath();
    cmd.args(["servers", "--json"]);
    for (flag, default) in [
        ("--duration", "300ms"),
        ("--warmup", "50ms"),
        ("--visits", "1"),
    ] {
        if !args.contains(&flag) {
            cmd.args([flag, default]);
        }
    }
    let out = cmd
        .args(["--out", dir.path().join("r").to_str().unwrap()])
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("bytepath ran");
    assert_success(&out);
    serde_json::from_slice::<Vec<Value>>(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn what(r: &Value) -> String {
    format!(
        "{} at {} clients",
        r["config"]["model"], r["config"]["clients"]
    )
}

/// A measured point: served requests, every echo checked and exact, no connection lost.
fn assert_served(r: &Value) {
    if r["status"] == "skipped" && r["config"]["model"] == "uring" {
        let reason = r["reason"].as_str().unwrap_or("no reason given");
        common::skip_part(&what(r), reason);
        return;
    }
    assert_eq!(r["status"], "completed", "{}: {}", what(r), r["errors"]);
    let m = &r["metrics"];
    assert!(u(&m["requests"]) > 0, "{}: no request served", what(r));
    assert_eq!(m["mismatched_requests"], 0, "{}", what(r));
    assert_eq!(m["connection_errors"], 0, "{}", what(r));
    assert_eq!(m["connected"], r["config"]["clients"], "{}", what(r));
}

#[test]
fn every_model_echoes_exactly_the_bytes_it_received() {
    let records = servers(&[
        "--models",
        "iterative,threaded,select,poll,epoll,uring",
        "--clients",
        "1,15,200",
        "--size",
        "100",
    ]);
    assert_eq!(records.len(), 18);
    for r in &records {
        if r["config"]["model"] == "iterative" && r["config"]["clients"] != 1 {
            // Closed loop: the first client keeps the iterative server; the rest wait.
            assert_eq!(r["status"], "completed", "{}", what(r));
            assert_eq!(r["metrics"]["mismatched_requests"], 0);
            assert!(u(&r["metrics"]["requests"]) > 0);
            continue;
        }
        assert_served(r);
    }
}

#[test]
fn stalled_clients_do_not_stall_the_event_driven_servers() {
    let records = servers(&[
        "--models",
        "select,poll,epoll,uring",
        "--clients",
        "4",
        "--stalled-clients",
        "6",
    ]);
    for r in &records {
        assert_served(r);
        assert!(
            r["metrics"]["requests_per_s"].as_f64().unwrap_or(0.0) > 0.0,
            "{}",
            what(r)
        );
    }
}

#[test]
fn the_iterative_server_serves_one_client_at_a_time_in_accept_order() {
    let records = servers(&[
        "--models",
        "iterative",
        "--clients",
        "3",
        "--client-threads",
        "1",
        "--warmup",
        "0s",
        "--duration",
        "20s",
        "--requests-per-connection",
        "20",
        "--record-connections",
    ]);
    let spans = records[0]["connections"]
        .as_array()
        .expect("spans recorded");
    assert_eq!(spans.len(), 3);
    let mut intervals: Vec<(u64, u64)> = spans
        .iter()
        .map(|s| {
            assert_eq!(s["completed"], 20);
            (u(&s["first_completion_ns"]), u(&s["last_completion_ns"]))
        })
        .collect();
    intervals.sort();
    for pair in intervals.windows(2) {
        assert!(
            pair[0].1 < pair[1].0,
            "completions interleave: {intervals:?}"
        );
    }
}

#[test]
fn select_is_refused_beyond_fd_setsize_for_that_point_only() {
    let records = servers(&["--models", "select,epoll", "--clients", "2000"]);
    // The models of a client count come in the seed's order.
    let of = |m: &str| records.iter().find(|r| r["config"]["model"] == m).unwrap();
    assert_eq!(of("select")["status"], "refused");
    let reason = of("select")["reason"].as_str().unwrap();
    assert!(reason.contains("FD_SETSIZE (1024)"), "{reason}");
    assert_served(of("epoll"));
}

#[test]
fn a_low_open_file_limit_caps_the_clients_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("bytepath");
    let script = format!(
        "ulimit -n 200 && exec {} servers --json --models epoll --clients 500 --duration 200ms --warmup 0s --out {}",
        bin.display(),
        dir.path().join("r").display()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_success(&out);
    let records: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let c = &records[0]["config"];
    assert_eq!(c["clients_requested"], 500);
    assert_eq!(c["clients"], 136, "200 minus the 64 reserved");
    let reason = c["clients_capped_reason"].as_str().unwrap();
    assert!(reason.contains("RLIMIT_NOFILE is 200"), "{reason}");
    assert_served(&records[0]);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, needle) in [
        (
            &["--models", "kqueue"][..],
            "\"kqueue\": unknown server model",
        ),
        (&["--clients", "0"][..], "--clients: \"0\""),
        (&["--size", "0"][..], "--size \"0\""),
        (&["--rate", "fast"][..], "--rate \"fast\""),
        (&["--duration", "soon"][..], "--duration \"soon\""),
        (&["--margin", "0"][..], "--margin \"0\""),
    ] {
        let out = bytepath().arg("servers").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn split_placement_keeps_the_server_off_the_load_generators_cpus() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        common::skip(format!("--pin split needs 2 CPUs, this machine has {cpus}"));
        return;
    }
    let split = servers(&["--models", "epoll", "--clients", "4", "--pin", "split"]);
    let r = &split[0];
    assert_served(r);
    let server_cpus = r["config"]["server_cpus"].as_array().unwrap().clone();
    let client_cpus = r["config"]["client_cpus"].as_array().unwrap();
    assert!(server_cpus.iter().all(|c| !client_cpus.contains(c)));
    assert_eq!(
        r["metrics"]["server"]["allowed_cpus"].as_array().unwrap(),
        &server_cpus,
        "the server process itself ran where the record says"
    );
    let none = servers(&["--models", "epoll", "--clients", "4", "--pin", "none"]);
    assert_eq!(none[0]["config"]["server_cpus"], Value::Null);
    assert_eq!(
        none[0]["metrics"]["server"]["allowed_cpus"]
            .as_array()
            .unwrap()
            .len(),
        cpus
    );
}

#[test]
fn the_study_writes_its_report_and_report_re_renders_it() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("r");
    let out = bytepath()
        .args(["servers", "--models", "select,epoll", "--clients", "2,2000"])
        // Several client threads share the one load CPU of a 2-CPU machine and stay under the
        // 90 % load-limited mark, so both models are ranked and the leaders table is drawn
        // (the mark and the default are checked below, in their own tests).
        .args(["--client-threads", "4"])
        .args([
            "--duration",
            "400ms",
            "--warmup",
            "0s",
            "--visits",
            "2",
            "--seed",
            "9",
        ])
        .arg("--out")
        .arg(&out_dir)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert_success(&out);
    let html = out_dir.join("report.html");
    let first = std::fs::read_to_string(&html).expect("written at the end of the study");
    std::fs::remove_file(&html).unwrap();

    let out = bytepath().arg("report").arg(&out_dir).output().unwrap();
    assert_success(&out);
    let page = std::fs::read_to_string(&html).expect("re-rendered");
    assert_eq!(page, first, "the folder alone renders the same report");
    for model in ["select", "epoll"] {
        assert!(page.contains(&format!("<td>{model}</td>")), "{model}");
    }
    for plot in ["servers-rps", "servers-p99", "servers-cpu", "servers-cs"] {
        assert!(page.contains(&format!("data-plot=\"{plot}\"")), "{plot}");
    }
    assert!(page.contains("FD_SETSIZE (1024)"), "the refusal's reason");
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| epoll | 2")).count(),
        2,
        "one row per point: {md}"
    );
    // The leaders at 2 clients as a table of the pair, its interval withheld on 2 rounds.
    assert!(
        md.contains("| model | against | ratio | interval | state |")
            && md.contains("| too few rounds for an interval (2 pairs) |"),
        "{md}"
    );
    for text in [&page, &md] {
        assert!(
            text.contains("Where is each model&#39;s knee?")
                || text.contains("Where is each model's knee?")
        );
        common::assert_no_sweep_question(text);
    }
    // Two visits of every point, rounds in order, the models of a client count back to back.
    let text = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap();
    let visits: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(visits.len(), 8);
    for (round, half) in visits.chunks(4).enumerate() {
        assert!(half
            .iter()
            .all(|v| v["visit"]["round"] == round && v["visit"]["seed"] == 9));
        assert_eq!(half[0]["config"]["clients"], half[1]["config"]["clients"]);
        assert_eq!(half[2]["config"]["clients"], half[3]["config"]["clients"]);
    }
}

/// The load generator's size and watch in every record: its thread count, by default one per
/// CPU of the load side (at most one per client), with why; whether it was the limit; and the
/// clients the model never served, whose waits are in its latency.
#[test]
fn each_record_states_its_client_threads_load_limit_and_unserved_clients() {
    let records = servers(&[
        "--models",
        "iterative,epoll",
        "--clients",
        "3",
        "--pin",
        "none",
    ]);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for r in &records {
        let c = &r["config"];
        let threads = cpus.min(3);
        assert_eq!(u(&c["client_threads"]), threads as u64, "{}", what(r));
        assert_eq!(c["client_threads_default"], true);
        let chosen = c["client_threads_chosen"].as_str().unwrap();
        assert!(
            chosen.starts_with(&format!(
                "{threads}: the default, one per CPU of the allowed CPUs"
            )),
            "{chosen}"
        );
        let client = &r["metrics"]["client"];
        let share = client["cpu_share_per_thread"].as_f64().expect("measured");
        assert_eq!(
            client["load_limited"],
            share >= 0.9,
            "{}: {client}",
            what(r)
        );
    }
    let of = |m: &str| records.iter().find(|r| r["config"]["model"] == m).unwrap();
    let epoll = &of("epoll")["metrics"];
    assert_eq!(epoll["unserved_clients"], 0, "epoll serves every client");
    // A closed loop on persistent connections: the iterative server keeps its first client,
    // the other two wait the whole visit, and their waits are in its latency.
    let iterative = &of("iterative")["metrics"];
    assert_eq!(iterative["unserved_clients"], 2, "{iterative}");
    let latency = &iterative["latency_ns"];
    assert_eq!(u(&latency["count"]), u(&iterative["requests"]) + 2);
    assert!(
        u(&latency["max"]) >= 300_000_000,
        "a wait of the whole window (300 ms) at least: {latency}"
    );

    let given = servers(&[
        "--models",
        "epoll",
        "--clients",
        "2",
        "--client-threads",
        "4",
    ]);
    let c = &given[0]["config"];
    assert_eq!(
        (u(&c["client_threads"]), &c["client_threads_default"]),
        (2, &false.into())
    );
    assert_eq!(
        c["client_threads_chosen"],
        "2: --client-threads 4, at most one per client (2 clients)"
    );
}
