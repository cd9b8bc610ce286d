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
    families: "The cells a question tests together (sizes × thread counts) are one family: \
               beats and slower under Holm's step-down (the chance of any false claim held to \
               5 %), each interval shown at its Holm level; equivalence under \
               Benjamini–Hochberg; every answer states its count of tests, and answers.json \
               carries each cell's state. Overlap of two intervals is never used as a test. \
               Adaptive rounds (rounds.json): after the pilot (the minimum rounds) a group whose \
               crossover cells are all decided gets no more; one still undecided gets, once, the \
               total its pilot's spread fixes (two-stage rule), within the budget; each cell is \
               then looked at twice at most, each look at α/2, and the families say so.",
};
