//! A sixth study, defined in this test module only (its descriptor: its marker's kind, its
//! report, its CSV columns and its OpenMetrics samples), handed to the same code production
//! hands `studies::STUDIES`: `bytepath report DIR` renders a tally folder with the tally's
//! report, and `bytepath export DIR` gives its records in the tally's columns and samples, each
//! found by the folder's marker. Adding a study to bytepath is its own folder and its line in
//! that list (and its command line); this shows that reading its folders needs nothing else.
use super::report::render;
use crate::cli::{Cli, Command, ReportArgs};
use crate::error::Error;
use crate::export::{export, Format};
use crate::record::{ResultsFile, SCHEMA_VERSION};
use crate::report::csv::{self, Cell, Column};
use crate::report::folder::{file_error, Marker, MARKER, RESULTS_JSONL};
use crate::report::openmetrics::point::{labels, typed};
use crate::report::openmetrics::{Family, Sample};
use crate::studies::STUDIES;
use crate::study::{ReportOptions, StudyDescriptor, StudyKind};
use clap::Parser;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A tally's record: how many of an item it counted.
#[derive(serde::Deserialize)]
struct Counted {
    item: String,
    count: f64,
}

const COUNTED: Family = Family {
    name: "tally_counted",
    unit: "items",
    help: "Items a tally counted",
};

/// The tally's report: one line saying how many records its folder holds, written into the
/// folder (as the file, servers and mesh studies write theirs).
fn tally_report(dir: &Path, options: &ReportOptions) -> Result<PathBuf, Error> {
    options.folder_only(TALLY)?;
    let records: Vec<Value> = crate::report::study::records(dir)?;
    let html = dir.join("report.html");
    std::fs::write(
        &html,
        format!("<p>a tally of {} records</p>", records.len()),
    )
    .map_err(file_error(&html))?;
    Ok(html)
}

fn tally_columns() -> Vec<Column> {
    csv::fixed(&[
        ("item", "/item", Cell::Scalar),
        ("count", "/count", Cell::Scalar),
    ])
}

fn tally_samples(dir: &Path, file: &ResultsFile) -> Result<Vec<Sample>, Error> {
    let records: Vec<Counted> = typed(dir, file)?;
    Ok(records
        .into_iter()
        .map(|r| Sample {
            family: COUNTED,
            labels: labels(&[("item", r.item)]),
            value: r.count,
        })
        .collect())
}

static TALLY_DESCRIPTOR: StudyDescriptor = StudyDescriptor {
    marker: "bytepath tally results",
    name: "tally study",
    command: "tally",
    render: tally_report,
    csv_columns: tally_columns,
    samples: tally_samples,
};

const TALLY: StudyKind = StudyKind::new(&TALLY_DESCRIPTOR);

/// bytepath's studies and the tally, last.
fn with_tally() -> Vec<StudyKind> {
    let mut list = STUDIES.to_vec();
    list.push(TALLY);
    list
}

/// A tally's folder, as a tally study would leave it: its marker and two records.
fn tally_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let marker = Marker::new(TALLY.marker(), json!({}), json!({}), 2, "as listed");
    std::fs::write(dir.path().join(MARKER), marker.to_value().to_string()).unwrap();
    let records = [("apples", 3), ("pears", 5)]
        .map(|(item, count)| {
            let record = json!({"schema_version": SCHEMA_VERSION, "item": item, "count": count});
            format!("{record}\n")
        })
        .concat();
    std::fs::write(dir.path().join(RESULTS_JSONL), records).unwrap();
    dir
}

/// `bytepath report DIR …` as the command line parses it.
fn report_args(dir: &Path, more: &[&str]) -> ReportArgs {
    let line = [&["bytepath", "report", dir.to_str().unwrap()][..], more].concat();
    match Cli::try_parse_from(line).unwrap().command {
        Command::Report(args) => args,
        other => panic!("not the report command: {other:?}"),
    }
}

#[test]
fn report_renders_a_folder_by_the_study_its_marker_names() {
    let folder = tally_folder();
    let dir = folder.path();
    let marker = crate::report::study::kind(dir);
    assert_eq!(StudyKind::reading(&with_tally(), marker.as_deref()), TALLY);
    // Without it in the list, the folder is of a kind no study writes: the sweep reads it.
    assert_eq!(
        StudyKind::reading(&STUDIES, marker.as_deref()),
        crate::sweep::KIND
    );
    let html = render(&with_tally(), &report_args(dir, &[])).unwrap();
    assert_eq!(html, dir.join("report.html"));
    assert_eq!(
        std::fs::read_to_string(&html).unwrap(),
        "<p>a tally of 2 records</p>"
    );
    let elsewhere = dir.join("elsewhere.html");
    let refused = render(
        &with_tally(),
        &report_args(dir, &["--output", elsewhere.to_str().unwrap()]),
    )
    .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "--output: a tally study folder's report is written into the folder itself; leave --output out"
    );
}

#[test]
fn export_gives_a_folder_in_the_columns_and_samples_of_the_study_its_marker_names() {
    let folder = tally_folder();
    let dir = folder.path();
    let studies = with_tally();
    assert_eq!(
        export(&studies, dir, Format::Csv).unwrap(),
        "item,count\napples,3\npears,5\n"
    );
    assert_eq!(
        export(&studies, dir, Format::OpenMetrics).unwrap(),
        "# HELP bytepath_tally_counted_items Items a tally counted.\n\
         # TYPE bytepath_tally_counted_items gauge\n\
         # UNIT bytepath_tally_counted_items items\n\
         bytepath_tally_counted_items{item=\"apples\"} 3.0\n\
         bytepath_tally_counted_items{item=\"pears\"} 5.0\n\
         # EOF\n"
    );
    let json = export(&studies, dir, Format::Json).unwrap();
    let items: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["item"].clone())
        .collect();
    assert_eq!(items, [json!("apples"), json!("pears")]);
    // Production's list reads the folder as run records: the run-record columns, no tally.
    let as_runs = export(&STUDIES, dir, Format::Csv).unwrap();
    assert!(
        as_runs.starts_with(&csv::to_csv(&[])) && !as_runs.contains("apples,3"),
        "{as_runs}"
    );
}

#[test]
fn export_names_the_studies_of_its_list_when_a_folder_has_no_marker() {
    let empty = tempfile::tempdir().unwrap();
    let refused = export(&with_tally(), empty.path(), Format::Json).unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!(
            "{}: not a bytepath results folder (no readable {MARKER}); give a folder written by sweep, ipc, file, servers, mesh or tally",
            empty.path().display()
        )
    );
}
