//! The tests behind an answer, cell by cell, for `answers.json`: each cell's verdict state and
//! the interval its test used, and the family the answer controlled (how many tests, which
//! correction and why), so a reader or a re-run can check every claim without the report.
use crate::stats::verdict::{Correction, Family, Judged, Verdict};

/// One cell (a size at a thread count, a point, a pair) of an answer's family: its name and
/// its test's outcome (state, ratio, both intervals, raw and adjusted p), as `Judged` holds it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Cell {
    pub cell: String,
    #[serde(flatten)]
    pub judged: Judged,
}

impl Cell {
    pub fn new(cell: String, j: &Judged) -> Cell {
        Cell { cell, judged: *j }
    }
}

/// An answer's family of tests.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TestedAnswer {
    pub question: &'static str,
    pub tests: usize,
    pub correction: Correction,
    /// Why this correction suits the question.
    pub why_correction: &'static str,
    pub margin: f64,
    pub alpha: f64,
    pub cells: Vec<Cell>,
}

impl TestedAnswer {
    pub fn new(
        question: &'static str,
        family: &Family,
        why_correction: &'static str,
        cells: Vec<Cell>,
    ) -> TestedAnswer {
        TestedAnswer {
            question,
            tests: family.tests,
            correction: family.correction,
            why_correction,
            margin: family.margin,
            alpha: family.alpha,
            cells,
        }
    }

    /// How many cells ended in `state`.
    pub fn count(&self, state: Verdict) -> usize {
        self.cells
            .iter()
            .filter(|c| c.judged.state == state)
            .count()
    }
}
