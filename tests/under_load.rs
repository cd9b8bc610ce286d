//! `--under-load N`: bulk stream flows of the same mechanism beside the measured rr flow. A run
//! records the load and what it moved, and pairs visits without and with it round by round; a
//! sweep visits every rr point with and without the load
//! in the same rounds and answers, per mechanism, what the load does to the rr latency; the
//! flag is refused, in one line with exit 2, where it cannot apply.
mod common;
use common::{bytepath, run_json, u};
use serde_json::Value;

/// `run --json` of a send 64 B rr flow beside `flows` load flows, with `more` flags.
fn loaded_rr(flows: &str, more: &[&str]) -> (Value, i32) {
    let mut args = vec!["-m", "send", "--pattern", "rr", "--size", "64"];
    args.extend(["--under-load", flows]);
    args.extend_from_slice(more);
    run_json(&args)
}

#[test]
fn a_run_under_load_records_the_load_and_its_flows_really_moved_bytes() {
    let (r, code) = loaded_rr("2", &[]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["status"], "completed", "{}", r["errors"]);
    let load = &r["under_load"];
    assert_eq!(load["flows"], 2, "{load}");
    assert_eq!(load["mechanism"], r["config"]["mechanism"], "{load}");
    assert_eq!(load["pattern"], "stream");
    assert_eq!(load["message_size_bytes"], 65536);
    assert_eq!(load["flow_placement"].as_array().unwrap().len(), 2);
    assert!(load["placement"].as_str().unwrap().contains("unpinned"));
    assert!(
        u(&load["received_bytes"]) > 1 << 20,
        "the load moved little: {load}"
    );
    assert!(u(&load["sent_bytes"]) >= u(&load["received_bytes"]));
    assert!(load["gbps"].as_f64().unwrap() > 0.0, "{load}");
    assert!(load["load_s"].as_f64().unwrap() >= 0.3, "{load}");
    // The rr figures are the rr flow's own: its round trips, none of the load's bytes.
    let client = &r["sides"][0];
    let trips = u(&client["messages"]);
    assert!(trips > 0, "{client}");
    assert!(u(&client["payload_bytes"]) <= trips * 2 * 64, "{client}");
}

