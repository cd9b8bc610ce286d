//! `bytepath ipc` end to end: every transport is measured at every size for latency (exactly
//! --trials round trips) and bandwidth (exactly --bytes, rounded up to whole writes), in
//! interleaved visits, written to a results folder and a report that answers ipc's questions
//! (and no sweep's).
mod common;
use common::{bytepath, u};
use serde_json::Value;

#[test]
fn a_small_study_measures_every_transport_and_size_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("ipc");
    let out = bytepath()
        .args(["ipc", "--sizes", "60,4K", "--trials", "300"])
        .args(["--visits", "2", "--seed", "7"])
        .args([
            "--bytes",
            "1M",
            "--max-time",
            "5s",
            "--warmup",
            "50ms",
            "--out",
        ])
        .arg(&out_dir)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("one way ≈") && stdout.contains("(RTT/2, an estimate)"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        records.len(),
        24,
        "2 measures x 2 sizes x 6 transports (all by default)"
    );
    let mut keys: Vec<&str> = records
        .iter()
        .map(|r| r["sweep_point"]["key"].as_str().unwrap())
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 24, "each point once, transports kept apart");
    for r in &records {
        assert_eq!(r["command"], "ipc");
        assert_eq!(r["status"], "completed", "{}", r["errors"]);
        assert_eq!(r["config"]["processes"], false);
        assert_eq!(
            r["sides"][0]["pid"], r["sides"][1]["pid"],
            "threads of one process"
        );
        let size = u(&r["config"]["message_size_bytes"]);
        match r["config"]["pattern"].as_str().unwrap() {
            "rr" => assert_eq!(u(&r["sides"][0]["messages"]), 300),
            // Two visits, each with half of --bytes in whole writes.
            _ => assert_eq!(
                u(&r["sides"][1]["payload_bytes"]),
                2 * (1u64 << 19).div_ceil(size) * size
            ),
        }
        assert_eq!(r["statistics"]["basis"], "visits");
        assert_eq!(r["statistics"]["visits"]["count"], 2);
        assert_eq!(r["statistics"]["visits"]["seed"], 7);
        match r["config"]["transport"].as_str().unwrap() {
            "udp" | "unix-dgram" => {
                let forward = &r["datagrams"]["forward"];
                assert!(u(&forward["received"]) <= u(&forward["sent"]));
                assert_eq!(
                    u(&forward["received"]) + u(&forward["lost"]),
                    u(&forward["sent"])
                );
            }
            _ => assert!(r["datagrams"].is_null()),
        }
    }
    assert!(
        stdout.contains("datagrams lost 0 of"),
        "datagram points state their loss: {stdout}"
    );
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("Latency p50 and p99 vs message size"));
    assert!(html.contains("send over shm") && html.contains("send over pipe"));
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    for page in [&html, &md] {
        assert!(page.contains("Which transport has the fastest round trip at each size?"));
        common::assert_no_sweep_question(page);
        // The method text's families are ipc's own, not the sweep's.
        assert!(page.contains("one Holm family per size"));
        assert!(!page.contains("sizes × thread counts"));
    }
    fastest_from_two_visits_is_a_table_without_bounds(&md, &html);
    ipc_cells_in_answers_json(&out_dir);
    visits_are_interleaved(&out_dir, 24);
}

/// Two visits are two pairs: the fastest answer is a table per size (6 transports: 15 rows)
/// under a summary, and no row prints bounds or a decided state from them.
fn fastest_from_two_visits_is_a_table_without_bounds(md: &str, html: &str) {
    let section = md
        .split("\n### ")
        .find(|s| s.starts_with("Which transport has the fastest round trip"))
        .unwrap();
    assert_eq!(
        section
            .matches("| transport | against | round trips/s ratio | interval | state |")
            .count(),
        2,
        "{section}"
    );
    let rows: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| transport"))
        .collect();
    assert_eq!(rows.len(), 30, "{section}");
    for row in rows {
        assert!(
            row.ends_with("| too few rounds for an interval (2 pairs) | undecided |"),
            "{row}"
        );
    }
    assert!(html.contains("<th>round trips/s ratio</th>"));
    assert!(
        !html.contains("99.67 % CI"),
        "no Holm-level bounds from two pairs"
    );
}

