//! `bytepath mesh`: every pair of many hosts that run `bytepath server`, measured host to host
//! (the driver asks the source's server to run each point against the destination's and gets
//! the record back), in rounds of disjoint pairs (`schedule`) repeated once per visit, so each
//! cell's interval covers the regimes of a shared machine. Results go to one folder as they
//! come (`--resume` continues it); the report is an N×N heatmap per point with CIs and the
//! pairs significantly slower than their hosts' other pairs (`answers`, `report`). A host
//! that cannot be reached fails only its own pairs; Ctrl-C keeps every finished run. `study`
//! is what the study driver runs; `pairs`, the runs of the schedule.
pub(crate) mod answers;
pub(crate) mod canary;
pub(crate) mod hosts;
pub(crate) mod launch;
pub(crate) mod openmetrics;
mod pairs;
pub(crate) mod percentiles;
pub(crate) mod progress;
pub(crate) mod report;

pub(crate) mod schedule;
pub(crate) mod spec;
mod study;

use crate::report::csv::{self, Cell::Scalar};
pub use study::{Mesh, KIND};

/// Where `--launch ssh` puts each server's output, inside the results folder.
pub const SERVER_LOGS: &str = "servers";

const ORDER: &str = "round-robin tournament by the circle method (rounds of disjoint pairs, \
                     one way then the other), repeated once per visit; within a round each \
                     pair's points back to back";

/// The mesh's own CSV columns, before every run column.
const MESH_COLUMNS: &[(&str, &str, csv::Cell)] = &[
    ("src", "/src", Scalar),
    ("dst", "/dst", Scalar),
    ("visit", "/mesh/visit", Scalar),
    ("round", "/mesh/round", Scalar),
    ("concurrent", "/mesh/concurrent", Scalar),
    ("started_unix_ms", "/mesh/started_unix_ms", Scalar),
    ("ended_unix_ms", "/mesh/ended_unix_ms", Scalar),
];

pub fn columns() -> Vec<csv::Column> {
    let mut columns = csv::fixed(MESH_COLUMNS);
    columns.extend(csv::columns());
    columns
}
