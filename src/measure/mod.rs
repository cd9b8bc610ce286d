//! What bytepath measures besides bytes: latency histograms, perf counters, machine-wide CPU,
//! where a side's CPU goes (sampled profiles), and the kernel's own count of the bytes it
//! copied, dropped and transmitted (tracepoints).
pub(crate) mod copies;
pub mod counters;
pub(crate) mod histogram;
pub mod interference;
pub(crate) mod machine;
pub(crate) mod percentiles;
pub mod profile;
pub(crate) mod unmeasured;
