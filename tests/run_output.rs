//! The shape of what `bytepath run` prints: JSON keys with units, unavailable metrics as null
//! with a reason, the table's statements about how figures were measured, and interruption.
mod common;
use common::{bytepath, run_json, u};

#[test]
fn json_has_schema_config_environment_and_per_side_metrics_with_units() {
    let (r, code) = run_json(&["-m", "copy", "-s", "4K", "-t", "1"]);
    assert_eq!(code, 0);
    assert_eq!(r["schema_version"], bytepath::record::SCHEMA_VERSION);
    for key in [
        "mechanism",
        "pattern",
        "message_size_bytes",
        "threads",
        "duration_s",
        "warmup_s",
        "pin",
        "recv_size_bytes",
        "spin",
        "verify",
    ] {
        assert!(!r["config"][key].is_null(), "config.{key}");
    }
    for key in [
        "kernel_release",
        "cpu_model",
        "online_cpus",
        "pmu_available",
        "optmem_max_bytes",
        "loopback_mtu",
    ] {
        assert!(r["environment"].get(key).is_some(), "environment.{key}");
    }
    let sides = r["sides"].as_array().unwrap();
    assert_eq!(sides.len(), 2);
    assert_eq!(
        (sides[0]["side"].as_str(), sides[1]["side"].as_str()),
        (Some("sender"), Some("receiver"))
    );
    for s in sides {
        for key in [
            "payload_bytes",
            "elapsed_s",
            "throughput_gbps",
            "messages_per_s",
            "cpu_user_s",
            "cpu_sys_s",
            "voluntary_context_switches",
        ] {
            assert!(!s[key].is_null(), "{}.{key}", s["side"]);
        }
        for p in ["min", "p50", "p90", "p99", "p99_9", "max", "mean"] {
            assert!(s["latency_ns"][p].is_number(), "latency_ns.{p}");
        }
        assert!(s["throughput_gbps"].as_f64().unwrap() > 0.0);
        let elapsed = s["elapsed_s"].as_f64().unwrap();
        assert!(
            elapsed > 0.2 && elapsed < 1.0,
            "warm-up excluded, measured ~0.3 s: {elapsed}"
        );
    }
    assert!(r["machine_wide_cpu"]["softirq_s"].is_number());
}

#[test]
fn counters_are_either_counted_or_null_with_a_reason_never_a_fake_zero() {
    let (r, _) = run_json(&["-m", "send"]);
    let pmu = r["environment"]["pmu_available"].as_bool().unwrap();
    for side in r["sides"].as_array().unwrap() {
        let c = &side["counters"];
        for key in [
            "task_clock_ns",
            "context_switches",
            "cycles",
            "instructions",
            "cache_references",
            "cache_misses",
            "l1d_load_misses",
            "llc_load_misses",
        ] {
            let reason = &c[format!("{key}_unavailable_reason")];
            if c[key].is_null() {
                assert!(
                    reason.as_str().is_some_and(|s| !s.is_empty()),
                    "{key} null without a reason"
                );
            } else {
                assert!(reason.is_null(), "{key} has both a value and a reason");
            }
        }
        if !pmu {
            assert!(c["cycles"].is_null());
            assert_eq!(c["cycles_unavailable_reason"], "no PMU");
            assert_eq!(
                side["derived"]["cycles_per_byte_unavailable_reason"],
                "no PMU"
            );
        }
        assert!(
            c["task_clock_ns"].as_f64().is_some_and(|v| v > 0.0),
            "software task-clock counts"
        );
    }
}

