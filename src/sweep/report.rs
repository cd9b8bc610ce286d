//! The sweep's report: report.html, report.md and answers.json from its folder's point records,
//! with the sweep's questions (`answers::QUESTIONS`) on the run-record report kit.
use super::answers::QUESTIONS;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// Renders `dir/results.jsonl` into report.html (at `html_out`, default `dir/report.html`) and
/// report.md beside it; returns the HTML path. `margin` (a share) replaces the equivalence
/// margin the sweep recorded.
pub fn write(dir: &Path, html_out: Option<&Path>, margin: Option<f64>) -> Result<PathBuf, Error> {
    crate::report::write::reports_within(dir, html_out, &QUESTIONS, margin)
}
