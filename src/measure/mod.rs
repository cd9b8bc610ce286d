//! What bytepath measures besides bytes: latency histograms, perf counters, machine-wide CPU.
pub mod counters;
pub mod histogram;
pub mod machine;
