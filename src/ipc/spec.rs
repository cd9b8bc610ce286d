//! A validated `bytepath ipc` invocation (`IpcSpec`, the marker's `spec` block) and the points
//! it measures: what each visit runs.
use crate::config::{self, Network, Pattern, Pinning, RunSpec, Stopping};
use crate::measure::counters::CounterSelection;
use crate::mechanism::MechanismKind;
use crate::transport::Transport;
use std::time::Duration;

/// What to measure at each (transport, size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    Latency,
    Bandwidth,
}

/// A validated `bytepath ipc` invocation. Serialized, it is the marker's `spec` block: the
/// study's whole configuration (`seed` and `visits` under the keys they always had).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IpcSpec {
    pub transports: Vec<Transport>,
    #[serde(rename = "sizes_bytes")]
    pub sizes: Vec<usize>,
    pub measures: Vec<Measure>,
    pub trials: u64,
    pub bytes: u64,
    #[serde(rename = "max_time_s", serialize_with = "config::seconds")]
    pub max_time: Duration,
    #[serde(rename = "warmup_s", serialize_with = "config::seconds")]
    pub warmup: Duration,
    /// `--pipe-sizes`: the buffer of pipe and shm points, each a point of its own; `[None]`
    /// leaves the kernel's default pipe buffer (and the default ring).
    #[serde(rename = "buffers_bytes")]
    pub buffers: Vec<Option<usize>>,
    /// Visits per point; `--trials` and `--bytes` are split evenly over them.
    pub visits: usize,
    /// The seed the visit order is drawn from.
    pub seed: u64,
    #[serde(rename = "pin")]
    pub pinning: Pinning,
    #[serde(skip)]
    pub cpus: Vec<usize>,
    pub udp_split: bool,
    /// (transport, size) pairs left out: a datagram transport that cannot carry the size, when
    /// the transports were not named (named, such a size is refused instead).
    pub skipped: Vec<(Transport, usize)>,
    /// Why, one line per transport, as printed.
    #[serde(skip)]
    pub skip_reasons: Vec<String>,
    /// `--processes`: client and server (sender and receiver) in two processes.
    pub processes: bool,
    /// Where the sides run (`--netns`, `--mtu`, `--netem`).
    pub network: Network,
    /// `--remote`: the other side of every point on `bytepath server` there (tcp and udp).
    pub remote: Option<config::RemoteRun>,
    /// `--quiet-threshold`, `--settle`: how the study watches the machine.
    // Recorded through the arguments block (--settle, --quiet-threshold), so the spec
    // block, which --resume reads back, keeps its keys.
    #[serde(skip)]
    pub watch: config::watch::Watch,
    /// `--margin`: the equivalence margin the report's verdicts are stated with (a share).
    pub margin: f64,
}

/// One point of the study: what is measured, at which size, over which transport and buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub measure: Measure,
    pub size: usize,
    pub transport: Transport,
    /// The requested pipe buffer or ring size; `None` for the default or a socket.
    pub buffer: Option<usize>,
}

impl Point {
    /// Names the point in visits.jsonl: measure/transport/size, and the buffer when set.
    pub fn key(&self) -> String {
        let measure = match self.measure {
            Measure::Latency => "latency",
            Measure::Bandwidth => "bandwidth",
        };
        let key = format!("{measure}/{}/{}", self.transport.name(), self.size);
        match self.buffer {
            Some(b) => format!("{key}/buffer{b}"),
            None => key,
        }
    }
}

impl IpcSpec {
    /// Every point: per measure and size, every transport in list order (pipe and shm once
    /// per buffer).
    pub fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for &measure in &self.measures {
            for &size in &self.sizes {
                for &transport in &self.transports {
                    if self.skipped.contains(&(transport, size)) {
                        continue;
                    }
                    let buffers: &[Option<usize>] = if has_buffer(transport) {
                        &self.buffers
                    } else {
                        &[None]
                    };
                    out.extend(buffers.iter().map(|&buffer| Point {
                        measure,
                        size,
                        transport,
                        buffer,
                    }));
                }
            }
        }
        out
    }

    /// One visit's run: its share of `--trials` round trips or `--bytes`, no perf counter
    /// open (the headline figures come from visits with nothing extra open).
    pub fn run_spec(&self, point: &Point) -> RunSpec {
        let visits = self.visits.max(1) as u64;
        let (pattern, count) = match point.measure {
            Measure::Latency => (Pattern::Rr, self.trials.div_ceil(visits)),
            Measure::Bandwidth => (
                Pattern::Stream,
                self.bytes.div_ceil(visits).div_ceil(point.size as u64),
            ),
        };
        RunSpec {
            transport: point.transport,
            pipe_size: point.buffer.filter(|_| has_buffer(point.transport)),
            mechanism: MechanismKind::SEND,
            pattern,
            message_size: point.size,
            threads: 1,
            duration: self.max_time,
            stopping: Stopping {
                messages_per_flow: Some(count.max(1)),
                ..Stopping::fixed(self.max_time)
            },
            warmup: self.warmup,
            pinning: self.pinning.clone(),
            cpus: self.cpus.clone(),
            recv_size: None,
            spin: false,
            verify: false,
            counters: CounterSelection::None,
            udp_split: self.udp_split,
            gso: None,
            processes: self.processes,
            network: self.network.clone(),
            queue_depth: crate::config::DEFAULT_QUEUE_DEPTH,
            recv_path: Default::default(),
            profile: false,
            crr: Default::default(),
            bidir: false,
            under_load: None,
            socket_buffers: Default::default(),
            // ipc takes no --tcp-info: its tcp points are sampled as before the flag.
            tcp_info: true,
        }
    }
}

/// Transports with a buffer `--pipe-sizes` sets: the pipe's, and the shm ring.
pub fn has_buffer(t: Transport) -> bool {
    matches!(t, Transport::Pipe | Transport::Shm)
}