#[test]
fn a_runs_table_states_the_load_it_ran_under() {
    let out = bytepath()
        .args([
            "run",
            "-m",
            "send",
            "-p",
            "rr",
            "-s",
            "64",
            "--under-load",
            "1",
        ])
        .args(["--duration", "300ms", "--warmup", "50ms"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("under load: 1 send stream flow(s) of 64.00 KiB messages"))
        .unwrap_or_else(|| panic!("no load line: {text}"));
    assert!(line.contains("Gbit/s received whole"), "{line}");
    for words in [
        "rr latency without the load: p50 ",
        "rr latency with the load: p50 ",
    ] {
        assert!(text.contains(words), "{words}: {text}");
    }
    for p in ["p50", "p99"] {
        let ratio = format!("  ratio with/without the load, {p}: ");
        let line = (text.lines().find(|l| l.starts_with(&ratio)))
            .unwrap_or_else(|| panic!("no {p} ratio line: {text}"));
        // A decided direction is named after its interval; the other two states lead.
        let stated = &line[ratio.len()..];
        let verdict = (stated.ends_with("[raises]") || stated.ends_with("[lowers]"))
            || stated.starts_with("undecided (")
            || stated.starts_with("equivalent within ±");
        assert!(verdict, "{line}");
    }
}

#[test]
fn a_run_under_load_pairs_a_visit_without_and_one_with_the_load_in_every_round() {
    let (r, code) = loaded_rr("1", &[]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["status"], "completed", "{}", r["errors"]);
    let paired = &r["under_load"]["paired"];
    let rounds = u(&paired["rounds"]) as usize;
    let pairs = paired["pairs"].as_array().unwrap();
    assert!(rounds >= 2, "{paired}");
    assert_eq!(
        pairs.len(),
        rounds,
        "as many loaded as unloaded visits: {paired}"
    );
    for (i, pair) in pairs.iter().enumerate() {
        assert_eq!(u(&pair["round"]), i as u64, "{pair}");
        let first = if i % 2 == 0 { "unloaded" } else { "loaded" };
        assert_eq!(
            pair["first"], first,
            "the order alternates by round: {pair}"
        );
        let (quiet, loaded) = (&pair["unloaded"], &pair["loaded"]);
        for v in [quiet, loaded] {
            assert_eq!(v["status"], "completed", "{pair}");
            assert!(u(&v["p50_ns"]) > 0, "{pair}");
            assert!(u(&v["p99_ns"]) >= u(&v["p50_ns"]), "{pair}");
            let chosen = v["latency_percentiles_ns"].as_array().unwrap();
            assert!(!chosen.is_empty(), "{pair}");
        }
        assert!(
            quiet["load"].is_null(),
            "no load beside the quiet visit: {pair}"
        );
        assert!(u(&loaded["load"]["received_bytes"]) > 0, "{pair}");
    }
    // The run's load block is its loaded visits' loads together.
    let moved: u64 = (pairs.iter())
        .map(|p| u(&p["loaded"]["load"]["received_bytes"]))
        .sum();
    assert_eq!(moved, u(&r["under_load"]["received_bytes"]));
    let ratios = paired["ratios"].as_array().unwrap();
    let names: Vec<&str> = ratios
        .iter()
        .filter_map(|x| x["percentile"].as_str())
        .collect();
    assert_eq!(names, ["p50", "p99"]);
    for x in ratios {
        assert_eq!(u(&x["pairs"]) as usize, rounds, "{x}");
        let verdict = x["verdict"].as_str().unwrap();
        assert!(
            ["raises", "lowers", "undecided"].contains(&verdict)
                || verdict.starts_with("equivalent within ±"),
            "{x}"
        );
        let (low, high) = (
            x["ci_low"].as_f64().unwrap(),
            x["ci_high"].as_f64().unwrap(),
        );
        let ratio = x["ratio"].as_f64().unwrap();
        assert!(low <= ratio && ratio <= high, "{x}");
    }
    // The record states the run's duration, not one visit's.
    assert_eq!(r["config"]["duration_s"], 0.3);
    assert_eq!(
        r["statistics"]["visits"]["count"].as_u64(),
        Some(rounds as u64)
    );
}

#[test]
fn a_pinned_load_says_it_shares_the_rr_flows_cpus() {
    let (r, code) = loaded_rr("1", &["--pin", "cross"]);
    assert_eq!(code, 0, "{r}");
    let load = &r["under_load"];
    assert!(
        load["placement"].as_str().unwrap().contains("--pin cross"),
        "{load}"
    );
    assert_eq!(
        load["flow_placement"][0], r["config"]["placement"][0],
        "{load}"
    );
}

#[test]
fn under_load_without_rr_and_out_of_bounds_is_one_line_and_exit_2() {
    for (args, words) in [
        (
            &["run", "-m", "send", "--under-load", "2"][..],
            "--under-load with --pattern stream",
        ),
        (
            &["run", "-m", "send", "-p", "rr", "--under-load", "0"][..],
            "--under-load \"0\"",
        ),
        (
            &["run", "-m", "send", "-p", "rr", "--under-load", "65"][..],
            "from 1 to 64",
        ),
        (
            &[
                "run",
                "-m",
                "send",
                "-p",
                "rr",
                "--transport",
                "unix",
                "--under-load",
                "1",
            ][..],
            "only with tcp",
        ),
        (
            &["sweep", "--patterns", "stream,rr", "--under-load", "2"][..],
            "--under-load with --patterns stream",
        ),
    ] {
        let out = bytepath().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    }
}

fn records(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_sweep_pairs_each_rr_point_with_its_loaded_twin_per_round_and_answers_per_mechanism() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let out = bytepath()
        .args(["sweep", "--patterns", "rr", "--mechanisms", "send,copy"])
        .args(["--sizes", "64", "--threads", "1", "--under-load", "1"])
        .args(["--visit", "200ms", "--min-visits", "2", "--budget", "1s"])
        .args(["--slice", "50ms", "--warmup", "50ms"])
        .arg("--out")
        .arg(&out_dir)
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    common::assert_success(&out);
    let points = records(&out_dir.join("results.jsonl"));
    let key = |r: &Value| r["sweep_point"]["key"].as_str().unwrap().to_string();
    let mut keys: Vec<String> = points.iter().map(key).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "copy/rr/64/1",
            "copy/rr/64/1/under-load",
            "send/rr/64/1",
            "send/rr/64/1/under-load"
        ]
    );
    for p in &points {
        let loaded = key(p).ends_with("/under-load");
        assert_eq!(p["under_load"].is_object(), loaded, "{}", p["under_load"]);
        if loaded {
            assert!(
                u(&p["under_load"]["received_bytes"]) > 0,
                "{}",
                p["under_load"]
            );
        }
        let visits = &p["statistics"]["visits"];
        assert_eq!(visits["client_latency_p50_ns"].as_array().unwrap().len(), 2);
    }
    // Each round holds both visits of every pair, under the same round index.
    let visits = records(&out_dir.join("visits.jsonl"));
    let rounds = |k: &str| -> Vec<u64> {
        let mut r: Vec<u64> = visits
            .iter()
            .filter(|v| v["visit"]["key"] == k && v["visit"]["kind"] == "headline")
            .filter_map(|v| v["visit"]["round"].as_u64())
            .collect();
        r.sort();
        r
    };
    for m in ["send", "copy"] {
        let quiet = rounds(&format!("{m}/rr/64/1"));
        assert!(quiet.len() >= 2, "{m}: {quiet:?}");
        assert_eq!(quiet, rounds(&format!("{m}/rr/64/1/under-load")), "{m}");
    }
    let answer = common::answer_in(&out_dir, "cost the latency of others");
    let verdict = answer["verdict"].as_str().unwrap();
    for m in ["send", "copy"] {
        for p in ["p50", "p99"] {
            let cell = format!("{m} 64 B ×1 {p}: ");
            let state = verdict
                .split("; ")
                .find_map(|c| c.strip_prefix(&cell))
                .unwrap_or_else(|| panic!("no state for {cell}: {verdict}"));
            assert!(
                ["raises", "lowers", "undecided"].contains(&state)
                    || state.starts_with("equivalent within ±"),
                "{cell}{state}"
            );
        }
    }
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(report.contains("cost the latency of others"), "{report}");
    // Beyond the answers list: each loaded point beside its twin, with what the load moved.
    let section = report
        .split("## Latency under load")
        .nth(1)
        .unwrap_or_else(|| panic!("no under-load section: {report}"));
    for m in ["send", "copy"] {
        let line = (section.lines())
            .find(|l| l.starts_with(&format!("- **{m} 64 B ×1**: without the load p50 ")))
            .unwrap_or_else(|| panic!("no {m} line: {section}"));
        assert!(line.contains("with 1 load flow(s) p50 "), "{line}");
        assert!(
            line.contains("; ratio p99 ") && line.contains(" Gbit/s"),
            "{line}"
        );
    }
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(
        html.contains("<table class=\"under-load\">"),
        "no under-load table"
    );
}
