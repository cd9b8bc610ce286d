//! `bytepath report DIR` on the real binary: synthetic sweeps, a real folder of `bytepath run
//! --json` records, and bad input (exit 2, one line naming the file and line, nothing written).
mod common;

use bytepath::analysis::synthetic::{demo_sweep, jsonl, Shape};
use common::bytepath;
use std::path::{Path, PathBuf};

fn folder(name: &str, results: Option<&str>) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("report-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(text) = results {
        std::fs::write(dir.join("results.jsonl"), text).unwrap();
    }
    dir
}

/// Data points per plot, by the plot's `data-plot` name.
fn points_per_plot(html: &str) -> Vec<(String, usize)> {
    let doc = common::parse_xhtml(html);
    doc.descendants()
        .filter(|n| n.has_tag_name("svg"))
        .map(|svg| {
            let points = svg
                .descendants()
                .filter(|n| n.has_tag_name("circle") && n.attribute("class") == Some("point"))
                .count();
            (
                svg.attribute("data-plot").unwrap_or("?").to_string(),
                points,
            )
        })
        .collect()
}

#[test]
fn report_writes_html_and_markdown_with_a_plot_per_figure() {
    let dir = folder("demo", Some(&jsonl(&demo_sweep(true))));
    let out = bytepath().arg("report").arg(&dir).output().unwrap();
    common::assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        format!("report: {}", dir.join("report.html").display())
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let plots = points_per_plot(&html);
    let names: Vec<&str> = plots.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["throughput", "latency", "cpu", "cache", "context-switches"]
    );
    assert!(plots.iter().all(|(_, n)| *n > 0), "{plots:?}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("gather beats copy from 16 KiB on"), "{md}");
    // The answers as data: each verdict without its figures, for a re-run to reproduce.
    let answers: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("answers.json")).unwrap()).unwrap();
    assert_eq!(answers.len(), 7);
    assert_eq!(
        answers[0]["verdict"],
        // The demo's five rounds a point are too few for "equivalent" (8), so the sizes below
        // 16 KiB are undecided and the crossover is said to lie at or below 16 KiB.
        "1 thread: beats from 16 KiB on, crossover at or below 16 KiB (undecided at 64 B,256 B,1 KiB,4 KiB); \
         2 threads: beats from 16 KiB on, crossover at or below 16 KiB (undecided at 64 B,256 B,1 KiB,4 KiB)",
        "{answers:?}"
    );
    assert!(answers[0]["rests_on"]
        .as_str()
        .unwrap()
        .contains("per-round paired ratios"));
    // Each cell of the crossover family with its state, and the family's count and method.
    let cells = answers[0]["cells"].as_array().unwrap();
    assert_eq!(answers[0]["tests"].as_u64(), Some(cells.len() as u64));
    assert_eq!(answers[0]["correction"], "holm");
    let at_16k = cells
        .iter()
        .find(|c| c["cell"] == "16 KiB at 1 thread")
        .unwrap();
    assert_eq!(at_16k["state"], "beats", "{at_16k}");
    assert!(at_16k["low"].as_f64().unwrap() > 1.0, "{at_16k}");
    assert!(cells
        .iter()
        .all(|c| ["beats", "slower", "equivalent", "undecided"]
            .contains(&c["state"].as_str().unwrap())));
    assert_eq!(answers[2]["verdict"], "every send copied");
    assert!(
        answers[6]["verdict"].is_null(),
        "the most surprising point is a figure"
    );
}

/// The report is one file a reader can open offline or mail: no element loads anything (no
/// `src`, no stylesheet or script from elsewhere, no link off the page but to its figures'
/// own files beside it), and no style fetches a resource (`url(`, `@import`).
#[test]
fn the_report_is_self_contained() {
    let dir = folder("offline", Some(&jsonl(&demo_sweep(true))));
    common::assert_success(&bytepath().arg("report").arg(&dir).output().unwrap());
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let page = common::parse_xhtml(&html);
    let mut elements = 0;
    for node in page.descendants().filter(|n| n.is_element()) {
        elements += 1;
        let name = node.tag_name().name();
        assert!(
            !matches!(name, "link" | "iframe" | "object" | "embed"),
            "<{name}>"
        );
        for attr in node.attributes() {
            let off_page = match attr.name() {
                "src" | "srcset" | "data" => true,
                // The figures' own files beside it (figure_files) are links, not loads.
                "href" if attr.value().starts_with("figures/") => {
                    assert!(dir.join(attr.value()).is_file(), "{}", attr.value());
                    false
                }
                "href" => !attr.value().starts_with('#'),
                _ => false,
            };
            assert!(!off_page, "<{name} {}=\"{}\">", attr.name(), attr.value());
        }
        if let Some(text) = node.text() {
            assert!(
                !text.contains("url(") && !text.contains("@import"),
                "<{name}>: {text}"
            );
        }
    }
    assert!(
        elements > 100,
        "a whole report was read ({elements} elements)"
    );
    assert!(html.contains("<svg"), "its plots are inline SVG");
}

