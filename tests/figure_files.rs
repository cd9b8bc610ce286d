//! Every figure as a file, end to end: a small real sweep (2 mechanisms × 2 sizes × 1 and 2
//! threads, short visits) writes figures/NAME.svg, .png and .csv beside its report, the seeds'
//! four plots among them; the throughput CSV holds the records' own numbers; each PNG decodes
//! at its stated size; report.html and report.md link every file; `bytepath report` writes
//! them again.
mod common;

use common::folders::{csv_rows, png_size, records};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The seeds' four plots, as the seeds name them.
const SEEDS: [&str; 4] = [
    "throughput_vs_size",
    "latency_vs_threads",
    "cache_misses_vs_size",
    "cycles_per_byte",
];

/// Runs the sweep once for every test here and returns its folder.
fn sweep() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("figure-files-sweep");
        let args = ["--mechanisms", "send,gather", "--sizes", "256,4K"];
        common::folders::short_sweep(
            &dir,
            &[&args[..], &["--threads", "1,2", "--seed", "11"]].concat(),
        );
        dir
    })
}

#[test]
fn the_seeds_four_figures_are_files_and_each_png_decodes() {
    let figures = sweep().join("figures");
    for seed in SEEDS {
        for ext in ["svg", "png", "csv"] {
            let path = figures.join(format!("{seed}.{ext}"));
            assert!(path.is_file(), "{} is missing", path.display());
        }
        let svg = std::fs::read_to_string(figures.join(format!("{seed}.svg"))).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("a well-formed SVG");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let (w, h) = png_size(&figures.join(format!("{seed}.png")));
        assert_eq!(w, 1200, "{seed}.png");
        assert!(h > 200, "{seed}.png is {w}×{h}");
    }
    // Every figure drawn has all three files, and nothing else is there.
    let names: BTreeSet<String> = std::fs::read_dir(&figures)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let stems: BTreeSet<&str> = names
        .iter()
        .filter_map(|n| n.strip_suffix(".svg"))
        .collect();
    for stem in &stems {
        for ext in ["png", "csv"] {
            assert!(
                names.contains(&format!("{stem}.{ext}")),
                "{stem}.{ext}: {names:?}"
            );
        }
    }
    assert_eq!(names.len(), 3 * stems.len(), "{names:?}");
}

#[test]
fn the_throughput_csv_holds_the_records_numbers() {
    let dir = sweep();
    let (header, rows) = csv_rows(&dir.join("figures/throughput_vs_size.csv"));
    assert_eq!(
        header,
        [
            "panel",
            "series",
            "message size (bytes)",
            "Gbit/s",
            "Gbit/s CI low",
            "Gbit/s CI high"
        ]
    );
    let records = records(dir);
    assert_eq!(records.len(), 8);
    assert_eq!(rows.len(), records.len(), "a row per point");
    for r in &records {
        let (mechanism, size, threads) = (
            r["config"]["mechanism"].as_str().unwrap(),
            r["config"]["message_size_bytes"].as_u64().unwrap(),
            r["config"]["threads"].as_u64().unwrap(),
        );
        let panel = if threads == 1 {
            "1 thread".to_string()
        } else {
            format!("{threads} threads")
        };
        let row = rows
            .iter()
            .find(|row| row[0] == panel && row[1] == mechanism && row[2] == size.to_string())
            .unwrap_or_else(|| panic!("no row for {mechanism} {size} {panel}: {rows:?}"));
        let summary = &r["statistics"]["summary"];
        let figures: Vec<f64> = row[3..6].iter().map(|v| v.parse().unwrap()).collect();
        let recorded: Vec<f64> = ["mean", "ci95_low", "ci95_high"]
            .iter()
            .map(|k| {
                summary[k]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{k} in {summary}"))
            })
            .collect();
        assert_eq!(figures, recorded, "{mechanism} {size} {panel}");
    }
}

/// Cycles per byte: rows where the counters counted, else a figure that says why and a CSV
/// of its header alone (this VM has no PMU; a machine with one gets the rows).
#[test]
fn cycles_per_byte_holds_its_rows_or_says_why_not() {
    let dir = sweep();
    let (header, rows) = csv_rows(&dir.join("figures/cycles_per_byte.csv"));
    assert_eq!(header[..3], ["panel", "series", "message size (bytes)"]);
    let svg = std::fs::read_to_string(dir.join("figures/cycles_per_byte.svg")).unwrap();
    let reasons: Vec<String> = records(dir)
        .iter()
        .flat_map(|r| r["sides"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| {
            s["counters"]["cycles_unavailable_reason"]
                .as_str()
                .map(String::from)
        })
        .collect();
    if reasons.is_empty() {
        println!("cycles were counted here: checking the rows");
        assert_eq!(rows.len(), 8);
        assert_eq!(header[3], "cycles / byte");
    } else {
        assert!(rows.is_empty(), "{rows:?}");
        assert!(svg.contains("cycles per byte were not measured"), "{svg}");
        let reason = reasons[0].replace('&', "&amp;").replace('<', "&lt;");
        let first_words: String = reason
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(svg.contains(&first_words), "{first_words} not in {svg}");
    }
}

#[test]
fn both_reports_link_every_figure_file() {
    let dir = sweep();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let page = common::parse_xhtml(&html);
    let hrefs: BTreeSet<&str> = page
        .descendants()
        .filter(|n| n.has_tag_name("a"))
        .filter_map(|n| n.attribute("href"))
        .filter(|h| h.starts_with("figures/"))
        .collect();
    let files: BTreeSet<String> = std::fs::read_dir(dir.join("figures"))
        .unwrap()
        .map(|e| format!("figures/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    assert_eq!(
        hrefs.iter().map(|h| h.to_string()).collect::<BTreeSet<_>>(),
        files
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for file in &files {
        assert!(
            md.contains(&format!("]({file})")),
            "report.md does not link {file}"
        );
    }
    assert!(md.contains(
        "[SVG](figures/latency_vs_threads.svg) · [PNG](figures/latency_vs_threads.png) · \
         [CSV](figures/latency_vs_threads.csv)"
    ));
}

#[test]
fn report_writes_the_figure_files_again() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("figure-files-again");
    let results = std::fs::read_to_string(sweep().join("results.jsonl")).unwrap();
    common::folders::report_of(&dir, &results);
    for seed in SEEDS {
        let again = std::fs::read(dir.join(format!("figures/{seed}.csv"))).unwrap();
        let first = std::fs::read(sweep().join(format!("figures/{seed}.csv"))).unwrap();
        assert_eq!(again, first, "{seed}.csv");
        assert!(dir.join(format!("figures/{seed}.png")).is_file());
    }
}
