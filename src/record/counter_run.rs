//! Where a `bytepath run` record's perf counter figures came from: the headline run opens no
//! counter, a run of its own right after it does (see `run::counters`).
use serde::{Deserialize, Serialize};

/// The counter run of a `run` record; absent when no counter was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterRun {
    /// Seconds the counter run measured; 0 when it did not run to its end.
    pub measured_s: f64,
    /// The counter run's own figure (Gbit/s or round trips/s), beside the headline that
    /// never includes an open counter: what counting cost shows here.
    pub headline_value: Option<f64>,
    pub description: String,
}