#[test]
fn output_flag_puts_the_html_there_and_the_markdown_beside_it() {
    let dir = folder(
        "output-flag",
        Some(&jsonl(&[Shape::stream("copy", 4096, 1, 10.0)])),
    );
    let target = dir.join("elsewhere");
    std::fs::create_dir_all(&target).unwrap();
    let html = target.join("mine.html");
    bytepath()
        .arg("report")
        .arg(&dir)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    assert!(html.exists() && target.join("report.md").exists());
    assert!(!dir.join("report.html").exists());
}

fn assert_bad_input(dir: &Path, expected: &str) {
    std::fs::write(dir.join("report.html"), "old").ok();
    let out = bytepath().arg("report").arg(dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(expected), "{stderr}");
    if dir.exists() {
        assert_eq!(
            std::fs::read_to_string(dir.join("report.html")).unwrap(),
            "old"
        );
        assert!(!dir.join("report.md").exists());
    }
}

#[test]
fn a_missing_folder_is_exit_2() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-no-such-folder");
    let _ = std::fs::remove_dir_all(&dir);
    let out = bytepath().arg("report").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such folder"));
}

#[test]
fn a_folder_without_results_is_exit_2() {
    assert_bad_input(&folder("no-results", None), "results.jsonl: not found");
}

#[test]
fn a_newer_schema_is_exit_2_naming_the_line() {
    let now = bytepath::record::SCHEMA_VERSION;
    let newer = jsonl(&[Shape::stream("gather", 4096, 1, 10.0)]).replacen(
        &format!("\"schema_version\":{now}"),
        &format!("\"schema_version\":{}", now + 1),
        1,
    );
    let newer = jsonl(&[Shape::stream("copy", 4096, 1, 10.0)]) + &newer;
    assert_bad_input(
        &folder("newer-schema", Some(&newer)),
        &format!(
            "results.jsonl:2: schema_version {}; this bytepath reads 1 to {now}",
            now + 1
        ),
    );
}

#[test]
fn an_unparsable_line_is_exit_2_naming_the_line() {
    let text = jsonl(&[Shape::stream("copy", 4096, 1, 10.0)]) + "{\"truncated\": \n";
    assert_bad_input(
        &folder("unparsable", Some(&text)),
        "results.jsonl:2: not a JSON record",
    );
}

/// Real records: several `bytepath run --json` points written into results.jsonl by hand.
#[test]
fn a_folder_of_real_run_records_renders() {
    let mut lines = String::new();
    for (mechanism, size) in [
        ("copy", "1K"),
        ("gather", "1K"),
        ("copy", "16K"),
        ("gather", "16K"),
        ("copy", "64K"),
    ] {
        let (json, code) = common::run_json(&["-m", mechanism, "-s", size, "--pin", "cross"]);
        assert_eq!(code, 0, "{json}");
        lines.push_str(&json.to_string());
        lines.push('\n');
    }
    let (rr, _) = common::run_json(&["-m", "copy", "-s", "1K", "-p", "rr"]);
    lines.push_str(&rr.to_string());
    lines.push('\n');
    let dir = folder("real", Some(&lines));
    bytepath().arg("report").arg(&dir).assert().success();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let plots = points_per_plot(&html);
    assert_eq!(plots[0], ("throughput".to_string(), 5));
    assert_eq!(plots[1], ("latency".to_string(), 2), "rr p50 and p99");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // The points table: a header and a row per point (tcp runs add a table of their own).
    let points = md.split("\n## Points\n").nth(1).expect("a points table");
    let rows = points.lines().take_while(|l| !l.starts_with("## "));
    assert_eq!(rows.filter(|l| l.starts_with("| ")).count(), 7);
    assert!(md.contains("## What limited each flow? (per flow and side)"));
    if lines.contains("\"statistics\"") {
        assert!(md.contains("At 1 thread: "), "{md}");
    } else {
        assert!(md.contains("no statistics block"), "{md}");
    }
}

#[test]
fn a_margin_other_than_the_studys_is_stated_and_recorded_in_the_folder() {
    let dir = folder("margin-change", Some(&jsonl(&demo_sweep(true))));
    let report = |margin: Option<&str>| {
        let mut cmd = bytepath();
        cmd.arg("report").arg(&dir);
        if let Some(m) = margin {
            cmd.args(["--margin", m]);
        }
        common::assert_success(&cmd.output().unwrap());
        std::fs::read_to_string(dir.join("report.md")).unwrap()
    };
    let changes = || -> Vec<serde_json::Value> {
        match std::fs::read_to_string(dir.join("margin_changes.json")) {
            Ok(text) => serde_json::from_str(&text).unwrap(),
            Err(_) => Vec::new(),
        }
    };
    // The study's own margin (none recorded: the default ±5 %) says nothing and records nothing.
    assert!(!report(Some("5%")).contains("Re-judged"));
    assert!(changes().is_empty());
    let md = report(Some("2%"));
    assert!(
        md.contains(
            "Re-judged at ±2 %; the study was run with ±5 %: a margin chosen after the data"
        ),
        "{md}"
    );
    assert!(md.contains("\"equivalent within ±2 %\""), "{md}");
    let recorded = changes();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0]["from"], 0.05);
    assert_eq!(recorded[0]["to"], 0.02);
    assert!(recorded[0]["unix_s"].as_u64().unwrap() > 1_600_000_000);
    // A plain report is the study's margin again; the folder keeps the change.
    assert!(!report(None).contains("Re-judged"));
    assert_eq!(changes().len(), 1);
}
