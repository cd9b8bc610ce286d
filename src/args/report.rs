//! `bytepath report DIR`: the study that wrote the folder renders it again (`studies`): a
//! sweep or an ipc folder gets the run-record report with its questions, a file, servers or
//! mesh folder its study's own. A folder whose marker is unreadable goes to the sweep's, whose
//! run-record reader says why. The report kit itself never asks which study wrote a folder.
use crate::cli::ReportArgs;
use crate::error::{Error, Status};
use crate::report::study_kind::StudyKind;
use crate::study::ReportOptions;

/// `bytepath report DIR`: re-render report.html and report.md from saved results.
pub fn command(args: &ReportArgs) -> Result<Status, Error> {
    let options = ReportOptions {
        output: args.output.clone(),
        margin: args
            .margin
            .as_deref()
            .map(|m| crate::config::parse_percent("--margin", m, 50.0))
            .transpose()?,
    };
    let study = crate::studies::of_folder(&args.dir)
        .unwrap_or_else(|| crate::studies::of(StudyKind::Sweep));
    let html = (study.render)(&args.dir, &options)?;
    println!("report: {}", html.display());
    Ok(Status::Success)
}
