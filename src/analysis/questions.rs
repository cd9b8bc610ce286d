//! The questions a report of run records opens with, and its title: each study that writes run
//! records (sweep, ipc) gives its own, so no report shows another study's questions. They live
//! here, beside the sweep's answers, so the report's writers (html, markdown, write) all read
//! them from below instead of from each other.
use super::tested::TestedAnswer;
use super::{Answer, Dataset};

pub struct Questions {
    pub title: &'static str,
    pub answers: fn(&Dataset) -> Vec<Answer>,
    /// The families of tests behind the answers, cell by cell (answers.json carries them).
    pub tested: fn(&Dataset) -> Vec<TestedAnswer>,
}

/// The sweep's questions (crossovers, costs, scaling, a surprise).
pub const SWEEP: Questions = Questions {
    title: "bytepath report",
    answers: super::answers,
    tested: super::tested_answers,
};
