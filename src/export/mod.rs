//! `bytepath export DIR --format openmetrics|csv|json`: the records of any results folder
//! in a format other tools read. The folder's study is found as `bytepath report` finds it,
//! by its marker's kind in the list of studies it is handed (`studies::STUDIES`); its records
//! are read through `record`, and the study's descriptor gives their CSV columns and their
//! OpenMetrics samples (built in the study's folder, with the kit in `report::openmetrics`).
//! The figures are the ones the records hold, never recomputed, except where a study's
//! records are its visits (file repetitions, servers and mesh visits): those are averaged per
//! point as the study's report does.
pub(crate) mod histogram;

use crate::error::{ConfigError, Error};
use crate::report::{csv, openmetrics, study};
use crate::study::StudyKind;
use serde_json::Value;
use std::path::Path;

/// What `--format` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    Csv,
    Json,
}

impl std::str::FromStr for Format {
    type Err = ConfigError;
    fn from_str(text: &str) -> Result<Format, ConfigError> {
        match text {
            "openmetrics" => Ok(Format::OpenMetrics),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            other => Err(ConfigError(format!(
                "--format {other}: not a format export writes; allowed: openmetrics, csv, json"
            ))),
        }
    }
}

/// Which study among `studies` reads a folder, as its marker says; a kind none of them
/// writes is read as run records, one per point, as sweep and ipc write them.
fn kind_of(studies: &[StudyKind], dir: &Path) -> Result<StudyKind, Error> {
    let kind = study::kind(dir).ok_or_else(|| {
        let commands: Vec<&str> = studies.iter().map(|s| s.command()).collect();
        ConfigError(format!(
            "{}: not a bytepath results folder (no readable {}); give a folder written by {}",
            dir.display(),
            crate::report::folder::MARKER,
            in_words(&commands)
        ))
    })?;
    Ok(StudyKind::reading(studies, Some(&kind)))
}

/// "a", "a or b", "a, b or c": the commands as the refusal names them.
fn in_words(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [only] => only.to_string(),
        [first @ .., last] => format!("{} or {last}", first.join(", ")),
    }
}

/// The folder's records in `format`, as the study among `studies` that wrote it gives them.
pub fn export(studies: &[StudyKind], dir: &Path, format: Format) -> Result<String, Error> {
    let kind = kind_of(studies, dir)?;
    let file = crate::record::read_results_file(dir)?;
    // JSON and CSV pass each record through as written; OpenMetrics reads its figures.
    Ok(match format {
        Format::Json => file
            .lines
            .iter()
            .map(|l| format!("{}\n", l.record))
            .collect(),
        Format::Csv => {
            let records: Vec<Value> = file.lines.into_iter().map(|l| l.record).collect();
            csv::to_csv_with(&(kind.csv_columns)(), &records)
        }
        Format::OpenMetrics => openmetrics::render(&(kind.samples)(dir, &file)?),
    })
}

/// The studies whose records carry each side's latency histogram (run records).
const KEEP_HISTOGRAMS: [&str; 2] = ["sweep", "ipc"];

/// `--histogram`: each point's histogram written as files under `dir/histograms/`; a folder of
/// a study whose records keep none is refused, naming the ones that do.
pub fn export_histograms(studies: &[StudyKind], dir: &Path) -> Result<histogram::Written, Error> {
    let kind = kind_of(studies, dir)?;
    if !KEEP_HISTOGRAMS.contains(&kind.command()) {
        return Err(ConfigError(format!(
            "--histogram with {}: a {} folder keeps no latency histogram; allowed: a folder written by {}",
            dir.display(),
            kind.command(),
            in_words(&KEEP_HISTOGRAMS)
        ))
        .into());
    }
    histogram::write(dir)
}
