//! `bytepath sweep` end to end: one tiny sweep (2 mechanisms × 2 sizes × 1 thread, short
//! visits, a fixed seed) is run once and its folder checked: the CSV's fixed header and rows,
//! the points' records and their visits, the visit order the seed gives, the marker, loading
//! with Python's csv module, and snapshots of the export shapes.
mod common;

use bytepath::report::csv;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const KEYS: [&str; 4] = [
    "send/stream/256/1",
    "gather/stream/256/1",
    "send/stream/4096/1",
    "gather/stream/4096/1",
];

/// Runs the tiny sweep once for every test in this file and returns its folder.
fn tiny_sweep() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("bytepath-sweep-tiny-{}", std::process::id()));
        let out = common::folders::short_sweep(
            &dir,
            &[
                "--mechanisms",
                "send,gather",
                "--sizes",
                "256,4K",
                "--threads",
                "1",
                "--seed",
                "11",
            ],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with('[')).count(),
            4,
            "{stdout}"
        );
        dir
    })
}

fn jsonl(dir: &Path) -> Vec<Value> {
    common::folders::records(dir)
}

#[test]
fn the_csv_has_the_fixed_header_and_one_row_per_point() {
    let dir = tiny_sweep();
    let mut reader = ::csv::Reader::from_path(dir.join("results.csv")).unwrap();
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    assert_eq!(header, csv::header());
    let rows: Vec<::csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let keys: BTreeSet<&str> = rows.iter().map(|r| &r[at("key")]).collect();
    assert_eq!(keys, KEYS.into_iter().collect());
    assert_eq!(rows.len(), KEYS.len());
    for row in &rows {
        assert_eq!(row.len(), header.len());
        assert_eq!(&row[at("status")], "completed");
        assert!(row[at("receiver_throughput_gbps")].parse::<f64>().unwrap() > 0.0);
        assert!(row[at("stat_mean")].parse::<f64>().unwrap() > 0.0);
        assert_eq!(&row[at("pin")], "cross");
    }
}

fn visits(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("visits.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one visit record"))
        .collect()
}

