//! The study types the control protocol carries (`remote::protocol`): what a file transfer
//! asks its sending side on another host (`FileRequest`), what that side used and found
//! (`SideUsage`, `Residency`), and what a servers point's server process cost over the window
//! (`ServerReport`). They live here, below both the studies that fill them and the protocol
//! that sends them, so the protocol depends on no study. Their serde form is part of the
//! protocol: `remote::protocol`'s wire test pins it, so a change here is a change of the
//! protocol's VERSION, made on purpose.
use crate::measure::counters::{CounterEvent, CounterSample, CounterValue};
use crate::sys::usage::ThreadUsage;
use std::collections::BTreeMap;

/// file study: what `file --remote` asks the server to serve for one transfer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRequest {
    pub size: u64,
    pub mechanism: String,
    pub chunk: u64,
    /// warm or cold.
    pub cache: String,
    pub verify: bool,
    /// Which perf counters the sending thread opens (all, software, hardware, none).
    pub counters: String,
}

/// One side's (server or client thread's) usage during a transfer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SideUsage {
    pub user_ns: u64,
    pub system_ns: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// perf counters by name; unavailable ones say why.
    pub counters: BTreeMap<String, CounterValue>,
    /// `--profile`, in the profiled transfer only: where this thread's CPU went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::measure::profile::Profile>,
}

impl SideUsage {
    pub fn new(usage: ThreadUsage, counters: CounterSample) -> SideUsage {
        SideUsage {
            user_ns: usage.user.as_nanos() as u64,
            system_ns: usage.system.as_nanos() as u64,
            voluntary_switches: usage.voluntary_switches,
            involuntary_switches: usage.involuntary_switches,
            minor_faults: usage.minor_faults,
            major_faults: usage.major_faults,
            counters: CounterEvent::ALL
                .iter()
                .map(|&e| (e.key().to_string(), counters.get(e).clone()))
                .collect(),
            profile: None,
        }
    }

    pub fn cpu_ns(&self) -> u64 {
        self.user_ns + self.system_ns
    }

    pub fn context_switches(&self) -> u64 {
        self.voluntary_switches + self.involuntary_switches
    }

    pub fn page_faults(&self) -> u64 {
        self.minor_faults + self.major_faults
    }
}

/// Whether the file's pages were in memory when a transfer started, as mincore(2) saw them.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Residency {
    pub resident_pages: u64,
    pub total_pages: u64,
}

impl Residency {
    pub fn fraction(&self) -> f64 {
        if self.total_pages == 0 {
            0.0
        } else {
            self.resident_pages as f64 / self.total_pages as f64
        }
    }
}

/// What the server process measured over the window, sent back as JSON.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ServerReport {
    pub counters: CounterSample,
    /// user + system CPU of every server thread in the window (getrusage RUSAGE_SELF).
    pub cpu_time_ns: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Most server threads alive at once (the parent's control thread not counted).
    pub threads: usize,
    /// VmHWM: includes the pages the process shares with its parent since the fork.
    pub peak_rss_bytes: Option<u64>,
    /// VmRSS right after the fork: the part of the peak inherited, not grown by serving.
    pub rss_at_fork_bytes: Option<u64>,
    pub accepted: u64,
    /// The CPUs the server's threads were allowed, read in the server after its placement.
    pub allowed_cpus: Vec<usize>,
    pub errors: Vec<String>,
}
