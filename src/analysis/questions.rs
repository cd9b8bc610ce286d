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
    /// The method text's sentence on which tests are one family and how each family is
    /// controlled: the study's own, so no report describes another study's families.
    pub families: &'static str,
}
