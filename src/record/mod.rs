//! The result record: one serde-serializable document per run with the full effective
//! configuration, the environment, and every metric per side. Exporters read only this.
//! A metric that could not be measured is `null` with a sibling `<key>_unavailable_reason`.
//! The types are here; `build` makes a record from a run, `blocks` the per-mechanism and
//! per-transport blocks, `aggregate` a point's record from its visits. Readers take a record
//! through a serde type too: `view` (a run record of any schema this build reads, as report,
//! export and compare see it), `probe_view` (probe.json); `compat` says which schemas those
//! are and is the one module allowed to read JSON by string key (tests/typed_records.rs).
use crate::config::Pattern;
use crate::engine::worker::Role;
use crate::environment::Environment;
use crate::measure::counters::Scope;
use crate::measure::histogram::LatencySummary;
use crate::measure::machine::MachineCpu;
use crate::mechanism::receive::Mismatch;
use crate::mechanism::MechanismKind;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

pub(crate) mod aggregate;
pub(crate) mod bidir;
mod blocks;
mod build;
pub(crate) mod compat;
pub(crate) mod copies;
pub(crate) mod counter_run;
pub(crate) mod crr;
pub(crate) mod distribution;
pub(crate) mod probe_view;
pub(crate) mod profile;
pub(crate) mod receive;
mod results;
pub(crate) mod sink;
pub(crate) mod tcp;
pub(crate) mod under_load;
pub(crate) mod view;
pub(crate) mod wire;
pub use blocks::{DatagramDirection, DatagramReport, PageRefsReport, ZerocopyReport};
pub use build::build;
pub(crate) use build::notes;
pub use compat::check_schema;
pub use profile::ProfiledVisit;
pub use receive::ReceiveReport;
pub use results::{read_as, read_results, read_results_file, read_typed, ResultLine, ResultsFile};

/// 2: points measured in visits (`statistics.basis`, `statistics.visits`, visits.jsonl);
/// statistics fields `min_time_s`/`max_time_s` gone, `method`, `basis`, `counters_open` added.
pub const SCHEMA_VERSION: u32 = 2;

/// A measured value, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    Value(f64),
    Unavailable(String),
}

impl Metric {
    pub fn value(&self) -> Option<f64> {
        match self {
            Metric::Value(v) => Some(*v),
            Metric::Unavailable(_) => None,
        }
    }
}

/// Named metrics, serialized as `key: value|null` plus `key_unavailable_reason`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetricSet(pub Vec<(String, Metric)>);

impl MetricSet {
    pub fn get(&self, key: &str) -> Option<&Metric> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, m)| m)
    }
}

impl Serialize for MetricSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (key, metric) in &self.0 {
            match metric {
                Metric::Value(v) => map.serialize_entry(key, v)?,
                Metric::Unavailable(reason) => {
                    map.serialize_entry(key, &None::<f64>)?;
                    map.serialize_entry(&format!("{key}_unavailable_reason"), reason)?;
                }
            }
        }
        map.end()
    }
}

/// Reads `key: value|null` entries back, attaching each `key_unavailable_reason` to its key
/// (the order of the keys is kept as written).
impl<'de> Deserialize<'de> for MetricSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = MetricSet;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of metrics")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetricSet, A::Error> {
                let mut values: Vec<(String, Option<f64>)> = Vec::new();
                let mut reasons: Vec<(String, String)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    match key.strip_suffix("_unavailable_reason") {
                        Some(base) => reasons.push((base.to_string(), map.next_value()?)),
                        None => values.push((key, map.next_value()?)),
                    }
                }
                let metrics = values.into_iter().map(|(key, value)| {
                    let metric = match value {
                        Some(v) => Metric::Value(v),
                        None => Metric::Unavailable(
                            reasons.iter().find(|(k, _)| *k == key).map_or_else(
                                || "no reason was recorded".into(),
                                |(_, r)| r.clone(),
                            ),
                        ),
                    };
                    (key, metric)
                });
                Ok(MetricSet(metrics.collect()))
            }
        }
        d.deserialize_map(Entries)
    }
}

