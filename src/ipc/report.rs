//! The ipc report: report.html, report.md and answers.json from the folder's point records,
//! with ipc's own questions (`answers::IPC`) on the run-record report kit (`report::write`).
use super::answers::IPC;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// Writes the report of the ipc folder `dir` (into `output` when given; judged at `margin`,
/// `report --margin`, in place of the study's); returns its HTML path.
pub fn write(dir: &Path, output: Option<&Path>, margin: Option<f64>) -> Result<PathBuf, Error> {
    crate::report::write::reports_within(dir, output, &IPC, margin)
}
