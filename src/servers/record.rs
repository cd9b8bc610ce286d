//! One record per (model, clients) point, as typed serde structs (like the run record), with
//! the CSV columns. Values that could not be measured are null with a
//! `<key>_unavailable_reason`. A record is written through a `serde_json::Value`, so every
//! object's keys come out sorted, as they always have.
use super::load::{self, ConnectionSpan};
use crate::config::Network;
use crate::environment::Environment;
use crate::measure::counters::{CounterEvent, CounterValue};
use crate::measure::histogram::{LatencyHistogram, LatencySummary};
use crate::record::distribution::{self, LatencyDistribution};
use crate::record::wire::ServerReport;
use crate::record::{Metric, MetricSet, SweepPoint};
use crate::report::csv::{self, Cell, Column};
use serde::Serialize;

pub const SERVERS_SCHEMA_VERSION: u32 = 1;

/// How a point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PointStatus {
    Completed,
    /// Not measured: the model cannot serve this point (select beyond FD_SETSIZE).
    Refused,
    /// Not measured: the model is unavailable here (io_uring).
    Skipped,
    /// The server fell over, or nothing could be measured.
    Failed,
    Interrupted,
}

/// One point's record.
#[derive(Debug, Clone, Serialize)]
pub struct ServersRecord {
    pub schema_version: u32,
    pub command: &'static str,
    pub config: PointConfig,
    pub status: PointStatus,
    /// Why a refused or skipped point was not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub errors: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<PointMetrics>,
    /// `--record-connections`: every connection's completions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<Vec<ConnectionSpan>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep_point: Option<SweepPoint>,
    /// `--profile`: where the server process's CPU went, sampled in a window of its own after
    /// the measured one (the clients kept their load; nothing in it was counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::measure::profile::Profile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiled_window: Option<String>,
    /// Which visit of its point this record is (absent in folders from before visits: one
    /// record per point).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visit: Option<ServersVisit>,
}

/// Where one visit sits in a servers study's order.
#[derive(Debug, Clone, Serialize)]
pub struct ServersVisit {
    pub round: usize,
    /// Position in the order the visits were made (0-based).
    pub position: usize,
    /// The seed the order was drawn from.
    pub seed: u64,
    /// What else used the machine during the visit (servers, issue 25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interference: Option<crate::measure::interference::Interference>,
}

impl ServersRecord {
    /// A point's record before it is measured (or refused): `status` says how it ended.
    pub fn new(config: PointConfig, status: PointStatus) -> ServersRecord {
        ServersRecord {
            schema_version: SERVERS_SCHEMA_VERSION,
            command: "servers",
            config,
            status,
            reason: None,
            errors: Vec::new(),
            metrics: None,
            connections: None,
            environment: None,
            sweep_point: None,
            profile: None,
            profiled_window: None,
            visit: None,
        }
    }

