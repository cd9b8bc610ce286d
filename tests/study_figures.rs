//! The other studies' figures as files, end to end: a short servers run and a short file run
//! each write figures/NAME.svg, .png and .csv for every figure their report draws, link
//! every one from report.html and report.md, and the CSVs hold the records' numbers; a
//! figure file an earlier report left is removed when the report is written again, anything
//! else in figures/ stays; `servers --percentiles` keeps the chosen set in the record and the
//! table, and a bad list is refused with one line.
mod common;

use common::folders::{csv_rows, decode, png_size, records};
use hdrhistogram::Histogram;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// Runs `bytepath ARGS --out DIR` into a fresh DIR under the test's tmp dir.
fn study(name: &str, args: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let out = common::bytepath()
        .args(args)
        .arg("--out")
        .arg(&dir)
        .timeout(Duration::from_secs(120))
        .output()
        .expect("bytepath ran");
    common::assert_success(&out);
    dir
}

/// Two models at two client counts, two visits, with a chosen tail beyond today's set.
fn servers() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tail = ["--percentiles", "50,99.99"];
        study(
            "study-figures-servers",
            &[&common::folders::SHORT_SERVERS[..], &tail].concat(),
        )
    })
}

fn file() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| study("study-figures-file", &common::folders::SHORT_FILE))
}

/// The files in the folder's figures/, as `figures/NAME`.
fn figure_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir.join("figures"))
        .expect("the report wrote figures/")
        .map(|e| format!("figures/{}", e.unwrap().file_name().to_string_lossy()))
        .collect()
}