impl RunConfig {
    pub fn mechanism_name(&self) -> &'static str {
        self.mechanism.name()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    pub transport: String,
    /// Bytes each direction can hold: the pipe buffer the kernel granted, or the ring size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_buffer_bytes: Option<usize>,
    pub mechanism: MechanismKind,
    pub pattern: Pattern,
    pub message_size_bytes: usize,
    pub field_size_bytes: usize,
    pub fields: usize,
    pub threads: usize,
    pub duration_s: f64,
    /// `--messages`/`--bytes`: each flow's measured share, in messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_per_flow: Option<u64>,
    pub warmup_s: f64,
    pub pin: String,
    /// Per flow: the CPUs of its sender (client) and receiver (server) threads; null = unpinned.
    pub placement: Vec<crate::config::FlowPlacement>,
    pub recv_size_bytes: usize,
    pub recv_mode: String,
    pub spin: bool,
    pub verify: bool,
    pub counters: crate::measure::counters::CounterSelection,
    pub tcp_nodelay: bool,
    /// io_uring mechanisms: sends submitted together (`--queue-depth`).
    pub queue_depth: Option<u32>,
    /// UDP GSO (`--gso`): the segment size the kernel cut every send into; absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso_segment_bytes: Option<usize>,
    /// How the receiving sides took bytes from the kernel (`--recv`).
    pub recv: crate::mechanism::receive::path::RecvPath,
    /// `--processes`: the two sides ran in two processes.
    pub processes: bool,
    pub where_sides_run: String,
    /// loopback, or netns with the veth MTU and netem parameters.
    pub network: crate::config::Network,
    /// `--rcvbuf` / `--sndbuf` as asked (null: the kernel's autotuning); what the kernel
    /// granted is each side's `rcvbuf_bytes` / `sndbuf_bytes` in `tcp_info`.
    #[serde(default)]
    pub socket_buffers: crate::transport::buffers::SocketBuffers,
    /// `--tcp-info`: "on" (each tcp flow's TCP_INFO sampled per slice) or "off"; records
    /// written before the flag were sampled where they could be.
    #[serde(default = "tcp::switched_on")]
    pub tcp_info: String,
}

/// Every metric of one side, summed or merged over its threads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SideMetrics {
    pub side: String,
    pub threads: usize,
    /// The process this side's threads ran in (null when none reported).
    pub pid: Option<u32>,
    pub messages: u64,
    pub payload_bytes: u64,
    pub elapsed_s: f64,
    pub throughput_gbps: f64,
    pub messages_per_s: f64,
    pub latency_definition: String,
    pub latency_ns: Option<LatencySummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ns_unavailable_reason: Option<String>,
    /// `--percentiles` and the whole histogram they are read from (their keys sit beside
    /// `latency_ns`: `latency_percentiles_ns`, `latency_histogram_hdr`).
    #[serde(flatten)]
    pub distribution: distribution::LatencyDistribution,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub cpu_ns_per_byte: Option<f64>,
    pub voluntary_context_switches: u64,
    pub involuntary_context_switches: u64,
    pub counters: MetricSet,
    pub counter_scope: Option<Scope>,
    pub counters_multiplexed: bool,
    pub derived: MetricSet,
    /// `--profile`: where this side's CPU went, from the point's profiled visit (never a
    /// headline visit), or why there is no breakdown. Absent when no profile was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::measure::profile::Profile>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct VerifyReport {
    pub enabled: bool,
    pub checked_bytes: u64,
    pub mismatched_bytes: u64,
    pub first_mismatches: Vec<Mismatch>,
}

/// Bytes over the whole run (warm-up and drain included): what was sent must have arrived.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TransferTotals {
    pub sender_sent_bytes: u64,
    pub receiver_received_bytes: u64,
    pub receiver_sent_bytes: u64,
    pub sender_received_bytes: u64,
    pub all_delivered: bool,
}

/// What a visit is for (defined beside the schedule that orders visits).
pub use crate::stats::schedule::VisitKind;

/// Where one visit sits in a study (present on the lines of visits.jsonl only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VisitInfo {
    pub key: String,
    pub round: usize,
    pub kind: VisitKind,
    /// Position in the order this session made its visits (0-based).
    pub position: usize,
    /// Set-up, warm-up, measured phase and tear-down of this visit: what it cost the budget.
    pub wall_s: f64,
    /// The seed the study's visit order was drawn from.
    pub seed: u64,
    /// What else used the machine during the visit; absent in folders written before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference: Option<crate::measure::interference::Interference>,
}

impl VisitInfo {
    /// Others used the machine beyond the quiet threshold during this visit.
    pub fn disturbed(&self) -> bool {
        self.interference.as_ref().is_some_and(|i| i.disturbed)
    }
}