#[test]
fn each_point_has_one_record_whose_figure_comes_from_its_visits() {
    let records = jsonl(tiny_sweep());
    let keys: Vec<&str> = records
        .iter()
        .map(|r| r["sweep_point"]["key"].as_str().unwrap())
        .collect();
    // The matrix's order (rotated within each group), one record per point.
    assert_eq!(
        keys,
        [
            "send/stream/256/1",
            "gather/stream/256/1",
            "gather/stream/4096/1",
            "send/stream/4096/1"
        ]
    );
    let visits = visits(tiny_sweep());
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["sweep_point"]["index"], i);
        assert_eq!(
            (r["command"].as_str(), r["status"].as_str()),
            (Some("sweep"), Some("completed"))
        );
        assert_eq!(r["config"]["duration_s"], 0.2, "one visit's measured time");
        let st = &r["statistics"];
        assert_eq!(st["basis"], "visits");
        assert!(st["method"]
            .as_str()
            .unwrap()
            .contains("visits − 1 degrees of freedom"));
        assert_eq!(st["counters_open"], false);
        assert_eq!(st["visits"]["count"], 4, "the default is even");
        assert_eq!(st["visits"]["rounds"], serde_json::json!([0, 1, 2, 3]));
        assert_eq!(st["visits"]["counters_round"], 4);
        // The point's values are its headline visits' figures, round by round.
        let key = keys[i];
        let mine: Vec<&Value> = visits
            .iter()
            .filter(|v| v["visit"]["key"] == key && v["visit"]["kind"] == "headline")
            .collect();
        let figures: Vec<f64> = mine
            .iter()
            .map(|v| v["sides"][1]["throughput_gbps"].as_f64().unwrap())
            .collect();
        let values: Vec<f64> = st["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(values, figures);
        let mean = figures.iter().sum::<f64>() / 4.0;
        assert!((st["summary"]["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
        // Counts add up over the headline visits only.
        let bytes: u64 = mine
            .iter()
            .map(|v| v["sides"][1]["payload_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(r["sides"][1]["payload_bytes"].as_u64().unwrap(), bytes);
    }
}

#[test]
fn every_visit_is_saved_and_counters_open_only_in_the_counter_visits() {
    let visits = visits(tiny_sweep());
    assert_eq!(
        visits.len(),
        4 * 4 + 4,
        "4 headline visits (the even default) and 1 counter visit per point"
    );
    for v in &visits {
        let (kind, counters) = (&v["visit"]["kind"], &v["config"]["counters"]);
        match kind.as_str() {
            Some("headline") => assert_eq!(counters, "none", "{v}"),
            Some("counters") => assert_eq!(counters, "all", "{v}"),
            other => panic!("kind {other:?}"),
        }
        assert_eq!(v["visit"]["seed"], 11);
        assert!(v["visit"]["wall_s"].as_f64().unwrap() > 0.2);
    }
    let positions: Vec<u64> = visits
        .iter()
        .map(|v| v["visit"]["position"].as_u64().unwrap())
        .collect();
    assert_eq!(positions, (0..20).collect::<Vec<u64>>());
}

#[test]
fn the_visit_order_is_the_one_the_seed_gives() {
    use bytepath::stats::schedule::Schedule;
    // The tiny sweep's matrix: points 0-1 at 256 B, 2-3 at 4 KiB (see the first test).
    let keys = [
        "send/stream/256/1",
        "gather/stream/256/1",
        "gather/stream/4096/1",
        "send/stream/4096/1",
    ];
    let mut schedule = Schedule::new(vec![vec![0, 1], vec![2, 3]], 11);
    let mut expected: Vec<(String, u64, &str)> = Vec::new();
    for round in 0..4 {
        for v in schedule.round(round, &[0, 1], true) {
            expected.push((keys[v.point].into(), round as u64, "headline"));
        }
    }
    for v in schedule.counter_round(4) {
        expected.push((keys[v.point].into(), 4, "counters"));
    }
    let made: Vec<(String, u64, &str)> = visits(tiny_sweep())
        .iter()
        .map(|v| {
            let info = &v["visit"];
            let kind = if info["kind"] == "headline" {
                "headline"
            } else {
                "counters"
            };
            (
                info["key"].as_str().unwrap().into(),
                info["round"].as_u64().unwrap(),
                kind,
            )
        })
        .collect();
    assert_eq!(made, expected);
}

#[test]
fn the_folder_is_marked_as_a_bytepath_sweep() {
    let text = std::fs::read_to_string(tiny_sweep().join("sweep.json")).unwrap();
    let marker: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(marker["kind"], "bytepath sweep results");
    assert_eq!(marker["schema_version"], bytepath::record::SCHEMA_VERSION);
    assert_eq!(marker["points"], 4);
    assert_eq!(marker["arguments"]["sizes"], "256,4K");
    assert_eq!(
        marker["spec"]["sizes_bytes"],
        serde_json::json!([256, 4096])
    );
}

#[test]
fn the_csv_loads_in_python_with_a_consistent_column_count() {
    if !common::has_command("python3") {
        common::skip("python3 is not installed");
        return;
    }
    let script = "import csv, sys\n\
                  rows = list(csv.reader(open(sys.argv[1], newline='')))\n\
                  widths = {len(r) for r in rows}\n\
                  assert len(widths) == 1, widths\n\
                  print(len(rows) - 1, widths.pop())";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(tiny_sweep().join("results.csv"))
        .output()
        .unwrap();
    common::assert_success(&out);
    let expected = format!("4 {}\n", csv::header().len());
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}

#[test]
fn the_csv_header_matches_its_snapshot() {
    insta::assert_snapshot!(csv::header().join("\n"));
}

/// Numbers and nulls outside the configuration become "[figure]"; reason keys (present only
/// where a metric is missing, which depends on the machine) are dropped.
fn normalize(value: &mut Value, in_config: bool) {
    match value {
        Value::Number(_) | Value::Null if !in_config => *value = Value::from("[figure]"),
        Value::Object(map) => {
            map.retain(|k, _| !k.ends_with("_unavailable_reason"));
            for (k, v) in map.iter_mut() {
                let stable = matches!(k.as_str(), "config" | "sweep_point" | "schema_version");
                normalize(v, in_config || stable);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| normalize(v, in_config)),
        _ => {}
    }
}

#[test]
fn a_sweep_record_matches_its_snapshot() {
    let mut record = jsonl(tiny_sweep()).remove(0);
    normalize(&mut record, false);
    insta::assert_json_snapshot!(record, {
        ".environment" => "[environment]",
        ".notes" => "[notes]",
        ".statistics.values" => "[values]",
        ".statistics.visits.rounds" => "[rounds]",
        ".statistics.visits.sender_cpu_ns_per_byte" => "[per visit]",
        ".statistics.stop_reason" => "[stop reason]",
        ".statistics.ci_target_met" => "[met]",
        ".sides[].counter_scope" => "[scope]",
        ".sides[].latency_histogram_hdr" => "[histogram]",
        // One reading per slice boundary, and at the start and the stop: as many as the run took.
        ".tcp_info.flows[].series" => "[readings]",
        ".machine_wide_cpu" => "[machine]",
    });
}

#[test]
fn the_sweep_records_a_probe_and_the_report_sets_points_against_it() {
    let dir = tiny_sweep();
    let probe: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("probe.json")).unwrap()).unwrap();
    let dram = probe["memcpy_roofline"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["level"] == "dram")
        .unwrap();
    assert!(dram["bandwidth"]["best_gb_per_s"].as_f64().unwrap() > 0.0);
    let curve = probe["memcpy_roofline"]["by_threads"]["points"]
        .as_array()
        .expect("the sweep's probe measures the curve");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("## Machine limits (bytepath probe)"), "{md}");
    assert!(
        md.contains("memcpy roofline**: best aggregate GB/s by threads copying at once"),
        "{md}"
    );
    // One flow: its sender and receiver copy, on two CPUs where the machine has two.
    let allowed = probe["memcpy_roofline"]["by_threads"]["allowed_cpus"]
        .as_u64()
        .unwrap();
    let threads = allowed.min(2);
    assert_eq!(curve[threads as usize - 1]["threads"], threads);
    // The points table's row (the TCP_INFO table below it has rows for the point too).
    let points = md.split("\n## Points\n").nth(1).expect("a points table");
    let row = points
        .lines()
        .find(|l| l.starts_with("| gather/stream/4096/1"))
        .unwrap();
    let held_against = match threads {
        1 => " % (1 thread)".to_string(),
        n => format!(" % ({n} threads)"),
    };
    assert!(
        row.contains(&held_against),
        "throughput as a share of the roofline of the threads that copy: {row}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("data-plot=\"roofline\""),
        "the curve is plotted"
    );
}

#[test]
fn rounds_json_records_every_groups_rounds_and_one_look_when_the_pilot_spent_the_budget() {
    // --budget 300ms: the pilot and counter round spend it, so no plan is made and every cell
    // is judged at one look, at α.
    let dir = tiny_sweep();
    let rounds: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rounds.json")).unwrap()).unwrap();
    assert_eq!(rounds["looks"], 1, "{rounds}");
    assert_eq!(rounds["adaptive"], false);
    assert_eq!(rounds["alpha_looks"], serde_json::json!([0.05]));
    assert_eq!(rounds["margin"], 0.05);
    let groups = rounds["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "one per size: {rounds}");
    let pilot = rounds["pilot_rounds"].as_u64().unwrap();
    for g in groups {
        assert_eq!(g["rounds_made"].as_u64(), Some(pilot), "{g}");
        assert!(
            g.get("planned_rounds").is_none(),
            "no plan without budget: {g}"
        );
    }
}
