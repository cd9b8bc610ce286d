//! A mesh's figures as files and its `--percentiles`, end to end on loopback: two hosts
//! running `bytepath server`, rr, two visits; each point's heatmap is written as
//! figures/mesh_*.svg, .png and .csv (the CSV a row per pair with its cell mean from the
//! records), linked from both pages, and each record keeps the chosen set read from its
//! client histogram, which report.md shows per pair.
mod common;
mod mesh_common;

use common::{bytepath, Server};
use mesh_common::{records, token};
use std::time::Duration;

#[test]
fn an_rr_mesh_writes_its_heatmaps_and_keeps_the_chosen_percentiles() {
    let servers: Vec<Server> = (0..2)
        .map(|_| {
            let peers = ["--allow-peers", "127.0.0.0/8", "--peer-ports", "1-65535"];
            Server::start("5s", &[&peers[..], &["--token-file", token()]].concat())
        })
        .collect();
    let hosts: Vec<String> = servers.iter().map(Server::address).collect();
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("mesh");
    let out = bytepath()
        .args(["mesh", "--token-file", token(), "--hosts", &hosts.join(",")])
        .args(["--visits", "2", "--duration", "200ms", "--warmup", "50ms"])
        .args(["--sizes", "4K", "--patterns", "rr", "--mechanisms", "send"])
        .args(["--percentiles", "50,99.99", "--out"])
        .arg(&out_dir)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    let stem = "figures/mesh_send_rr_4096_1_round_trip_p50_s";
    for ext in ["svg", "png", "csv"] {
        assert!(
            out_dir.join(format!("{stem}.{ext}")).is_file(),
            "{stem}.{ext}"
        );
    }
    let svg = std::fs::read_to_string(out_dir.join(format!("{stem}.svg"))).unwrap();
    roxmltree::Document::parse(&svg).expect("a well-formed SVG");
    assert_eq!(
        common::folders::png_size(&out_dir.join(format!("{stem}.png"))).0,
        1200
    );
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(html.contains(&format!("href=\"{stem}.csv\"")), "{html}");
    assert!(md.contains(&format!("]({stem}.png)")), "{md}");

    let records = records(&out_dir);
    let (header, rows) = common::folders::csv_rows(&out_dir.join(format!("{stem}.csv")));
    assert_eq!(header[..3], ["source", "destination", "round-trip p50 µs"]);
    assert_eq!(rows.len(), 2, "a row per ordered pair: {rows:?}");
    for row in &rows {
        let p50s: Vec<f64> = records
            .iter()
            .filter(|r| r["src"] == row[0].as_str() && r["dst"] == row[1].as_str())
            .map(|r| r["sides"][0]["latency_ns"]["p50"].as_f64().unwrap() / 1e3)
            .collect();
        assert_eq!(p50s.len(), 2, "two visits of {row:?}");
        let mean = p50s.iter().sum::<f64>() / 2.0;
        let drawn: f64 = row[2].parse().unwrap();
        assert!(
            (drawn - mean).abs() <= 1e-9 * mean,
            "{row:?} against {p50s:?}"
        );
    }
    for r in &records {
        let chosen: Vec<f64> = r["sides"][0]["latency_percentiles_ns"]
            .as_array()
            .expect("the chosen set")
            .iter()
            .map(|v| v["percentile"].as_f64().unwrap())
            .collect();
        assert_eq!(chosen, [50.0, 99.99], "{}", r["sides"][0]);
    }
    assert!(md.contains("| pair | p50 µs | p99.99 µs |"), "{md}");
}
