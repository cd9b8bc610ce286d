//! What bytepath measures besides bytes: latency histograms, perf counters, machine-wide CPU,
//! and where a side's CPU goes (sampled profiles).
pub mod counters;
pub(crate) mod histogram;
pub mod interference;
pub(crate) mod machine;
pub mod profile;
pub(crate) mod unmeasured;