    /// The record as written: a JSON value, its keys sorted.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a servers record serializes")
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PointConfig {
    pub model: &'static str,
    pub server_threads: usize,
    pub clients: usize,
    pub clients_requested: usize,
    pub clients_capped_reason: Option<String>,
    pub size_bytes: usize,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// "closed" (send after each echo) or "open" (--rate schedule).
    #[serde(rename = "loop")]
    pub load_loop: &'static str,
    pub rate_per_s: Option<f64>,
    pub client_threads: usize,
    /// The count and why: "8: the default, one per CPU of the load side of --placement
    /// split (CPUs 8-15)", or "4: --client-threads 4".
    pub client_threads_chosen: String,
    /// `false` where `--client-threads` was given.
    pub client_threads_default: bool,
    pub requests_per_connection: Option<u64>,
    /// "persistent" or "per-request" (`--connection`).
    pub connection: &'static str,
    pub stalled_clients: usize,
    pub open_file_limit: Option<u64>,
    #[serde(flatten)]
    pub placement: super::Placement,
    /// Where the server and the clients ran, in words and as data.
    pub where_sides_run: String,
    pub network: Network,
}

/// What the load generator and the server measured at one point.
#[derive(Debug, Clone, Serialize)]
pub struct PointMetrics {
    pub requests: u64,
    pub requests_per_s: Option<f64>,
    pub measured_s: f64,
    pub latency_ns: Option<LatencySummary>,
    /// `--percentiles`: the chosen percentiles of the latency, read exactly from the visit's
    /// whole histogram, which is kept beside them (so a point's are of all its visits'
    /// samples); empty and null where no latency was measured.
    #[serde(flatten)]
    pub distribution: LatencyDistribution,
    pub mismatched_requests: u64,
    pub connection_errors: u64,
    pub connected: usize,
    pub failed_connects: usize,
    pub first_connect_error: Option<String>,
    /// `--connection per-request`: connections the clients opened and echoes they completed,
    /// all phases (the server's accepted_connections counts over the same span).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections_opened: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_all_phases: Option<u64>,
    /// Clients that got no echo in the window while a request of theirs waited (an iterative
    /// server's queue): each is one latency sample, its wait up to the window's end.
    pub unserved_clients: u64,
    pub server: Option<ServerMetrics>,
    pub client: ClientMetrics,
}

/// The load generator's own cost.
#[derive(Debug, Clone, Serialize)]
pub struct ClientMetrics {
    pub cpu_time_ns: u64,
    pub threads: usize,
    pub cpu_share_per_thread: Option<f64>,
    /// The load generator was the limit: its CPU per thread at least `LOAD_LIMITED_SHARE`
    /// (null where that share was not measured). The answers rank no such point.
    pub load_limited: Option<bool>,
}

/// Client CPU per thread from which a point counts as limited by the load generator: its
/// threads were that busy, so the server may have had more to give.
pub const LOAD_LIMITED_SHARE: f64 = 0.9;

/// What the server process alone cost over the window.
#[derive(Debug, Clone, Serialize)]
pub struct ServerMetrics {
    /// The server's perf counters and its IPC: `key: value|null` with
    /// `key_unavailable_reason`.
    #[serde(flatten)]
    pub counters: MetricSet,
    pub cpu_time_ns: u64,
    /// CPU per request: task-clock when perf counted it, else getrusage's CPU time.
    pub cpu_per_request_ns: Option<f64>,
    pub context_switches_per_request: Option<f64>,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub threads: usize,
    pub peak_rss_bytes: Option<u64>,
    pub rss_at_fork_bytes: Option<u64>,
    pub accepted_connections: u64,
    pub allowed_cpus: Vec<usize>,
}

/// The server's counters a record keeps, by key.
const SERVER_COUNTERS: [(&str, CounterEvent); 6] = [
    ("task_clock_ns", CounterEvent::TaskClock),
    ("context_switches", CounterEvent::ContextSwitches),
    ("cycles", CounterEvent::Cycles),
    ("instructions", CounterEvent::Instructions),
    ("cache_references", CounterEvent::CacheReferences),
    ("cache_misses", CounterEvent::CacheMisses),
];

fn metric(v: &CounterValue) -> Metric {
    match v {
        CounterValue::Counted { value, .. } => Metric::Value(*value),
        CounterValue::Unavailable(r) => Metric::Unavailable(r.clone()),
    }
}

impl ServerMetrics {
    /// The server's report, `requests` answered over the window.
    pub fn of(r: &ServerReport, requests: u64) -> ServerMetrics {
        let per_request = |v: f64| (requests > 0).then(|| v / requests as f64);
        let mut counters: Vec<(String, Metric)> = SERVER_COUNTERS
            .iter()
            .map(|&(key, event)| (key.to_string(), metric(r.counters.get(event))))
            .collect();
        let cycles = r.counters.get(CounterEvent::Cycles);
        let instructions = r.counters.get(CounterEvent::Instructions).value();
        let ipc = match cycles.value().zip(instructions) {
            Some((c, i)) if c > 0.0 => Metric::Value(i / c),
            _ => Metric::Unavailable(match cycles {
                CounterValue::Unavailable(why) => why.clone(),
                CounterValue::Counted { .. } => "no cycles counted".into(),
            }),
        };
        counters.push(("ipc".into(), ipc));
        let task_clock = r.counters.get(CounterEvent::TaskClock).value();
        let switches = r.counters.get(CounterEvent::ContextSwitches).value();
        let switches = switches.unwrap_or((r.voluntary_switches + r.involuntary_switches) as f64);
        ServerMetrics {
            counters: MetricSet(counters),
            cpu_time_ns: r.cpu_time_ns,
            cpu_per_request_ns: per_request(task_clock.unwrap_or(r.cpu_time_ns as f64)),
            context_switches_per_request: per_request(switches),
            voluntary_switches: r.voluntary_switches,
            involuntary_switches: r.involuntary_switches,
            threads: r.threads,
            peak_rss_bytes: r.peak_rss_bytes,
            rss_at_fork_bytes: r.rss_at_fork_bytes,
            accepted_connections: r.accepted,
            allowed_cpus: r.allowed_cpus.clone(),
        }
    }
}

impl PointMetrics {
    /// What the load generator measured (`m`), the server's report if it gave one, and the
    /// load generator's thread count.
    pub fn of(
        m: &Measured,
        server: Option<&ServerReport>,
        (client_threads, per_request): (usize, bool),
    ) -> PointMetrics {
        let rps = (m.measured_s > 0.0).then(|| m.requests as f64 / m.measured_s);
        let busy = (m.measured_s > 0.0)
            .then(|| m.client_cpu_ns as f64 / 1e9 / (m.measured_s * client_threads as f64));
        PointMetrics {
            requests: m.requests,
            requests_per_s: rps,
            measured_s: m.measured_s,
            latency_ns: m.latency,
            distribution: m.distribution.clone(),
            mismatched_requests: m.mismatched,
            connection_errors: m.connection_errors,
            connected: m.connected,
            failed_connects: m.failed_connects,
            first_connect_error: m.first_connect_error.clone(),
            connections_opened: per_request.then_some(m.connections_opened),
            requests_all_phases: per_request.then_some(m.requests_all_phases),
            unserved_clients: m.unserved,
            server: server.map(|s| ServerMetrics::of(s, m.requests)),
            client: ClientMetrics {
                cpu_time_ns: m.client_cpu_ns,
                threads: client_threads,
                cpu_share_per_thread: busy,
                load_limited: busy.map(|b| b >= LOAD_LIMITED_SHARE),
            },
        }
    }
}

/// What the load generator measured at one point.
pub struct Measured {
    pub requests: u64,
    pub measured_s: f64,
    pub latency: Option<LatencySummary>,
    /// The chosen percentiles of the same samples and their histogram.
    pub distribution: LatencyDistribution,
    pub mismatched: u64,
    pub connection_errors: u64,
    pub connected: usize,
    pub failed_connects: usize,
    pub first_connect_error: Option<String>,
    pub client_cpu_ns: u64,
    pub spans: Vec<ConnectionSpan>,
    pub connections_opened: u64,
    pub requests_all_phases: u64,
    /// Clients no echo reached in the window (their waits are in `latency`).
    pub unserved: u64,
}

pub fn gather(results: Vec<load::ThreadResult>, measured_s: f64) -> Measured {
    let mut h = LatencyHistogram::new();
    let mut m = Measured {
        requests: 0,
        measured_s,
        latency: None,
        distribution: LatencyDistribution::default(),
        mismatched: 0,
        connection_errors: 0,
        connected: 0,
        failed_connects: 0,
        first_connect_error: None,
        client_cpu_ns: 0,
        spans: Vec::new(),
        connections_opened: 0,
        requests_all_phases: 0,
        unserved: 0,
    };
    for r in results {
        h.merge(&r.histogram);
        m.requests += r.requests;
        m.mismatched += r.mismatched_requests;
        m.connection_errors += r.connection_errors;
        m.connected += r.connected;
        m.failed_connects += r.failed_connects;
        m.first_connect_error = m.first_connect_error.or(r.first_connect_error);
        m.client_cpu_ns += r.cpu.as_nanos() as u64;
        m.spans.extend(r.spans);
        m.connections_opened += r.connections_opened;
        m.requests_all_phases += r.requests_all_phases;
        m.unserved += r.unserved;
    }
    m.spans.sort_by_key(|s| s.connection);
    m.latency = h.summary();
    m.distribution = distribution::of_side(&h, m.latency.is_some());
    m
}

/// CSV columns: (header, JSON pointer into the record).
const COLUMNS: &[(&str, &str)] = &[
    ("model", "/config/model"),
    ("pin", "/config/pin"),
    ("clients", "/config/clients"),
    ("clients_requested", "/config/clients_requested"),
    ("status", "/status"),
    ("reason", "/reason"),
    ("size_bytes", "/config/size_bytes"),
    ("loop", "/config/loop"),
    ("rate_per_s", "/config/rate_per_s"),
    ("server_threads", "/config/server_threads"),
    ("network", "/config/network/placement"),
    ("mtu_bytes", "/config/network/mtu"),
    ("netem", "/config/network/netem"),
    ("requests", "/metrics/requests"),
    ("requests_per_s", "/metrics/requests_per_s"),
    ("latency_min_ns", "/metrics/latency_ns/min"),
    ("latency_p50_ns", "/metrics/latency_ns/p50"),
    ("latency_p99_ns", "/metrics/latency_ns/p99"),
    ("latency_p99_9_ns", "/metrics/latency_ns/p99_9"),
    ("latency_max_ns", "/metrics/latency_ns/max"),
    ("mismatched_requests", "/metrics/mismatched_requests"),
    ("connection_errors", "/metrics/connection_errors"),
    ("server_task_clock_ns", "/metrics/server/task_clock_ns"),
    ("server_cpu_time_ns", "/metrics/server/cpu_time_ns"),
    (
        "server_cpu_per_request_ns",
        "/metrics/server/cpu_per_request_ns",
    ),
    (
        "server_context_switches",
        "/metrics/server/context_switches",
    ),
    (
        "server_context_switches_per_request",
        "/metrics/server/context_switches_per_request",
    ),
    ("server_threads_peak", "/metrics/server/threads"),
    ("server_peak_rss_bytes", "/metrics/server/peak_rss_bytes"),
    ("server_cycles", "/metrics/server/cycles"),
    ("server_instructions", "/metrics/server/instructions"),
    ("server_ipc", "/metrics/server/ipc"),
    (
        "server_cache_references",
        "/metrics/server/cache_references",
    ),
    ("server_cache_misses", "/metrics/server/cache_misses"),
    (
        "server_hardware_unavailable_reason",
        "/metrics/server/cycles_unavailable_reason",
    ),
    ("client_cpu_time_ns", "/metrics/client/cpu_time_ns"),
    (
        "client_cpu_share_per_thread",
        "/metrics/client/cpu_share_per_thread",
    ),
];

/// Columns added since, appended so a header from before keeps every column where it was.
const LATER_COLUMNS: &[(&str, &str)] = &[
    ("client_threads", "/config/client_threads"),
    ("client_load_limited", "/metrics/client/load_limited"),
    ("unserved_clients", "/metrics/unserved_clients"),
];

/// results.csv for a servers study: one row per point.
pub fn csv_columns() -> Vec<Column> {
    let cells: Vec<(&str, &str, Cell)> = COLUMNS
        .iter()
        .map(|&(name, pointer)| (name, pointer, Cell::Scalar))
        .collect();
    let mut columns = csv::fixed(&cells);
    // `--profile` columns last, so every earlier column keeps its place.
    columns.extend(csv::profile_columns("server", "/profile"));
    // Appended after those, so a header from before keeps every column where it was.
    columns.extend(csv::fixed(&[(
        "connection",
        "/config/connection",
        Cell::Scalar,
    )]));
    let later: Vec<(&str, &str, Cell)> = LATER_COLUMNS
        .iter()
        .map(|&(name, pointer)| (name, pointer, Cell::Scalar))
        .collect();
    columns.extend(csv::fixed(&later));
    columns
}