/// Which of an `--under-load` pair a sweep's rr record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnderLoadVisit {
    Loaded,
    Unloaded,
}

/// Where a run sits in a sweep (absent for `bytepath run`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Position in the order the sweep measured its points (0-based).
    pub index: usize,
    pub total: usize,
    /// Identifies the point across sweeps: mechanism/pattern/size/threads.
    pub key: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_point: Option<SweepPoint>,
    /// A visit's line in visits.jsonl: which point, round and purpose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visit: Option<VisitInfo>,
    pub bytepath_version: String,
    pub command: String,
    /// `bytepath mesh`: the host that sent (stream) or asked (rr), as the mesh names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// `bytepath mesh`: the host that received (stream) or answered (rr).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<String>,
    pub timestamp_unix_s: u64,
    pub status: String,
    pub interrupted: bool,
    pub errors: Vec<String>,
    pub config: RunConfig,
    pub environment: Environment,
    pub measured_s: f64,
    pub statistics: crate::stats::point::PointStatistics,
    pub sides: Vec<SideMetrics>,
    pub zerocopy: Option<ZerocopyReport>,
    /// `splice` and `sendfile`: how the senders handed pages to the kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_refs: Option<PageRefsReport>,
    /// `--recv` other than recv: what the receive path did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive: Option<ReceiveReport>,
    pub datagrams: Option<DatagramReport>,
    /// `--sink`: where the sender's bytes went (the peer veth's counters against what was
    /// sent) and the softirq on the sending threads' CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink: Option<sink::SinkReport>,
    pub verify: VerifyReport,
    pub transfer: TransferTotals,
    pub machine_wide_cpu: Option<MachineCpu>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_wide_cpu_unavailable_reason: Option<String>,
    /// `--profile`: which visit the sides' `profile` blocks come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiled_visit: Option<ProfiledVisit>,
    /// `bytepath run` with counters: the run the counter figures come from (the headline
    /// run opens none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_run: Option<counter_run::CounterRun>,
    /// `--count-copies`: what the kernel's tracepoints counted in a run or visit of their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copies: Option<copies::CopiesReport>,
    /// Why a skipped point was not run: what this kernel lacks, from the run-time probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_reason: Option<String>,
    pub notes: Vec<String>,
    /// `--pattern crr`: transactions, accepts, the split, CPU per transaction, ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crr: Option<crr::CrrReport>,
    /// `--bidir`: each direction's bytes and Gbit/s, and the reverse direction's sides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bidir: Option<bidir::BidirReport>,
    /// `--under-load N`: the load beside the measured rr flow and what it achieved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_load: Option<under_load::UnderLoadReport>,
    /// `sweep --under-load N`: which of an rr point's pair this record is, the point visited
    /// beside the load flows or its twin without them; absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_load_visit: Option<UnderLoadVisit>,
    /// tcp flows: `tcp_info`, each local side's TCP_INFO per slice, or why there is none.
    #[serde(flatten)]
    pub tcp: tcp::TcpBlock,
}

impl RunRecord {
    pub fn side(&self, role: Role) -> &SideMetrics {
        &self.sides[role as usize]
    }

    /// The figure a study's statistics follow: the stream receiver's Gbit/s (on a sink, which
    /// has no receiver, the sender's), the rr client's round trips per second (whole measured
    /// window).
    pub fn headline_value(&self) -> f64 {
        match self.config.pattern {
            Pattern::Stream if self.config.network.is_sink() => self.sides[0].throughput_gbps,
            Pattern::Stream => self.sides[1].throughput_gbps,
            Pattern::Rr | Pattern::Crr => self.sides[0].messages_per_s,
        }
    }

    /// A failure, a mismatch or an interruption: the run's figures are not a clean result.
    pub fn passed(&self) -> bool {
        self.errors.is_empty() && self.verify.mismatched_bytes == 0 && !self.interrupted
    }

    pub fn status_for_exit(&self) -> crate::error::Status {
        if self.skipped_reason.is_some() {
            crate::error::Status::Failed
        } else if self.interrupted {
            crate::error::Status::Interrupted
        } else if self.passed() {
            crate::error::Status::Success
        } else {
            crate::error::Status::Failed
        }
    }
}

pub fn side_names(pattern: Pattern) -> [&'static str; 2] {
    match pattern {
        Pattern::Stream => ["sender", "receiver"],
        Pattern::Rr | Pattern::Crr => ["client", "server"],
    }
}
