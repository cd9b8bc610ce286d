//! `bytepath export DIR --format openmetrics|csv|json`: the records of any results folder
//! (sweep, ipc, file, servers, mesh) in a format other tools read. The folder is read as
//! `bytepath report` reads it (its marker's kind, then its records through `record` and the
//! study's own loading); the figures are the ones the records hold, never recomputed, except
//! where a study's records are its visits (file repetitions, servers and mesh visits): those
//! are averaged per point as the study's report does.
use crate::error::{ConfigError, Error};
use crate::report::study_kind::StudyKind;
use crate::report::{csv, openmetrics, study};
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

/// Which study wrote a folder, as its marker says; a kind this bytepath does not know is
/// read as run records, one per point, as sweep and ipc write them.
fn kind_of(dir: &Path) -> Result<StudyKind, Error> {
    let kind = study::kind(dir).ok_or_else(|| {
        ConfigError(format!(
            "{}: not a bytepath results folder (no readable {}); give a folder written by sweep, ipc, file, servers or mesh",
            dir.display(),
            crate::report::folder::MARKER
        ))
    })?;
    Ok(StudyKind::from_marker(&kind).unwrap_or(StudyKind::Sweep))
}

/// The folder's records in `format`.
pub fn export(dir: &Path, format: Format) -> Result<String, Error> {
    let kind = kind_of(dir)?;
    let file = crate::record::read_results_file(dir)?;
    // JSON and CSV pass each record through as written; OpenMetrics reads its figures.
    Ok(match format {
        Format::Json => file
            .lines
            .iter()
            .map(|l| format!("{}\n", l.record))
            .collect(),
        Format::Csv => {
            let columns = match kind {
                StudyKind::Sweep | StudyKind::Ipc => csv::columns(),
                StudyKind::File => crate::file::record::csv_columns(),
                StudyKind::Servers => crate::servers::record::csv_columns(),
                StudyKind::Mesh => crate::mesh::columns(),
            };
            let records: Vec<Value> = file.lines.into_iter().map(|l| l.record).collect();
            csv::to_csv_with(&columns, &records)
        }
        Format::OpenMetrics => openmetrics::render(&match kind {
            StudyKind::Sweep | StudyKind::Ipc => openmetrics::run::samples(dir, &file)?,
            StudyKind::Mesh => crate::mesh::openmetrics::samples(dir, &file)?,
            StudyKind::Servers => crate::servers::openmetrics::samples(dir, &file)?,
            StudyKind::File => crate::file::openmetrics::samples(dir, &file)?,
        }),
    })
}
