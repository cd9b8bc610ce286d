//! The result record: one serde-serializable document per run with the full effective
//! configuration, the environment, and every metric per side. Exporters read only this.
//! A metric that could not be measured is `null` with a sibling `<key>_unavailable_reason`.
use crate::config::{Pattern, RunSpec};
use crate::engine::worker::{Role, ThreadSample};
use crate::engine::RunOutcome;
use crate::environment::Environment;
use crate::measure::counters::{CounterEvent, CounterSample, CounterValue, Scope};
use crate::measure::histogram::{LatencyHistogram, LatencySummary};
use crate::measure::machine::MachineCpu;
use crate::mechanism::page_refs::SpliceStats;
use crate::mechanism::receive::{DatagramStats, Mismatch, KEPT_MISMATCHES};
use crate::mechanism::{MechanismKind, ZerocopyStats};
use crate::sys::usage::ThreadUsage;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

pub mod aggregate;
pub(crate) mod receive;
mod results;
pub use receive::ReceiveReport;
pub use results::{
    check_schema, point_key, read_results, read_results_file, ResultLine, ResultsFile,
};

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
    /// How the receiving sides took bytes from the kernel (`--recv`).
    pub recv: crate::mechanism::recv_path::RecvPath,
    /// `--processes`: the two sides ran in two processes.
    pub processes: bool,
    pub where_sides_run: String,
    /// loopback, or netns with the veth MTU and netem parameters.
    pub network: crate::config::Network,
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
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub cpu_ns_per_byte: Option<f64>,
    pub voluntary_context_switches: u64,
    pub involuntary_context_switches: u64,
    pub counters: MetricSet,
    pub counter_scope: Option<Scope>,
    pub counters_multiplexed: bool,
    pub derived: MetricSet,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZerocopyReport {
    #[serde(flatten)]
    pub stats: ZerocopyStats,
    pub copied_anyway_percent: Option<f64>,
    pub summary: String,
}

/// The page-referencing senders' accounting, summed over every sending side.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PageRefsReport {
    #[serde(flatten)]
    pub stats: SpliceStats,
    pub calls_per_message: Option<f64>,
    pub summary: String,
}

fn page_refs_report(outcome: &RunOutcome) -> Option<PageRefsReport> {
    let mut total: Option<SpliceStats> = None;
    for s in outcome.samples.iter().filter_map(|s| s.page_refs.as_ref()) {
        total.get_or_insert_with(Default::default).add(s);
    }
    total.map(PageRefsReport::from_stats)
}

impl PageRefsReport {
    pub fn from_stats(stats: SpliceStats) -> PageRefsReport {
        PageRefsReport {
            calls_per_message: stats.calls_per_message(),
            summary: stats.summary(),
            stats,
        }
    }
}

/// Datagrams one way over the whole run (all phases).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DatagramDirection {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub lost_percent: Option<f64>,
    pub reordered: u64,
}

impl DatagramDirection {
    /// Two counts of one direction added (a point's visits).
    pub fn add(&mut self, other: &DatagramDirection) {
        self.sent += other.sent;
        self.received += other.received;
        self.lost += other.lost;
        self.reordered += other.reordered;
        self.lost_percent = (self.sent > 0).then(|| 100.0 * self.lost as f64 / self.sent as f64);
    }

    fn new(from: &DatagramStats, to: &DatagramStats) -> DatagramDirection {
        let lost = from.sent.saturating_sub(to.received);
        DatagramDirection {
            sent: from.sent,
            received: to.received,
            lost,
            lost_percent: (from.sent > 0).then(|| 100.0 * lost as f64 / from.sent as f64),
            reordered: to.reordered,
        }
    }

    fn describe(&self, way: &str) -> String {
        format!(
            "{way}: {} of {} datagrams received, {} lost ({:.2} %), {} reordered",
            self.received,
            self.sent,
            self.lost,
            self.lost_percent.unwrap_or(0.0),
            self.reordered
        )
    }
}

