//! The sweep's questions: from which size one mechanism beats another (crossovers), what
//! serialization and zero copy cost, how throughput scales with flows, and what surprised. They
//! are answered in `analysis` (each answer states what it rests on); the report kit renders
//! whichever study's questions it is given.
use crate::analysis::questions::Questions;

/// The sweep's questions and its report's title.
pub const QUESTIONS: Questions = Questions {
    title: "bytepath report",
    answers: crate::analysis::answers,
    tested: crate::analysis::tested_answers,
};
