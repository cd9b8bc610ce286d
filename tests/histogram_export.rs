//! Whole latency distributions on the real binary: `--percentiles` read exactly from the
//! histogram each record keeps, `export --histogram` written as HdrHistogram's interval log
//! and a CSV of buckets that read back with the record's counts, and the CDF figure in the
//! report of a short rr sweep.
mod common;

use common::folders::{decode, records};

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::Histogram;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A short rr sweep (two mechanisms, one size) with a chosen set beyond today's.
fn rr_sweep() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("bytepath-hist-{}", std::process::id()));
        common::folders::short_sweep(
            &dir,
            &[
                "--mechanisms",
                "send,gather",
                "--sizes",
                "256",
                "--threads",
                "1",
                "--patterns",
                "rr",
                "--percentiles",
                "99.99,50,99,90",
                "--seed",
                "5",
            ],
        );
        dir
    })
}

/// (bucket value, count) of every recorded bucket.
fn counts(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

#[test]
fn each_chosen_percentile_is_the_recorded_histograms_own() {
    for r in records(rr_sweep()) {
        let client = &r["sides"][0];
        let h = decode(
            client["latency_histogram_hdr"]
                .as_str()
                .expect("a histogram"),
        );
        assert!(!h.is_empty());
        let list = client["latency_percentiles_ns"].as_array().unwrap();
        let chosen: Vec<f64> = list
            .iter()
            .map(|v| v["percentile"].as_f64().unwrap())
            .collect();
        assert_eq!(chosen, [50.0, 90.0, 99.0, 99.99], "sorted, as chosen");
        for v in list {
            let p = v["percentile"].as_f64().unwrap();
            assert_eq!(
                v["ns"].as_u64().unwrap(),
                h.value_at_quantile(p / 100.0),
                "p{p}"
            );
        }
        // The fixed fields stay for old readers; the pooled count is every visit's.
        assert_eq!(client["latency_ns"]["count"].as_u64().unwrap(), h.len());
    }
}

#[test]
fn export_histogram_reads_back_with_the_records_counts() {
    let dir = rr_sweep();
    let out = common::bytepath()
        .args(["export", "--histogram"])
        .arg(dir)
        .output()
        .unwrap();
    common::assert_success(&out);
    let written: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let points = records(dir);
    assert_eq!(
        written.len(),
        2 * points.len(),
        "an .hlog and a .csv per point: {written:?}"
    );
    for r in &points {
        let key = r["sweep_point"]["key"].as_str().unwrap().replace('/', "-");
        let base = dir.join("histograms").join(&key);
        let log = std::fs::read(base.with_extension("hlog")).unwrap();
        let text = String::from_utf8_lossy(&log);
        assert!(text.contains("#[StartTime: "), "{text}");
        let mut sides_read = 0;
        for entry in IntervalLogIterator::new(&log) {
            let LogEntry::Interval(interval) = entry.expect("a well-formed log") else {
                continue;
            };
            let tag = interval.tag().expect("tagged by side").as_str();
            let side = r["sides"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["side"] == tag)
                .unwrap();
            let kept = decode(side["latency_histogram_hdr"].as_str().unwrap());
            let read = decode(interval.encoded_histogram());
            assert_eq!(counts(&read), counts(&kept), "{key} {tag}");
            sides_read += 1;
        }
        assert!(sides_read >= 1, "{key}: no interval in {text}");
        let csv = std::fs::read_to_string(base.with_extension("csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("side,value_ns_low,value_ns_high,count,cumulative_fraction")
        );
        let first = r["sides"][0]["side"].as_str().unwrap();
        let client_total: u64 = lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|c| c[0] == first)
            .map(|c| c[3].parse::<u64>().unwrap())
            .sum();
        let client = decode(r["sides"][0]["latency_histogram_hdr"].as_str().unwrap());
        assert_eq!(
            client_total,
            client.len(),
            "{key}: the CSV counts every sample"
        );
    }
}

#[test]
fn a_folder_of_records_without_histograms_names_the_points() {
    let old = tempfile::tempdir().unwrap();
    // The whole folder (its marker among it), its records as a build before histograms wrote them.
    for entry in std::fs::read_dir(rr_sweep()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, old.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let lines: Vec<String> = records(rr_sweep())
        .into_iter()
        .map(|mut r| {
            for s in r["sides"].as_array_mut().unwrap() {
                let side = s.as_object_mut().unwrap();
                side.remove("latency_histogram_hdr");
                side.remove("latency_percentiles_ns");
            }
            r.to_string()
        })
        .collect();
    std::fs::write(old.path().join("results.jsonl"), lines.join("\n") + "\n").unwrap();
    let out = common::bytepath()
        .args(["export", "--histogram"])
        .arg(old.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no histogram for point send/rr/256/1: no histogram kept"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no point kept a latency histogram"),
        "{stderr}"
    );
}

#[test]
fn the_report_of_an_rr_sweep_draws_the_cdf() {
    let dir = rr_sweep();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let doc = common::parse_xhtml(&html);
    let figure = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("plot-latency-cdf"))
        .expect("the CDF figure");
    let lines = figure
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline")
        .count();
    assert!(lines >= 2, "a line per mechanism: {lines}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("**Latency CDF (whole distribution)**"), "{md}");
    assert!(md.contains("(figures/latency_cdf.png)"), "{md}");
    assert!(dir.join("figures/latency_cdf.svg").is_file());
    assert!(md.contains("## Recorded latency percentiles"), "{md}");
    let listed = md
        .lines()
        .find(|l| l.starts_with("- **send/rr/256/1**: p50 "))
        .expect("the point's percentiles listed");
    assert_eq!(listed.split(", ").count(), 4, "{listed}");
    assert!(listed.contains(", p99.99 "), "{listed}");
}

#[test]
fn a_bad_percentile_list_is_one_line_and_exit_2() {
    for (command, bad) in [
        (&["run", "-m", "send", "-d", "100ms"][..], "0"),
        (&["run", "-m", "send", "-d", "100ms"], "50,100.5"),
        (&["sweep"], "abc"),
        (&["ipc"], "99,99"),
    ] {
        let out = common::bytepath()
            .args(command)
            .args(["--percentiles", bad])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?} {bad}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("bytepath: --percentiles \"{bad}\": ")),
            "{stderr}"
        );
        assert!(stderr.contains("allowed: up to 16"), "{stderr}");
    }
}