/// Loss and ordering of a datagram transport: never hidden inside a throughput figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatagramReport {
    pub datagrams_per_message: u32,
    pub datagram_bytes: usize,
    pub sequence_number_bytes: usize,
    pub receive_timeout_ms: u64,
    /// Sender to receiver (stream data, rr requests).
    pub forward: DatagramDirection,
    /// Receiver to sender (rr answers).
    pub back: Option<DatagramDirection>,
    /// rr: round trips given up after the receive timeout (not in the latency figures).
    pub lost_round_trips: u64,
    /// rr: answers that came after their round trip was given up, discarded.
    pub stale_answers: u64,
    /// Split messages missing a part (not counted as received).
    pub incomplete_messages: u64,
    /// Flows that ended by a timeout because their end marker was lost.
    pub end_markers_lost: u64,
    pub summary: String,
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

/// What a visit is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VisitKind {
    /// No perf counter open: the headline figures come from these.
    Headline,
    /// Perf counters open: counter figures only, labelled as such.
    Counters,
}

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
    pub verify: VerifyReport,
    pub transfer: TransferTotals,
    pub machine_wide_cpu: Option<MachineCpu>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_wide_cpu_unavailable_reason: Option<String>,
    /// Why a skipped point was not run: what this kernel lacks, from the run-time probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_reason: Option<String>,
    pub notes: Vec<String>,
}

impl RunRecord {
    pub fn side(&self, role: Role) -> &SideMetrics {
        &self.sides[role as usize]
    }

