//! The shape of the questions a report of run records opens with, and its title: each study
//! that writes run records gives its own (`sweep::answers`, `ipc::answers`), so no report shows
//! another study's questions. The type lives here, below the report kit, which renders whichever
//! questions it is given.
use super::tested::TestedAnswer;
use super::{Answer, Dataset};

pub struct Questions {
    pub title: &'static str,
    pub answers: fn(&Dataset) -> Vec<Answer>,
    /// The families of tests behind the answers, cell by cell (answers.json carries them).
    pub tested: fn(&Dataset) -> Vec<TestedAnswer>,
    /// What a question's family of tests is in this study and how it is held: the method's
    /// CI rule states it after the three states every comparison takes.
    pub families: &'static str,
    /// Answers that compare many pairs, as compact tables: rendered under their answer in
    /// report.md and report.html in place of its detail lines (none for most studies).
    pub tables: fn(&Dataset) -> Vec<super::pairs_table::PairsTable>,
}

/// For studies whose answers need no pairs table.
pub fn no_tables(_: &Dataset) -> Vec<super::pairs_table::PairsTable> {
    Vec::new()
}