#[test]
fn without_privilege_kernel_only_counters_say_why_they_are_missing() {
    if !common::is_root() || !common::has_command("setpriv") {
        common::skip("needs root (to drop to nobody) and setpriv");
        return;
    }
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().parse().unwrap_or(2))
        .unwrap_or(2);
    if paranoid < 2 {
        common::skip(format!(
            "perf_event_paranoid={paranoid} lets unprivileged users count kernel mode"
        ));
        return;
    }
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_bytepath"),
        ])
        .args([
            "run", "-m", "send", "-d", "200ms", "--warmup", "0s", "--json",
        ])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let c = &r["sides"][0]["counters"];
    assert!(
        c["context_switches"].is_null(),
        "user-mode-only context switches would read a fake 0"
    );
    let reason = c["context_switches_unavailable_reason"].as_str().unwrap();
    assert!(reason.contains("perf_event_paranoid=2"), "{reason}");
    assert_eq!(r["sides"][0]["counter_scope"], "user_only");
}

#[test]
fn table_states_placement_receive_size_latency_meaning_and_zerocopy_copies() {
    let out = bytepath()
        .args([
            "run", "-m", "zerocopy", "-s", "16K", "-d", "300ms", "--warmup", "100ms", "--pin",
            "cross",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("placement: pinned — 1 thread, cross (CPU sender→receiver): flow 0: "),
        "{text}"
    );
    assert!(text.contains("receive size: 16384 B per recv"), "{text}");
    assert!(
        text.contains("receiver latency = time to take in one whole message"),
        "{text}"
    );
    assert!(text.contains("copied anyway:"), "{text}");
    assert!(text.contains("throughput"), "{text}");
    let unpinned = bytepath()
        .args(["run", "-m", "send", "-d", "200ms", "--warmup", "0s"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&unpinned.stdout).contains("placement: unpinned"));
}

/// The flows a placement line names ("flow 3: …", "flows 0–7: …"), in order.
fn flows_named(line: &str) -> Vec<usize> {
    let mut named = Vec::new();
    for part in line.split("; ") {
        let part = part.rsplit("): ").next().unwrap_or(part);
        let range = part.split(':').next().unwrap_or("");
        if let Some(one) = range.strip_prefix("flow ") {
            named.push(one.parse().unwrap());
        } else if let Some((a, b)) = range.strip_prefix("flows ").and_then(|r| r.split_once('–'))
        {
            named.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap());
        }
    }
    named
}

#[test]
fn the_placement_line_names_every_flow() {
    let text = table(&["-m", "send", "-t", "4", "--pin", "cross"]);
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("placement: "))
        .unwrap_or_else(|| panic!("no placement line: {text}"));
    assert!(
        line.starts_with("pinned — 4 threads, cross (CPU sender→receiver): "),
        "{line}"
    );
    assert_eq!(flows_named(line), vec![0, 1, 2, 3], "{line}");
}