/// Each figure has its three files, each SVG parses, each PNG decodes 1200 pixels wide, and
/// report.html and report.md link exactly those files.
fn check_written_and_linked(dir: &Path, expected: &[&str]) {
    let files = figure_files(dir);
    for stem in expected {
        for ext in ["svg", "png", "csv"] {
            let name = format!("figures/{stem}.{ext}");
            assert!(files.contains(&name), "{name} is missing: {files:?}");
        }
    }
    for name in &files {
        let path = dir.join(name);
        if name.ends_with(".svg") {
            let svg = std::fs::read_to_string(&path).unwrap();
            let doc = roxmltree::Document::parse(&svg).expect("a well-formed SVG");
            assert_eq!(doc.root_element().tag_name().name(), "svg", "{name}");
        } else if name.ends_with(".png") {
            assert_eq!(&std::fs::read(&path).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
            let (w, h) = png_size(&path);
            assert!(w == 1200 && h > 100, "{name} is {w}×{h}");
        }
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let page = common::parse_xhtml(&html);
    let hrefs: BTreeSet<String> = page
        .descendants()
        .filter(|n| n.has_tag_name("a"))
        .filter_map(|n| n.attribute("href"))
        .filter(|h| h.starts_with("figures/"))
        .map(String::from)
        .collect();
    assert_eq!(hrefs, files, "report.html links every figure file");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for name in &files {
        assert!(md.contains(&format!("]({name})")), "report.md: {name}");
    }
}

/// Close to within rounding of a mean taken in another order.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

#[test]
fn a_servers_run_writes_its_four_figures_with_the_records_numbers() {
    let dir = servers();
    check_written_and_linked(
        dir,
        &[
            "requests_per_s_vs_clients",
            "p99_latency_vs_clients",
            "server_cpu_per_request_vs_clients",
            "context_switches_per_request_vs_clients",
        ],
    );
    let (header, rows) = csv_rows(&dir.join("figures/requests_per_s_vs_clients.csv"));
    assert_eq!(header, ["panel", "series", "clients", "requests/s"]);
    let visits = records(dir);
    assert_eq!(rows.len(), 4, "a row per point: {rows:?}");
    for row in rows {
        let of_point: Vec<f64> = visits
            .iter()
            .filter(|v| v["status"] == "completed")
            .filter(|v| v["config"]["model"] == row[1].as_str())
            .filter(|v| v["config"]["clients"].as_u64() == row[2].parse().ok())
            .map(|v| v["metrics"]["requests_per_s"].as_f64().unwrap())
            .collect();
        assert_eq!(of_point.len(), 2, "two visits of {row:?}");
        let drawn: f64 = row[3].parse().unwrap();
        assert!(
            close(drawn, mean(&of_point)),
            "{row:?} against {of_point:?}"
        );
    }
}

#[test]
fn a_file_run_writes_its_figures_with_the_records_numbers() {
    let dir = file();
    check_written_and_linked(
        dir,
        &["transfer_time_vs_file_size", "cpu_ns_per_byte_vs_file_size"],
    );
    let (header, rows) = csv_rows(&dir.join("figures/transfer_time_vs_file_size.csv"));
    assert_eq!(
        header[..4],
        ["panel", "series", "file size (bytes)", "time (ms)"]
    );
    assert_eq!(rows.len(), 4, "a row per (size, mechanism): {rows:?}");
    let transfers = records(dir);
    for row in rows {
        let times: Vec<f64> = transfers
            .iter()
            .filter(|t| t["counter_transfer"] != true && t["error"].is_null())
            .filter(|t| t["mechanism"] == row[1].as_str())
            .filter(|t| t["size_bytes"].as_u64() == row[2].parse().ok())
            .map(|t| t["elapsed_ms"].as_f64().unwrap())
            .collect();
        assert_eq!(times.len(), 2, "two repetitions of {row:?}");
        let drawn: f64 = row[3].parse().unwrap();
        assert!(close(drawn, mean(&times)), "{row:?} against {times:?}");
    }
}

/// Run last in its folder's life: `bytepath report` again over a folder with a stale figure.
#[test]
fn a_stale_figure_is_removed_and_nothing_else() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("study-figures-stale");
    let _ = std::fs::remove_dir_all(&dir);
    let out = common::bytepath()
        .args([
            "file",
            "--sizes",
            "4K",
            "--reps",
            "1",
            "--mechanisms",
            "sendfile",
        ])
        .arg("--out")
        .arg(&dir)
        .timeout(Duration::from_secs(120))
        .output()
        .expect("bytepath ran");
    common::assert_success(&out);
    let written = figure_files(&dir);
    std::fs::write(dir.join("figures/old_figure.svg"), "<svg/>").unwrap();
    std::fs::write(dir.join("figures/old_figure.csv"), "x\n").unwrap();
    std::fs::write(dir.join("figures/notes.txt"), "mine").unwrap();
    common::assert_success(&common::bytepath().arg("report").arg(&dir).output().unwrap());
    let now = figure_files(&dir);
    assert!(!now.contains("figures/old_figure.svg"), "{now:?}");
    assert!(!now.contains("figures/old_figure.csv"), "{now:?}");
    assert!(now.contains("figures/notes.txt"), "{now:?}");
    let figures: BTreeSet<String> = now.into_iter().filter(|n| !n.ends_with(".txt")).collect();
    assert_eq!(figures, written);
}

/// A Markdown table row's cells.
fn cells(line: &str) -> Vec<&str> {
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}

/// `--percentiles 50,99.99`: each visit keeps p50 and p99.99 read from its own histogram, and
/// the table shows each point's p99.99 read from its visits' histograms merged.
#[test]
fn servers_percentiles_are_in_the_record_and_the_table() {
    let dir = servers();
    let visits: Vec<Value> = records(dir)
        .into_iter()
        .filter(|v| v["status"] == "completed")
        .collect();
    assert!(!visits.is_empty());
    for v in &visits {
        let m = &v["metrics"];
        let h = decode(m["latency_histogram_hdr"].as_str().expect("the histogram"));
        let chosen: Vec<(f64, u64)> = m["latency_percentiles_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["percentile"].as_f64().unwrap(), p["ns"].as_u64().unwrap()))
            .collect();
        let want = [50.0, 99.99].map(|p| (p, h.value_at_quantile(p / 100.0)));
        assert_eq!(chosen, want);
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // The points table: from its header ("| model | clients | …") to its last row.
    let mut lines = md
        .lines()
        .skip_while(|l| !l.starts_with("| model | clients |"));
    let header = cells(
        lines
            .next()
            .unwrap_or_else(|| panic!("no points table: {md}")),
    );
    let at = header
        .iter()
        .position(|h| *h == "p99.99 µs")
        .expect("p99.99");
    let (model, clients) = ("epoll", 4);
    let row = lines
        .take_while(|l| l.starts_with('|'))
        .map(cells)
        .find(|r| r[0] == model && r[1] == clients.to_string())
        .unwrap_or_else(|| panic!("{model} at {clients}: {md}"));
    let mut merged: Option<Histogram<u64>> = None;
    for v in visits
        .iter()
        .filter(|v| v["config"]["model"] == model && v["config"]["clients"] == clients)
    {
        let h = decode(v["metrics"]["latency_histogram_hdr"].as_str().unwrap());
        match merged.as_mut() {
            Some(all) => all.add(&h).unwrap(),
            None => merged = Some(h),
        }
    }
    let p = merged.expect("its visits").value_at_quantile(0.9999) as f64 / 1e3;
    assert_eq!(row[at], format!("{p:.1}"), "{md}");
}

#[test]
fn a_bad_percentile_list_is_refused_with_one_line() {
    let out = common::bytepath()
        .args(["servers", "--models", "epoll", "--clients", "2"])
        .args(["--percentiles", "50,101"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--percentiles \"50,101\"") && stderr.contains("allowed"),
        "{stderr}"
    );
}
