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
    tables: crate::analysis::questions::no_tables,
    families: "The cells a question tests together (a crossover's sizes × thread counts, \
         serialization's sizes) are one family: beats and slower under Holm's step-down (the \
         chance of any false claim held to 5 %), each interval shown at its cell's step-down \
         level, so the intervals are not simultaneous; equivalence under Benjamini–Hochberg, and \
         never from fewer than 8 rounds; nothing is decided from fewer than 3 rounds or from a \
         spread of zero; every answer states its count of tests, and answers.json carries each \
         cell's state. A crossover family's intervals are widened by its rounds' lag-1 \
         autocorrelation ρ, pooled over its cells and stated with it. Adaptive rounds \
         (rounds.json): after the pilot (the minimum rounds) a group whose crossover cells are \
         all decided gets no more; the groups still undecided share the rounds the budget \
         leaves equally, a total fixed without their own figures, and are judged again over all \
         their rounds; each cell is looked at twice at most, the pilot's look at α = 0.01 and \
         the last at 0.04, a cell of the pilot's rounds alone judged at the pilot's, and the \
         families say so.",
};
