//! `sweep --bidir`: every point has a twin whose flows go both ways, visited in the same rounds
//! so the two pair; the report answers what the reverse direction costs the forward one; the
//! CSV and OpenMetrics exports carry both directions' figures; each way's bytes arrive whole.
mod common;
use common::{bytepath, u};
use serde_json::Value;

fn sweep(out_dir: &std::path::Path) {
    let out = bytepath()
        .args([
            "sweep",
            "--bidir",
            "--patterns",
            "stream",
            "--mechanisms",
            "send",
        ])
        .args(["--sizes", "64K", "--threads", "1", "--visit", "200ms"])
        .args([
            "--min-visits",
            "3",
            "--budget",
            "1s",
            "--slice",
            "50ms",
            "--verify",
        ])
        .arg("--out")
        .arg(out_dir)
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    common::assert_success(&out);
}

fn export(dir: &std::path::Path, format: &str) -> String {
    let out = bytepath()
        .arg("export")
        .arg(dir)
        .args(["--format", format])
        .output()
        .unwrap();
    common::assert_success(&out);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn bidir_points_pair_with_their_one_way_twins_and_the_report_answers_with_an_interval() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    sweep(&out_dir);
    let text = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let key = |r: &Value| r["sweep_point"]["key"].as_str().unwrap().to_string();
    let keys: Vec<String> = records.iter().map(key).collect();
    assert_eq!(keys, ["send/stream/65536/1", "send/stream/65536/1/bidir"]);
    let bidir = &records[1]["bidir"];
    assert!(records[0].get("bidir").is_none(), "{}", records[0]["bidir"]);
    assert!(u(&bidir["reverse_sent_bytes"]) > 0, "{bidir}");
    assert_eq!(bidir["forward_sent_bytes"], bidir["forward_received_bytes"]);
    assert_eq!(bidir["reverse_sent_bytes"], bidir["reverse_received_bytes"]);
    assert_eq!(bidir["all_delivered_each_way"], true);
    // Both points visited in the same rounds: every round of one has the other.
    let visits = std::fs::read_to_string(out_dir.join("visits.jsonl")).unwrap();
    let rounds = |k: &str| -> Vec<u64> {
        let mut r: Vec<u64> = visits
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["visit"]["key"] == k && v["visit"]["kind"] == "headline")
            .filter_map(|v| v["visit"]["round"].as_u64())
            .collect();
        r.sort();
        r
    };
    let one_way = rounds("send/stream/65536/1");
    assert!(one_way.len() >= 3, "{visits}");
    assert_eq!(one_way, rounds("send/stream/65536/1/bidir"), "{visits}");
    let answer = common::answer_in(&out_dir, "reverse direction cost");
    // answers.json keeps each answer's verdict; its figures and interval are in the report.
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    let detail = report
        .lines()
        .find(|l| l.starts_with("- send 64 KiB ×1: forward"))
        .unwrap_or_else(|| panic!("no bidir line: {report}"))
        .trim_start_matches("- ");
    assert!(
        detail.starts_with("send 64 KiB ×1: forward Gbit/s with the reverse running over one-way"),
        "{detail}"
    );
    assert!(
        detail.contains("95 % CI") || detail.contains("90 % CI"),
        "{detail}"
    );
    let states = [
        "costs the forward direction",
        "leaves the forward direction faster",
        "equivalent within ±5 %",
        "undecided",
    ];
    let verdict = answer["verdict"].as_str().unwrap();
    assert!(
        states
            .iter()
            .any(|s| verdict == format!("send 64 KiB ×1: {s}")),
        "{verdict}"
    );

    let metrics = export(&out_dir, "openmetrics");
    for direction in ["forward", "reverse", "sum"] {
        let line = metrics
            .lines()
            .find(|l| {
                l.starts_with("bytepath_bidir_throughput_gbit_per_second{")
                    && l.contains(&format!("direction=\"{direction}\""))
            })
            .unwrap_or_else(|| panic!("no {direction} throughput:\n{metrics}"));
        assert!(
            line.rsplit(' ').next().unwrap().parse::<f64>().unwrap() > 0.0,
            "{line}"
        );
    }
    assert!(
        metrics.contains("bytepath_bidir_received_bytes{"),
        "{metrics}"
    );
    assert!(metrics.contains("bidir=\"true\""), "{metrics}");
    let csv = export(&out_dir, "csv");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    // The bidir columns were appended after every earlier column, and the blocks added since
    // (`--count-copies`, `--sink`) after them.
    let at = |name: &str| header.iter().position(|h| h == name);
    assert_eq!(
        at("bidir_sum_gbps").map(|i| i + 1),
        at("copies_counted_in"),
        "{header:?}"
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let col = |row: &csv::StringRecord, name: &str| {
        row[header.iter().position(|h| h == name).unwrap()].to_string()
    };
    let both = rows
        .iter()
        .find(|r| !col(r, "bidir_reverse_sent_bytes").is_empty())
        .unwrap();
    assert_eq!(
        col(both, "bidir_reverse_sent_bytes"),
        col(both, "bidir_reverse_received_bytes")
    );
    assert_eq!(col(both, "bidir_all_delivered_each_way"), "true");
    assert_eq!(
        rows.iter()
            .filter(|r| col(r, "bidir_sum_gbps").is_empty())
            .count(),
        1
    );
}

#[test]
fn a_sweep_refuses_bidir_where_run_would_in_one_line() {
    for (extra, expected) in [
        (
            ["--mechanisms", "zerocopy"],
            "--mechanism zerocopy with --bidir",
        ),
        (
            ["--patterns", "rr"],
            "--bidir with --pattern rr: allowed only with stream",
        ),
    ] {
        let out = bytepath()
            .args(["sweep", "--bidir"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(expected), "{err}");
    }
}
