//! A study described once: what makes a results folder its own (the marker's `kind`), its name
//! in messages, the command that runs it, and what the commands that read its folders ask of
//! it (its report, its CSV columns, its OpenMetrics samples). Each study's folder holds its
//! descriptor, beside its `Study`; `studies::STUDIES` lists them, and `bytepath report` and
//! `bytepath export` are handed that list and find a folder's study in it by its marker. A
//! study is its descriptor: `StudyKind` is a handle to one, compared by its marker's kind.
use super::ReportOptions;
use crate::error::Error;
use crate::record::ResultsFile;
use crate::report::csv::Column;
use crate::report::marker::SWEEP_KIND;
use crate::report::openmetrics::Sample;
use std::path::{Path, PathBuf};

/// Everything bytepath asks of one study outside its own folder.
pub struct StudyDescriptor {
    /// The marker's `kind`: what makes a folder this study's ("bytepath file results").
    pub marker: &'static str,
    /// The study in a message's words ("a file study folder's report …").
    pub name: &'static str,
    /// The command that runs it, as the `--json-stream` start line and `export`'s refusal
    /// name it.
    pub command: &'static str,
    /// Renders a folder of this study again (`bytepath report DIR`, the study's
    /// `Study::render`); the HTML path.
    pub render: fn(&Path, &ReportOptions) -> Result<PathBuf, Error>,
    /// `export --format csv`: the columns of its records.
    pub csv_columns: fn() -> Vec<Column>,
    /// `export --format openmetrics`: the samples of a folder of this study, whose
    /// results.jsonl `export` has read (every record's schema checked).
    pub samples: fn(&Path, &ResultsFile) -> Result<Vec<Sample>, Error>,
}

/// A study: a handle to its descriptor (compared by the marker's kind it writes).
#[derive(Clone, Copy)]
pub struct StudyKind(&'static StudyDescriptor);

impl StudyKind {
    pub const fn new(descriptor: &'static StudyDescriptor) -> StudyKind {
        StudyKind(descriptor)
    }

    /// The marker's `kind`: what makes a folder this study's.
    pub fn marker(self) -> &'static str {
        self.0.marker
    }

    /// The study in a message's words.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The command that runs it.
    pub fn command(self) -> &'static str {
        self.0.command
    }

    /// The study among `studies` whose folders' markers say `marker`.
    pub fn among(studies: &[StudyKind], marker: &str) -> Option<StudyKind> {
        studies.iter().copied().find(|s| s.marker() == marker)
    }

    /// The study among `studies` that reads a folder whose marker says `marker` (`None`: it
    /// has no readable marker): the study that wrote it, else the sweep. A folder of a kind
    /// none of them writes is read as run records, one per point, as a sweep writes them;
    /// and where the marker does not read, the sweep's run-record reader says what is
    /// missing.
    pub fn reading(studies: &[StudyKind], marker: Option<&str>) -> StudyKind {
        marker
            .and_then(|m| StudyKind::among(studies, m))
            .or_else(|| StudyKind::among(studies, SWEEP_KIND))
            .expect("the sweep is among the studies")
    }
}

impl std::ops::Deref for StudyKind {
    type Target = StudyDescriptor;
    fn deref(&self) -> &StudyDescriptor {
        self.0
    }
}

impl PartialEq for StudyKind {
    fn eq(&self, other: &StudyKind) -> bool {
        self.marker() == other.marker()
    }
}

impl Eq for StudyKind {}

impl std::fmt::Debug for StudyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.command())
    }
}