/// report.html's points table shows the chosen set beyond its own p50 and p99: a column each
/// for p90 and p99.99 (the sweep chose 50, 90, 99 and 99.99), every rr point's cell its
/// client's recorded value.
#[test]
fn the_points_table_shows_the_chosen_set() {
    let dir = rr_sweep();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let page = common::parse_xhtml(&html);
    let table = page
        .descendants()
        .find(|n| n.has_tag_name("table") && n.attribute("class") == Some("points"))
        .expect("the points table");
    let rows: Vec<Vec<String>> = table
        .children()
        .filter(|n| n.has_tag_name("tr"))
        .map(|tr| {
            tr.children()
                .filter(|c| c.is_element())
                .map(|c| c.text().unwrap_or("").to_string())
                .collect()
        })
        .collect();
    let header = &rows[0];
    for r in records(dir) {
        let key = r["config"]["mechanism"].as_str().unwrap().to_string();
        let row = rows
            .iter()
            .find(|row| row[0].contains(r["config"]["mechanism"].as_str().unwrap()))
            .unwrap_or_else(|| panic!("no row for {key}: {rows:?}"));
        assert!(!header.iter().any(|h| h == "latency p99.9"), "not chosen");
        for (p, name) in [(90.0, "latency p90"), (99.99, "latency p99.99")] {
            let at = header
                .iter()
                .position(|h| h == name)
                .unwrap_or_else(|| panic!("{name}: {header:?}"));
            let ns = r["sides"][0]["latency_percentiles_ns"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["percentile"].as_f64() == Some(p))
                .and_then(|v| v["ns"].as_u64())
                .unwrap();
            assert_eq!(
                row[at],
                bytepath::report::units::duration_ns(ns as f64),
                "{name}"
            );
        }
    }
}