    /// The figure a study's statistics follow: the stream receiver's Gbit/s, the rr client's
    /// round trips per second (whole measured window).
    pub fn headline_value(&self) -> f64 {
        match self.config.pattern {
            Pattern::Stream => self.sides[1].throughput_gbps,
            Pattern::Rr => self.sides[0].messages_per_s,
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
        Pattern::Rr => ["client", "server"],
    }
}

pub fn build(spec: &RunSpec, outcome: &RunOutcome, env: Environment) -> RunRecord {
    let names = side_names(spec.pattern);
    let sides = [Role::Sender, Role::Receiver].map(|role| {
        let samples: Vec<&ThreadSample> =
            outcome.samples.iter().filter(|s| s.role == role).collect();
        let (definition, missing) = latency_definition(spec, role);
        side_metrics(names[role as usize], &samples, definition, missing)
    });
    let mut errors = run_errors(spec, outcome);
    let measured = match spec.pattern {
        Pattern::Stream => &sides[Role::Receiver as usize],
        Pattern::Rr => &sides[Role::Sender as usize],
    };
    let skipped = outcome.skipped.is_some();
    if errors.is_empty() && !outcome.interrupted && !skipped && measured.messages == 0 {
        errors.push(format!(
            "no message completed on the {} side in the measured phase: its figures are not a measurement",
            measured.side
        ));
    }
    let mut transfer = transfer_totals(outcome, errors.is_empty());
    // trunc: the kernel counted the bytes and discarded them; none reached the process.
    transfer.all_delivered &= spec.recv_path.delivers_data();
    let zerocopy = zerocopy_report(spec.mechanism, outcome);
    let receive = receive::report(spec, outcome);
    let status = if !errors.is_empty() {
        "failed"
    } else if skipped {
        "skipped"
    } else if outcome.interrupted {
        "interrupted"
    } else {
        "completed"
    };
    RunRecord {
        schema_version: SCHEMA_VERSION,
        sweep_point: None,
        visit: None,
        bytepath_version: env!("CARGO_PKG_VERSION").into(),
        command: "run".into(),
        src: None,
        dst: None,
        timestamp_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        status: status.into(),
        interrupted: outcome.interrupted,
        errors,
        config: run_config(spec, outcome),
        notes: notes(spec, &env, zerocopy.as_ref(), receive.as_ref()),
        environment: env,
        measured_s: outcome.measured.as_secs_f64(),
        statistics: crate::stats::point::point_statistics(spec, &outcome.slices),
        sides: sides.into(),
        zerocopy,
        page_refs: page_refs_report(outcome),
        receive,
        datagrams: datagram_report(spec, outcome),
        verify: verify_report(spec, outcome),
        transfer,
        machine_wide_cpu: outcome.machine.clone().ok(),
        machine_wide_cpu_unavailable_reason: outcome.machine.clone().err().filter(|_| !skipped),
        skipped_reason: outcome.skipped.clone(),
    }
}

fn run_config(spec: &RunSpec, outcome: &RunOutcome) -> RunConfig {
    let where_sides_run = outcome.placement.as_str();
    RunConfig {
        transport: spec.transport.name().into(),
        channel_buffer_bytes: matches!(
            spec.transport,
            crate::transport::Transport::Pipe | crate::transport::Transport::Shm
        )
        .then_some(outcome.send_buffer_bytes),
        mechanism: spec.mechanism,
        pattern: spec.pattern,
        message_size_bytes: spec.message_size,
        field_size_bytes: spec.message_size / crate::mechanism::message::FIELDS,
        fields: crate::mechanism::message::FIELDS,
        threads: spec.threads,
        duration_s: spec.duration.as_secs_f64(),
        messages_per_flow: spec.stopping.messages_per_flow,
        warmup_s: spec.warmup.as_secs_f64(),
        pin: spec.pinning.name(),
        placement: (0..spec.threads).map(|f| spec.placement(f)).collect(),
        recv_size_bytes: spec.recv_call_size(),
        recv_mode: match (spec.pattern, spec.recv_size) {
            (Pattern::Stream, Some(_)) => "chunks: every recv asks for recv_size_bytes",
            _ => "whole message: recv until the message is complete",
        }
        .into(),
        spin: spec.spin,
        verify: spec.verify,
        counters: spec.counters,
        tcp_nodelay: spec.socket_options().nodelay,
        queue_depth: spec
            .mechanism
            .uses_queue_depth()
            .then_some(spec.queue_depth),
        recv: spec.recv_path,
        processes: spec.processes,
        where_sides_run: where_sides_run.to_string(),
        network: spec.network.clone(),
    }
}

fn latency_definition(spec: &RunSpec, role: Role) -> (&'static str, Option<&'static str>) {
    match (spec.pattern, role) {
        (Pattern::Stream, Role::Sender) => (
            "time per message handed to the kernel: the interval between timestamps, each \
             taken after a batch of up to 64 messages (256 KiB at most), divided evenly among \
             the batch's messages",
            None,
        ),
        (Pattern::Stream, Role::Receiver) => (
            "time to take in one whole message: the interval between timestamps at the \
             receiver, each taken after a batch of up to 64 whole messages (256 KiB at most), \
             divided evenly among the batch's messages",
            None,
        ),
        (Pattern::Rr, Role::Sender) => (
            "round trip: request handed to the kernel until the whole response is in",
            None,
        ),
        (Pattern::Rr, Role::Receiver) => ("none", Some("round trips are timed on the client")),
    }
}

fn side_metrics(
    name: &'static str,
    samples: &[&ThreadSample],
    latency_definition: &'static str,
    latency_missing: Option<&str>,
) -> SideMetrics {
    let windows: Vec<_> = samples.iter().filter_map(|s| s.window.as_ref()).collect();
    let messages: u64 = windows.iter().map(|w| w.messages).sum();
    let bytes: u64 = windows.iter().map(|w| w.bytes).sum();
    // fold from +0.0: an empty f64 sum is -0.0
    let rate = |f: &dyn Fn(&crate::engine::window::WindowResult) -> f64| -> f64 {
        windows
            .iter()
            .filter(|w| !w.elapsed.is_zero())
            .map(|w| f(w) / w.elapsed.as_secs_f64())
            .fold(0.0, |a, b| a + b)
    };
    let mut histogram = LatencyHistogram::new();
    let mut usage = ThreadUsage::default();
    let mut counters: Option<CounterSample> = None;
    for w in &windows {
        histogram.merge(&w.histogram);
        usage.add(&w.usage);
        counters = Some(match counters {
            Some(c) => c.merge(&w.counters),
            None => w.counters.clone(),
        });
    }
    let cpu_s = usage.user.as_secs_f64() + usage.system.as_secs_f64();
    let latency_ns = if latency_missing.is_some() {
        None
    } else {
        histogram.summary()
    };
    let latency_reason = match (latency_missing, latency_ns) {
        (Some(r), _) => Some(r.to_string()),
        (None, None) => Some("no message completed in the measured phase".to_string()),
        _ => None,
    };
    let (counter_set, scope, multiplexed) = counter_metrics(counters.as_ref());
    SideMetrics {
        side: name.into(),
        threads: samples.len(),
        pid: samples.first().map(|s| s.pid),
        messages,
        payload_bytes: bytes,
        elapsed_s: windows
            .iter()
            .map(|w| w.elapsed.as_secs_f64())
            .fold(0.0, f64::max),
        throughput_gbps: rate(&|w| w.bytes as f64 * 8.0) / 1e9,
        messages_per_s: rate(&|w| w.messages as f64),
        latency_definition: latency_definition.into(),
        latency_ns,
        latency_ns_unavailable_reason: latency_reason,
        cpu_user_s: usage.user.as_secs_f64(),
        cpu_sys_s: usage.system.as_secs_f64(),
        cpu_ns_per_byte: (bytes > 0).then(|| cpu_s * 1e9 / bytes as f64),
        voluntary_context_switches: usage.voluntary_switches,
        involuntary_context_switches: usage.involuntary_switches,
        derived: derived_metrics(&counter_set, bytes),
        counters: counter_set,
        counter_scope: scope,
        counters_multiplexed: multiplexed,
    }
}

fn counter_metrics(sample: Option<&CounterSample>) -> (MetricSet, Option<Scope>, bool) {
    let mut set = MetricSet::default();
    let mut scope = None;
    let mut multiplexed = false;
    for event in CounterEvent::ALL {
        let metric = match sample.map(|s| s.get(event)) {
            None => Metric::Unavailable("the measured phase never started".into()),
            Some(CounterValue::Unavailable(reason)) => Metric::Unavailable(reason.clone()),
            Some(CounterValue::Counted {
                value,
                scope: s,
                multiplexed: m,
            }) => {
                scope = Some(scope.map_or(*s, |old| if old == *s { old } else { Scope::UserOnly }));
                multiplexed |= *m;
                Metric::Value(*value)
            }
        };
        set.0.push((event.key().into(), metric));
    }
    (set, scope, multiplexed)
}

/// Per-byte and per-cycle figures, derived only from counters that were really counted.
fn derived_metrics(counters: &MetricSet, bytes: u64) -> MetricSet {
    let get = |key| {
        counters
            .get(key)
            .cloned()
            .unwrap_or(Metric::Unavailable("missing".into()))
    };
    let ratio = |num: Metric, den: Result<f64, String>, scale: f64| match (num, den) {
        (Metric::Unavailable(r), _) => Metric::Unavailable(r),
        (_, Err(r)) => Metric::Unavailable(r),
        (Metric::Value(n), Ok(d)) if d > 0.0 => Metric::Value(n * scale / d),
        (Metric::Value(_), Ok(_)) => Metric::Unavailable("denominator is zero".into()),
    };
    let bytes = if bytes > 0 {
        Ok(bytes as f64)
    } else {
        Err("no bytes measured".to_string())
    };
    let cycles = match get("cycles") {
        Metric::Value(v) => Ok(v),
        Metric::Unavailable(r) => Err(r),
    };
    MetricSet(vec![
        (
            "cycles_per_byte".into(),
            ratio(get("cycles"), bytes.clone(), 1.0),
        ),
        (
            "instructions_per_cycle".into(),
            ratio(get("instructions"), cycles, 1.0),
        ),
        (
            "llc_misses_per_kib".into(),
            ratio(get("llc_load_misses"), bytes, 1024.0),
        ),
    ])
}

fn run_errors(spec: &RunSpec, outcome: &RunOutcome) -> Vec<String> {
    let names = side_names(spec.pattern);
    let mut errors: Vec<String> = outcome
        .samples
        .iter()
        .filter_map(|s| {
            let e = s.error.as_ref()?;
            Some(format!("flow {} {}: {e}", s.flow, names[s.role as usize]))
        })
        .collect();
    if let Some(reason) = &outcome.not_run {
        errors.push(format!("the point did not run: {reason}"));
        return errors;
    }
    if outcome.skipped.is_some() {
        return errors;
    }
    let expected = 2 * spec.threads;
    if outcome.samples.len() < expected {
        errors.push(format!(
            "{} worker threads panicked",
            expected - outcome.samples.len()
        ));
    }
    if outcome.watchdog_fired {
        errors.push(
            "a side did not finish within 10 s of the stop; its sockets were shut down".into(),
        );
    }
    if let Some(z) = outcome
        .samples
        .iter()
        .filter_map(|s| s.zerocopy)
        .find(|z| z.bad_ranges > 0)
    {
        errors.push(format!(
            "{} zero-copy completion ranges were unknown or duplicated",
            z.bad_ranges
        ));
    }
    errors
}

fn transfer_totals(outcome: &RunOutcome, no_errors: bool) -> TransferTotals {
    let sum = |role: Role, f: fn(&ThreadSample) -> u64| -> u64 {
        outcome
            .samples
            .iter()
            .filter(|s| s.role == role)
            .map(f)
            .sum()
    };
    let mut t = TransferTotals {
        sender_sent_bytes: sum(Role::Sender, |s| s.sent_bytes),
        receiver_received_bytes: sum(Role::Receiver, |s| s.received_bytes),
        receiver_sent_bytes: sum(Role::Receiver, |s| s.sent_bytes),
        sender_received_bytes: sum(Role::Sender, |s| s.received_bytes),
        all_delivered: false,
    };
    t.all_delivered = no_errors
        && t.sender_sent_bytes == t.receiver_received_bytes
        && t.receiver_sent_bytes == t.sender_received_bytes;
    t
}

fn zerocopy_report(mechanism: MechanismKind, outcome: &RunOutcome) -> Option<ZerocopyReport> {
    let mut total: Option<ZerocopyStats> = None;
    for z in outcome.samples.iter().filter_map(|s| s.zerocopy.as_ref()) {
        total.get_or_insert_with(Default::default).add(z);
    }
    Some(ZerocopyReport::from_stats(mechanism, total?))
}

impl ZerocopyReport {
    pub fn from_stats(mechanism: MechanismKind, stats: ZerocopyStats) -> ZerocopyReport {
        let percent = stats.copied_percent();
        let summary = match percent {
            None => "no zero-copy completion arrived".to_string(),
            Some(p) if p >= 99.95 => format!(
                "copied anyway: {p:.1} % — the kernel copied every {} send (it always does \
             for data delivered to a local socket, as on loopback and veth); no send avoided its \
             copy, so these figures measure the zero-copy API's cost, not zero-copy transmission",
                zero_copy_call(mechanism)
            ),
            Some(p) => format!(
                "copied anyway: {p:.1} % — {:.1} % of completed sends avoided the copy",
                100.0 - p
            ),
        };
        ZerocopyReport {
            stats,
            copied_anyway_percent: percent,
            summary,
        }
    }
}

/// The call whose sends a zero-copy report counts.
fn zero_copy_call(mechanism: MechanismKind) -> &'static str {
    match mechanism {
        MechanismKind::UringZc => "io_uring SEND_ZC",
        _ => "MSG_ZEROCOPY",
    }
}

