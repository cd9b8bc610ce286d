//! `bytepath report DIR`: the study that wrote the folder renders it again, found by its
//! marker's kind in `studies::STUDIES`: a sweep or an ipc folder gets the run-record report
//! with its questions, a file, servers or mesh folder its study's own. A folder whose marker
//! is unreadable, or names a kind no study writes, goes to the sweep's, whose run-record
//! reader says why. The report kit itself never asks which study wrote a folder.
use crate::cli::ReportArgs;
use crate::error::{Error, Status};
use crate::study::{ReportOptions, StudyKind};
use std::path::PathBuf;

/// `bytepath report DIR`: re-render report.html and report.md from saved results.
pub fn command(args: &ReportArgs) -> Result<Status, Error> {
    let html = render(&crate::studies::STUDIES, args)?;
    println!("report: {}", html.display());
    Ok(Status::Success)
}

/// The folder's report, rendered again by the study among `studies` that reads it; the HTML
/// path.
pub(crate) fn render(studies: &[StudyKind], args: &ReportArgs) -> Result<PathBuf, Error> {
    let options = ReportOptions {
        output: args.output.clone(),
        margin: args
            .margin
            .as_deref()
            .map(|m| crate::config::parse_percent("--margin", m, 50.0))
            .transpose()?,
    };
    let marker = crate::report::study::kind(&args.dir);
    let study = StudyKind::reading(studies, marker.as_deref());
    (study.render)(&args.dir, &options)
}