#[test]
fn ctrl_c_in_the_measured_phase_prints_what_was_measured_marked_interrupted() {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_bytepath"))
        .args([
            "run", "-m", "gather", "-d", "30s", "--warmup", "100ms", "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON after Ctrl-C");
    assert_eq!(r["status"], "interrupted");
    assert_eq!(r["interrupted"], true);
    assert!(
        u(&r["sides"][1]["messages"]) > 0,
        "what was measured is kept"
    );
    assert!(r["measured_s"].as_f64().unwrap() < 5.0);
    assert_eq!(r["transfer"]["all_delivered"], true);
}

#[test]
fn rr_leaves_counters_off_by_default_and_says_why() {
    let (r, code) = run_json(&["-m", "send", "-p", "rr", "-s", "64"]);
    assert_eq!(code, 0);
    assert_eq!(r["config"]["counters"], "none");
    let c = &r["sides"][0]["counters"];
    assert!(c["task_clock_ns"].is_null());
    assert_eq!(
        c["task_clock_ns_unavailable_reason"],
        "not counted: --counters none"
    );
    let notes = r["notes"].to_string();
    assert!(notes.contains("off for rr by default"), "{notes}");
    let (r, _) = run_json(&[
        "-m",
        "send",
        "-p",
        "rr",
        "-s",
        "64",
        "--counters",
        "software",
    ]);
    assert!(r["sides"][0]["counters"]["task_clock_ns"]
        .as_f64()
        .is_some_and(|v| v > 0.0));
    // Asked for, rr's counters come from a run of their own, without the "off" note.
    assert!(r["counter_run"]["headline_value"].as_f64().is_some());
    let notes = r["notes"].to_string();
    assert!(!notes.contains("off for rr by default"), "{notes}");
}

#[test]
fn counters_come_from_a_run_of_their_own_and_the_record_says_so() {
    let (r, code) = run_json(&[
        "-m",
        "copy",
        "-s",
        "4K",
        "-t",
        "1",
        "--counters",
        "software",
    ]);
    assert_eq!(code, 0);
    assert_eq!(r["config"]["counters"], "software");
    let run = &r["counter_run"];
    assert!(run["measured_s"].as_f64().is_some_and(|s| s > 0.2), "{run}");
    assert!(
        run["headline_value"].as_f64().is_some_and(|v| v > 0.0),
        "{run}"
    );
    let about = run["description"].as_str().unwrap();
    assert!(
        about.contains("headline run, which opened no counter"),
        "{about}"
    );
    assert!(r["sides"][1]["counters"]["task_clock_ns"]
        .as_f64()
        .is_some_and(|v| v > 0.0));
    let notes = r["notes"].to_string();
    assert!(notes.contains("open only in the counter run"), "{notes}");
    // The default (auto: every counter for stream) counts in a run of its own too: the
    // headline run opens none (issue 24 item 5).
    let (r, code) = run_json(&["-m", "copy", "-s", "4K", "-t", "1"]);
    assert_eq!(code, 0);
    assert_eq!(r["config"]["counters"], "all");
    let about = r["counter_run"]["description"].as_str().unwrap_or_default();
    assert!(
        about.contains("headline run, which opened no counter"),
        "{r}"
    );
    let (r, code) = run_json(&["-m", "copy", "-s", "4K", "--counters", "none"]);
    assert_eq!(code, 0);
    assert!(
        r.get("counter_run").is_none(),
        "no counters asked: no counter run"
    );
}

/// The table's text on stdout for `bytepath run ARGS` (short), which must succeed.
fn table(args: &[&str]) -> String {
    let out = bytepath()
        .args(["run", "-d", "200ms", "--warmup", "50ms"])
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Counter rows that are n/a in both columns for one reason are one line that names them and
/// says why, and the note does not say it again; counted rows stay rows.
#[test]
fn counters_without_a_pmu_are_one_line_not_nine_rows_and_a_note() {
    let text = table(&["-m", "copy"]);
    assert!(
        text.lines().any(|l| l.starts_with("task_clock_ns ")),
        "{text}"
    );
    let pmu = std::path::Path::new("/sys/bus/event_source/devices/cpu").exists()
        || std::path::Path::new("/sys/bus/event_source/devices/cpu_core").exists();
    if pmu {
        assert!(text.lines().any(|l| l.starts_with("cycles ")), "{text}");
        assert!(!text.contains("exposes no PMU"), "{text}");
        return;
    }
    let folded: Vec<&str> = text.lines().filter(|l| l.contains("no PMU")).collect();
    assert_eq!(
        folded,
        ["hardware counters (cycles, instructions, cache_references, cache_misses, l1d_load_misses, llc_load_misses, cycles_per_byte, instructions_per_cycle, llc_misses_per_kib): not measured: this machine exposes no PMU (CPU cost: CPU-ns per byte above, from getrusage)"],
        "{text}"
    );
    assert!(!text.contains("n/a (no PMU)"), "{text}");
}

/// rr opens no counter by default: every counter row is n/a for that one reason, one line.
#[test]
fn counters_not_opened_are_one_line_with_the_flag_that_left_them_out() {
    let text = table(&["-m", "send", "-p", "rr", "-s", "64"]);
    let folded: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("--counters none"))
        .collect();
    assert_eq!(folded.len(), 1, "{text}");
    assert!(
        folded[0].starts_with("perf counters (task_clock_ns, context_switches, ")
            && folded[0].ends_with("): not counted: --counters none"),
        "{text}"
    );
    assert!(!text.contains("n/a (not counted"), "{text}");
}