impl DatagramReport {
    /// The summary sentence, from the report's own figures.
    pub fn describe(&self) -> String {
        let mut summary = self.forward.describe("sender → receiver");
        if let Some(b) = &self.back {
            summary += &format!(
                "; {}; {} round trips lost (no answer within {} ms), {} late answers discarded",
                b.describe("answers"),
                self.lost_round_trips,
                self.receive_timeout_ms,
                self.stale_answers
            );
        }
        if self.datagrams_per_message > 1 {
            summary += &format!(
                "; each message split into {} datagrams (--udp-split), {} arrived incomplete (a part lost)",
                self.datagrams_per_message, self.incomplete_messages
            );
        }
        summary
    }

    /// Loss in a few words, for one-line outputs.
    pub fn brief(&self) -> String {
        let mut s = format!(
            "datagrams lost {} of {}",
            self.forward.lost, self.forward.sent
        );
        if let Some(b) = &self.back {
            s += &format!(
                ", answers lost {} of {}, round trips given up {}",
                b.lost, b.sent, self.lost_round_trips
            );
        }
        let reordered = self.forward.reordered + self.back.map_or(0, |b| b.reordered);
        if reordered > 0 {
            s += &format!(", {reordered} reordered");
        }
        s
    }
}

fn datagram_report(spec: &RunSpec, outcome: &RunOutcome) -> Option<DatagramReport> {
    let framing = spec.framing()?;
    let total = |role: Role| -> DatagramStats {
        let mut t = DatagramStats::default();
        for d in outcome
            .samples
            .iter()
            .filter(|s| s.role == role)
            .filter_map(|s| s.datagrams.as_ref())
        {
            t.add(d);
        }
        t
    };
    let (sender, receiver) = (total(Role::Sender), total(Role::Receiver));
    let rr = spec.pattern == Pattern::Rr;
    let forward = DatagramDirection::new(&sender, &receiver);
    let back = rr.then(|| DatagramDirection::new(&receiver, &sender));
    let end_markers_lost = outcome
        .samples
        .iter()
        .filter(|s| s.datagrams.is_some_and(|d| d.end_marker_lost))
        .count() as u64;
    let lost_round_trips = if rr { sender.timeouts } else { 0 };
    let mut report = DatagramReport {
        datagrams_per_message: framing.parts,
        datagram_bytes: framing.part_len,
        sequence_number_bytes: crate::transport::datagram::SEQ_BYTES,
        receive_timeout_ms: crate::transport::datagram::RECEIVE_TIMEOUT.as_millis() as u64,
        forward,
        back,
        lost_round_trips,
        stale_answers: sender.stale_answers,
        incomplete_messages: sender.incomplete_messages + receiver.incomplete_messages,
        end_markers_lost,
        summary: String::new(),
    };
    report.summary = report.describe();
    Some(report)
}