/// answers.json: a family per size of the fastest's pairs (6 transports: 15 pairs) and one per
/// transport of the peak's steps (2 sizes: 1 step), each cell with its state; a question of
/// several families lists them under `families`.
fn ipc_cells_in_answers_json(dir: &std::path::Path) {
    let text = std::fs::read_to_string(dir.join("answers.json")).unwrap();
    let answers: Vec<Value> = serde_json::from_str(&text).unwrap();
    let families = |q: &str| -> Vec<Value> {
        let a = answers.iter().find(|a| a["question"] == q).unwrap();
        a["families"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![a.clone()])
    };
    let fastest = families("Which transport has the fastest round trip at each size?");
    assert_eq!(fastest.len(), 2, "{text}");
    let peak = families("Where does each transport's bandwidth peak, and does it fall beyond?");
    assert_eq!(peak.len(), 6, "{text}");
    let states = ["beats", "slower", "equivalent", "undecided"];
    for (family, tests) in fastest
        .iter()
        .map(|f| (f, 15))
        .chain(peak.iter().map(|f| (f, 1)))
    {
        let cells = family["cells"].as_array().unwrap();
        assert_eq!(
            (u(&family["tests"]), cells.len()),
            (tests, tests as usize),
            "{text}"
        );
        for c in cells {
            assert!(states.contains(&c["state"].as_str().unwrap()), "{c}");
            // Two visits: two pairs, too few to decide on.
            assert_eq!(
                (&c["state"], u(&c["pairs"])),
                (&"undecided".into(), 2),
                "{c}"
            );
        }
    }
}

/// visits.jsonl: every point twice, once per round; inside a round the transports of one
/// (pattern, size) back to back; the order is the seed's.
fn visits_are_interleaved(dir: &std::path::Path, points: usize) {
    let text = std::fs::read_to_string(dir.join("visits.jsonl")).unwrap();
    let visits: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(visits.len(), 2 * points);
    let group = |v: &Value| {
        (
            v["config"]["pattern"].clone(),
            v["config"]["message_size_bytes"].clone(),
        )
    };
    for (round, half) in visits.chunks(points).enumerate() {
        assert!(half.iter().all(|v| v["visit"]["round"] == round));
        assert!(half.iter().all(|v| v["visit"]["seed"] == 7));
        // A group's visits are contiguous: the group changes exactly (groups - 1) times.
        let changes = half
            .windows(2)
            .filter(|w| group(&w[0]) != group(&w[1]))
            .count();
        assert_eq!(changes, 3, "4 groups of 6 transports, back to back");
    }
}

#[test]
fn with_processes_the_two_sides_run_in_two_processes_and_measure_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("ipc");
    let out = bytepath()
        .args(["ipc", "--processes"])
        .args(["--sizes", "64,4K", "--measure", "latency,bandwidth"])
        .args([
            "--trials", "300", "--bytes", "1M", "--warmup", "50ms", "--out",
        ])
        .arg(&out_dir)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    let text = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 24, "2 measures x 2 sizes x 6 transports");
    for r in &records {
        if !r["datagrams"].is_null() {
            // The child's send counts crossed the process boundary with its samples.
            let forward = &r["datagrams"]["forward"];
            assert!(u(&forward["sent"]) >= u(&forward["received"]));
            assert!(u(&forward["received"]) > 0);
        }
        let what = format!(
            "{} {} {}",
            r["config"]["transport"], r["config"]["pattern"], r["config"]["message_size_bytes"]
        );
        assert_eq!(r["status"], "completed", "{what}: {}", r["errors"]);
        assert_eq!(r["config"]["processes"], true, "{what}");
        let pids = [u(&r["sides"][0]["pid"]), u(&r["sides"][1]["pid"])];
        assert_ne!(pids[0], pids[1], "{what}: the sides ran in one process");
        let place = r["config"]["where_sides_run"].as_str().unwrap();
        assert!(place.contains("sides in two processes"), "{what}: {place}");
        match r["config"]["pattern"].as_str().unwrap() {
            "rr" => assert_eq!(u(&r["sides"][0]["messages"]), 300, "{what}"),
            _ => assert!(
                u(&r["sides"][1]["payload_bytes"]) >= 1 << 20,
                "{what}: {}",
                r["sides"][1]["payload_bytes"]
            ),
        }
    }
}

#[test]
fn bad_ipc_input_is_one_line_and_exit_2() {
    for (args, needle) in [
        (
            vec!["--transports", "sctp"],
            "allowed: tcp, unix, pipe, shm, udp, unix-dgram",
        ),
        (
            vec!["--transports", "udp", "--sizes", "64,128K"],
            "one datagram carries at most 65507 B",
        ),
        (
            vec!["--transports", "unix-dgram", "--sizes", "2"],
            "every datagram starts with a 4-byte sequence number",
        ),
        (vec!["--trials", "0"], "--trials \"0\""),
        (
            vec!["--sizes", "4K", "--bytes", "1K"],
            "smaller than one write",
        ),
        (vec!["--measure", "jitter"], "allowed: latency, bandwidth"),
        (vec!["--sizes", "4,4"], "repeats an earlier value"),
        (
            vec!["--pipe-sizes", "64K,huge"],
            "--pipe-sizes: \"huge\": allowed: 4 KiB to",
        ),
        (vec!["--pipe-sizes", "64K,64K"], "repeats an earlier value"),
        (vec!["--visits", "1"], "--visits \"1\": allowed"),
        (vec!["--margin", "80%"], "--margin \"80%\": allowed"),
    ] {
        let out = bytepath().arg("ipc").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}
