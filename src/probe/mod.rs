//! `bytepath probe`: what this machine can do, measured — clock resolution and cost
//! (clock_getres(2)), the TSC, system-call cost (syscall(2)), the memcpy roofline, which perf
//! events open (perf_event_open(2)) and which zero-copy paths the kernel offers
//! (io_uring_setup(2), sendfile(2), splice(2), tcp(7)). `Probe` is one serde document, so a
//! sweep report can embed it.
pub mod canary;
pub(crate) mod canary_process;
pub(crate) mod clocks;
pub(crate) mod copy_buffers;
pub(crate) mod counters;
pub(crate) mod features;
pub(crate) mod ports;
pub(crate) mod roofline;
pub(crate) mod roofline_threads;
pub(crate) mod settle;
pub(crate) mod sink;
pub(crate) mod summary;
pub(crate) mod syscalls;
pub(crate) mod text;
pub(crate) mod wakeups;
pub(crate) mod watch;

use crate::environment::Environment;
use serde::Serialize;
use std::time::{Duration, Instant};

/// The version of the probe document's layout.
pub const PROBE_SCHEMA_VERSION: u32 = 1;

/// How hard the probe tries: trial counts and calibration intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct Effort {
    pub quick: bool,
    /// Timed batches per clock, rdtscp and system-call figure.
    pub trials: usize,
    /// How long each clock is watched for its smallest step.
    pub step_budget: Duration,
    pub tsc_calibrations: usize,
    pub tsc_interval: Duration,
    /// Timed copies of the DRAM-sized buffer, and trials per thread count of the curve.
    pub dram_trials: usize,
    /// Timed batches of copies of the L2-sized buffer.
    pub cache_trials: usize,
}

impl Effort {
    /// The default: about 1.5 s on a 2-vCPU VM.
    pub fn full() -> Effort {
        Effort {
            quick: false,
            trials: 2000,
            step_budget: Duration::from_millis(100),
            tsc_calibrations: 5,
            tsc_interval: Duration::from_millis(100),
            dram_trials: 20,
            cache_trials: 100,
        }
    }

    /// `--quick`: a tenth of the trials and shorter calibrations (under a second), for tests.
    pub fn quick() -> Effort {
        Effort {
            quick: true,
            trials: 200,
            step_budget: Duration::from_millis(20),
            tsc_calibrations: 3,
            tsc_interval: Duration::from_millis(50),
            dram_trials: 4,
            cache_trials: 20,
        }
    }
}

/// Everything the probe measured, with units in the key names; unavailable figures are
/// `null` with a sibling `<key>_unavailable_reason`.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    pub schema_version: u32,
    pub bytepath_version: &'static str,
    pub command: &'static str,
    pub quick: bool,
    pub environment: Environment,
    pub clocks: clocks::Clocks,
    pub syscalls: syscalls::Syscalls,
    /// What one side waking the other costs, on one CPU and across two (ipc's cost answer).
    pub wakeups: wakeups::Wakeups,
    pub memcpy_roofline: roofline::Roofline,
    pub counters: counters::Counters,
    pub kernel_features: features::Features,
    pub kernel_limits: features::KernelLimits,
    /// What a long `--pattern crr` run has to connect with.
    pub crr_ports: ports::CrrPorts,
    /// Whether `--sink` works here (`bytepath probe` alone: a study's probe runs while its own
    /// sink may stand, and one process holds one such link at a time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sink: Option<sink::SinkProbe>,
    pub elapsed_s: f64,
}

/// Runs every probe on the calling thread. Never fails: what cannot be measured says why.
pub fn probe(effort: &Effort, allowed_cpus: &[usize]) -> Probe {
    let start = Instant::now();
    let environment = Environment::detect(allowed_cpus);
    let counters = counters::measure();
    let clocks = clocks::measure(effort);
    let syscalls = syscalls::measure(effort);
    let wakeups = wakeups::measure(allowed_cpus, syscalls.getpid.min_ns);
    let memcpy_roofline = roofline::measure_with_threads(effort, allowed_cpus);
    Probe {
        schema_version: PROBE_SCHEMA_VERSION,
        bytepath_version: env!("CARGO_PKG_VERSION"),
        command: "probe",
        quick: effort.quick,
        environment,
        clocks,
        syscalls,
        wakeups,
        memcpy_roofline,
        counters,
        kernel_features: features::measure(),
        kernel_limits: features::limits(),
        crr_ports: ports::measure(),
        sink: None,
        elapsed_s: start.elapsed().as_secs_f64(),
    }
}

/// Measures the machine's own limits (memcpy roofline, syscall and clock cost) into `path`
/// (a study folder's probe.json) unless it is there already, so a report can set its figures
/// against them; true when it measured.
pub fn write_probe(
    path: &std::path::Path,
    allowed_cpus: &[usize],
) -> Result<bool, crate::error::Error> {
    if path.exists() {
        return Ok(false);
    }
    let probe = probe(&Effort::full(), allowed_cpus);
    let text = serde_json::to_string_pretty(&probe).expect("the probe serializes") + "\n";
    std::fs::write(path, text).map_err(|source| crate::error::Error::File {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_effort_is_lighter_than_full_in_every_dimension() {
        let (q, f) = (Effort::quick(), Effort::full());
        assert!(q.quick && !f.quick);
        assert!(q.trials < f.trials && q.step_budget < f.step_budget);
        assert!(q.tsc_calibrations * (q.tsc_interval.as_millis() as usize) < 200);
        assert!(q.dram_trials < f.dram_trials && q.cache_trials < f.cache_trials);
    }
}