fn verify_report(spec: &RunSpec, outcome: &RunOutcome) -> VerifyReport {
    let mut report = VerifyReport {
        enabled: spec.verify,
        ..Default::default()
    };
    for v in outcome.samples.iter().filter_map(|s| s.verifier.as_ref()) {
        report.checked_bytes += v.checked_bytes;
        report.mismatched_bytes += v.wrong_bytes;
        for m in &v.first {
            if report.first_mismatches.len() < KEPT_MISMATCHES {
                report.first_mismatches.push(*m);
            }
        }
    }
    report
}

pub(crate) fn notes(
    spec: &RunSpec,
    env: &Environment,
    zerocopy: Option<&ZerocopyReport>,
    receive: Option<&ReceiveReport>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if !env.pmu_available {
        notes.push(
            "hardware counters (cycles, instructions, cache and LLC misses) are unavailable: this \
             machine exposes no PMU; CPU cost is given as CPU-ns per byte from getrusage instead"
                .into(),
        );
    }
    if spec.pinning == crate::config::Pinning::Unpinned {
        notes.push("threads were not pinned: the scheduler placed them, and figures on a small VM can vary up to 2x between runs; use --pin cross or --pin same".into());
    }
    if spec.counters != crate::measure::counters::CounterSelection::None {
        notes.push(format!(
            "perf counters ({}) follow each thread across context switches, which adds about 2 µs \
             per switch on small VMs; --counters none gives the figures without that cost",
            spec.counters.name()
        ));
    } else if spec.pattern == Pattern::Rr {
        notes.push("perf counters are off for rr by default: they would add a perf context switch to every round trip (--counters all to count them); CPU time and context switches still come from getrusage".into());
    }
    if spec.verify {
        notes.push("--verify: the sender writes each message's pattern and the receiver checks every byte; both costs are inside the figures".into());
    }
    if spec.spin {
        notes.push("--spin: receiving sides busy-poll (MSG_DONTWAIT); this mode is not comparable with blocking runs".into());
    }
    if let Some(z) = zerocopy {
        notes.push(z.summary.clone());
    }
    if let Some(r) = receive {
        notes.push(r.summary.clone());
    }
    if spec.transport.is_datagram() {
        notes.push(format!(
            "{}: every datagram's first {} bytes carry its sequence number (inside the message size, as sockperf's header is); throughput counts only whole messages received, and loss is reported beside it",
            spec.transport.name(),
            crate::transport::datagram::SEQ_BYTES
        ));
    }
    notes.push("machine_wide_cpu covers every CPU over the measured phase, including softirq work that getrusage does not charge to a thread".into());
    notes
}
