//! `bytepath report DIR`: which report a results folder gets. A folder written by a
//! single-study command (`file`, `servers`, `mesh`) holds that study's records and is
//! rendered by its study; an ipc folder gets the run-record report with ipc's questions, any
//! other (a sweep, a run) the sweep's. The report kit itself never asks which study wrote a
//! folder.
use crate::cli::ReportArgs;
use crate::error::{bad, Error, Status};
use crate::report::study_kind::StudyKind;
use crate::sweep::report::write as write_reports;

/// `bytepath report DIR`: re-render report.html and report.md from saved results.
pub fn command(args: &ReportArgs) -> Result<Status, Error> {
    let kind = crate::report::study::study_kind(&args.dir);
    let html = match kind {
        Some(kind) if !kind.writes_run_records() => {
            if args.output.is_some() {
                return Err(bad(format!(
                    "--output: a {} folder's report is written into the folder itself; leave --output out",
                    kind.name()
                )));
            }
            match kind {
                StudyKind::File => crate::file::report::rerender(&args.dir)?,
                StudyKind::Servers => crate::servers::report::rerender(&args.dir)?,
                StudyKind::Mesh => crate::mesh::report::rerender(&args.dir)?,
                StudyKind::Sweep | StudyKind::Ipc => unreachable!("run-record folders"),
            }
        }
        Some(StudyKind::Ipc) => crate::ipc::report::write(&args.dir, args.output.as_deref())?,
        // A sweep, or a folder whose marker is unreadable: the run-record reader says why.
        _ => write_reports(
            &args.dir,
            args.output.as_deref(),
            args.margin
                .as_deref()
                .map(|m| crate::config::parse_percent("--margin", m, 50.0))
                .transpose()?,
        )?,
    };
    println!("report: {}", html.display());
    Ok(Status::Success)
}
