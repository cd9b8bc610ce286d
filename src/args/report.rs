//! `bytepath report DIR`: which report a results folder gets. A folder written by a
//! single-study command (`file`, `servers`, `mesh`) holds that study's records and is
//! rendered by its study; an ipc folder gets the run-record report with ipc's questions, any
//! other (a sweep, a run) the sweep's. The report kit itself never asks which study wrote a
//! folder.
use crate::cli::ReportArgs;
use crate::error::{ConfigError, Error, Status};
use crate::report::{study, write_reports};
use std::path::Path;

/// `bytepath report DIR`: re-render report.html and report.md from saved results.
pub fn command(args: &ReportArgs) -> Result<Status, Error> {
    let html = match study_kind(&args.dir) {
        Some(kind) => {
            if args.output.is_some() {
                return Err(Error::Config(ConfigError(format!(
                    "--output: a {kind} folder's report is written into the folder itself; leave --output out"
                ))));
            }
            match kind {
                StudyKind::File => crate::file::report::rerender(&args.dir)?,
                StudyKind::Servers => crate::servers::report::rerender(&args.dir)?,
                StudyKind::Mesh => crate::mesh::report::rerender(&args.dir)?,
            }
        }
        None if study::kind(&args.dir).as_deref() == Some(crate::ipc::IPC_KIND) => {
            crate::report::write::reports(
                &args.dir,
                args.output.as_deref(),
                &crate::ipc::answers::IPC,
            )?
        }
        None => write_reports(&args.dir, args.output.as_deref())?,
    };
    println!("report: {}", html.display());
    Ok(Status::Success)
}

/// A results folder written by a single-study command: its records are that study's
/// (transfers, server points), not runs, and it renders its own report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StudyKind {
    File,
    Servers,
    Mesh,
}

impl std::fmt::Display for StudyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StudyKind::File => "file study",
            StudyKind::Servers => "servers study",
            StudyKind::Mesh => "mesh",
        })
    }
}

/// Which study wrote `dir`, as its marker's kind says; None for sweeps and run folders.
fn study_kind(dir: &Path) -> Option<StudyKind> {
    match study::kind(dir)?.as_str() {
        crate::file::FILE_KIND => Some(StudyKind::File),
        crate::servers::record::SERVERS_KIND => Some(StudyKind::Servers),
        crate::mesh::MESH_KIND => Some(StudyKind::Mesh),
        _ => None,
    }
}
