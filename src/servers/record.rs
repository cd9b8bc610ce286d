//! One record per (model, clients) point, the command loop that measures the points, and
//! the CSV columns. Values that could not be measured are null with a `<key>_unavailable_reason`.
use super::host::{OpenHost, ServersHost, Started};
use super::load::{self, ConnectionSpan, Load, LoadSpec};
use super::model::ServerModel;
use super::process::{self, ServerReport, ServerSide};
use super::ServersSpec;
use crate::environment::Environment;
use crate::error::{Error, Status};
use crate::measure::counters::{CounterEvent, CounterValue};
use crate::measure::histogram::{LatencyHistogram, LatencySummary};
use crate::report::folder::{self, Saved, StudyOutput};
use crate::sys;
use crate::transport::Link;
use serde_json::{json, Value};
use std::net::{SocketAddrV4, TcpListener};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub const SERVERS_KIND: &str = "bytepath servers results";
pub const SERVERS_SCHEMA_VERSION: u32 = 1;

/// How a point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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

#[derive(Debug, Clone, serde::Serialize)]
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
    pub requests_per_connection: Option<u64>,
    pub stalled_clients: usize,
    pub open_file_limit: Option<u64>,
    #[serde(flatten)]
    pub placement: super::Placement,
    /// Where the server and the clients ran, in words and as data.
    pub where_sides_run: String,
    pub network: crate::spec::Network,
}

/// A metric that may be unavailable, flattened as `key` and `key_unavailable_reason`.
fn counter(v: &CounterValue) -> (Option<f64>, Option<String>) {
    match v {
        CounterValue::Counted { value, .. } => (Some(*value), None),
        CounterValue::Unavailable(r) => (None, Some(r.clone())),
    }
}

fn server_json(r: &ServerReport, requests: u64) -> Value {
    let mut out = serde_json::Map::new();
    let per_request = |v: Option<f64>| v.filter(|_| requests > 0).map(|v| v / requests as f64);
    for (key, event) in [
        ("task_clock_ns", CounterEvent::TaskClock),
        ("context_switches", CounterEvent::ContextSwitches),
        ("cycles", CounterEvent::Cycles),
        ("instructions", CounterEvent::Instructions),
        ("cache_references", CounterEvent::CacheReferences),
        ("cache_misses", CounterEvent::CacheMisses),
    ] {
        let (value, reason) = counter(r.counters.get(event));
        out.insert(key.into(), json!(value));
        if let Some(reason) = reason {
            out.insert(format!("{key}_unavailable_reason"), json!(reason));
        }
    }
    let (cycles, why_cycles) = counter(r.counters.get(CounterEvent::Cycles));
    let (instructions, _) = counter(r.counters.get(CounterEvent::Instructions));
    let ipc = cycles
        .zip(instructions)
        .filter(|(c, _)| *c > 0.0)
        .map(|(c, i)| i / c);
    out.insert("ipc".into(), json!(ipc));
    if ipc.is_none() {
        out.insert(
            "ipc_unavailable_reason".into(),
            json!(why_cycles.unwrap_or_else(|| "no cycles counted".into())),
        );
    }
    // CPU per request: task-clock when perf counted it, else getrusage's CPU time.
    let (task_clock, _) = counter(r.counters.get(CounterEvent::TaskClock));
    let cpu = task_clock.unwrap_or(r.cpu_time_ns as f64);
    out.insert("cpu_time_ns".into(), json!(r.cpu_time_ns));
    out.insert("cpu_per_request_ns".into(), json!(per_request(Some(cpu))));
    let (switches, _) = counter(r.counters.get(CounterEvent::ContextSwitches));
    let switches = switches.unwrap_or((r.voluntary_switches + r.involuntary_switches) as f64);
    out.insert(
        "context_switches_per_request".into(),
        json!(per_request(Some(switches))),
    );
    out.insert("voluntary_switches".into(), json!(r.voluntary_switches));
    out.insert("involuntary_switches".into(), json!(r.involuntary_switches));
    out.insert("threads".into(), json!(r.threads));
    out.insert("peak_rss_bytes".into(), json!(r.peak_rss_bytes));
    out.insert("rss_at_fork_bytes".into(), json!(r.rss_at_fork_bytes));
    out.insert("accepted_connections".into(), json!(r.accepted));
    out.insert("allowed_cpus".into(), json!(r.allowed_cpus));
    Value::Object(out)
}

/// What the load generator measured at one point.
struct Measured {
    requests: u64,
    measured_s: f64,
    latency: Option<LatencySummary>,
    mismatched: u64,
    connection_errors: u64,
    connected: usize,
    failed_connects: usize,
    first_connect_error: Option<String>,
    client_cpu_ns: u64,
    spans: Vec<ConnectionSpan>,
}

fn gather(results: Vec<load::ThreadResult>, measured_s: f64) -> Measured {
    let mut h = LatencyHistogram::new();
    let mut m = Measured {
        requests: 0,
        measured_s,
        latency: None,
        mismatched: 0,
        connection_errors: 0,
        connected: 0,
        failed_connects: 0,
        first_connect_error: None,
        client_cpu_ns: 0,
        spans: Vec::new(),
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
    }
    m.spans.sort_by_key(|s| s.connection);
    m.latency = h.summary();
    m
}

fn metrics_json(m: &Measured, server: Option<&ServerReport>, client_threads: usize) -> Value {
    let rps = (m.measured_s > 0.0).then(|| m.requests as f64 / m.measured_s);
    let busy = (m.measured_s > 0.0)
        .then(|| m.client_cpu_ns as f64 / 1e9 / (m.measured_s * client_threads as f64));
    json!({
        "requests": m.requests,
        "requests_per_s": rps,
        "measured_s": m.measured_s,
        "latency_ns": m.latency,
        "mismatched_requests": m.mismatched,
        "connection_errors": m.connection_errors,
        "connected": m.connected,
        "failed_connects": m.failed_connects,
        "first_connect_error": m.first_connect_error,
        "server": server.map(|s| server_json(s, m.requests)),
        "client": {
            "cpu_time_ns": m.client_cpu_ns,
            "threads": client_threads,
            "cpu_share_per_thread": busy,
        },
    })
}

/// Stalled clients for the robustness tests: connect and never send, send half a request and
/// stop, or send half and close. Held open until the point ends.
fn open_stalled(
    link: &Link,
    addr: SocketAddrV4,
    n: usize,
    size: usize,
) -> Vec<std::net::TcpStream> {
    use std::io::Write;
    // Half a request: always short of a whole one (none at all for a 1-byte request).
    let half = vec![0u8; size / 2];
    let mut held = Vec::new();
    for i in 0..n {
        let Ok(mut s) = link.on_sending_side(|| std::net::TcpStream::connect(addr)) else {
            continue;
        };
        match i % 3 {
            0 => held.push(s),
            1 => {
                let _ = s.write_all(&half);
                held.push(s);
            }
            _ => {
                let _ = s.write_all(&half);
                drop(s); // gone mid-request
            }
        }
    }
    held
}

/// Why a point was not measured: its status and reason.
type NotRun = (PointStatus, String);

/// Starts the point's server, forked here or on the remote host; returns it and the address
/// its clients connect to.
fn start_server(
    spec: &ServersSpec,
    link: &Link,
    remote: Option<&dyn ServersHost>,
    model: ServerModel,
    clients: usize,
) -> Result<(Box<dyn ServerSide>, SocketAddrV4), NotRun> {
    let failed = |reason: String| (PointStatus::Failed, reason);
    if let Some(remote) = remote {
        return match remote.start(model, spec.size, spec.server_threads, clients) {
            Ok(Started::Accepted { port, server }) => {
                Ok((server, SocketAddrV4::new(remote.addr(), port)))
            }
            Ok(Started::Skipped(reason)) => Err((PointStatus::Skipped, reason)),
            // The server's limits and refusals: this point is refused, the study goes on.
            Err(Error::Config(e)) => Err((PointStatus::Refused, e.0)),
            Err(e) => Err(failed(e.to_string())),
        };
    }
    // The listener, and so every connection the server accepts, lives on the receiving side.
    let listener = link
        .on_receiving_side(|| TcpListener::bind(SocketAddrV4::new(link.server_addr(), 0)))
        .map_err(|e| failed(format!("binding the listener: {e}")))?;
    let backlog = (clients + spec.stalled_clients).min(i32::MAX as usize) as i32;
    sys::events::set_backlog(listener.as_fd(), backlog)
        .map_err(|e| failed(format!("listen: {e}")))?;
    let addr = match listener.local_addr() {
        Ok(std::net::SocketAddr::V4(a)) => a,
        other => return Err(failed(format!("listener address: {other:?}"))),
    };
    let setup = process::ServerSetup {
        model,
        size: spec.size,
        threads: spec.server_threads,
        cpus: spec.placement.server_cpus.as_deref(),
    };
    let server =
        process::spawn(setup, listener).map_err(|e| failed(format!("forking the server: {e}")))?;
    Ok((Box::new(server), addr))
}

/// Measures one point; `Err` says why the point could not run at all.
fn measure(
    spec: &ServersSpec,
    link: &Link,
    remote: Option<&dyn ServersHost>,
    model: ServerModel,
    clients: usize,
    interrupt: &AtomicBool,
) -> Result<(Measured, Result<ServerReport, String>), NotRun> {
    let (mut server, addr) = start_server(spec, link, remote, model, clients)?;
    let failed = |reason: String| (PointStatus::Failed, reason);
    let stalled = open_stalled(link, addr, spec.stalled_clients, spec.size);
    let load = Load::start(&LoadSpec {
        addr,
        clients,
        client_threads: spec.client_threads.min(clients),
        size: spec.size,
        rate: spec.rate,
        requests_per_connection: spec.requests_per_connection,
        setup_timeout: Duration::from_secs(10) + Duration::from_millis(clients as u64),
        cpus: spec.placement.client_cpus.clone(),
        netns: link
            .sending_netns()
            .map_err(|e| failed(format!("opening the clients' network namespace: {e}")))?,
    })
    .map_err(|e| failed(format!("starting the client threads: {e}")))?;
    load.wait_ready();
    if !spec.warmup.is_zero() {
        load.set_phase(load::WARMUP);
        sleep_unless(spec.warmup, &load, interrupt);
    }
    let _ = server.start_window();
    load.set_phase(load::MEASURE);
    let started = Instant::now();
    let fell_over = sleep_unless(spec.duration, &load, interrupt)
        .then(|| server.ended())
        .flatten();
    load.set_phase(load::STOP);
    let measured_s = started.elapsed().as_secs_f64();
    let report = match fell_over {
        Some(reason) => Err(reason),
        None => server.end_window(Duration::from_secs(10)),
    };
    let results = load.join();
    drop(stalled);
    server.close();
    Ok((gather(results, measured_s), report))
}

/// Sleeps for `d` unless every client thread finished or Ctrl-C came; true if cut short
/// (the caller then checks whether the server fell over).
fn sleep_unless(d: Duration, load: &Load, interrupt: &AtomicBool) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if load.all_finished() || interrupt.load(Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2).min(until - Instant::now()));
    }
    false
}

/// Where the server and the clients ran, in words.
fn where_sides_run(link: &Link, remote: Option<&dyn ServersHost>) -> String {
    match remote {
        None => format!(
            "{}; the server in a forked process, the clients in this one",
            link.describe()
        ),
        Some(r) => format!(
            "remote: {} ran the server model in a process it forked; this host ran the clients (unpinned) and measured",
            r.describe()
        ),
    }
}

fn config(
    spec: &ServersSpec,
    where_sides_run: String,
    model: ServerModel,
    clients: usize,
    requested: usize,
    capped: Option<String>,
    limit: Option<u64>,
) -> PointConfig {
    PointConfig {
        model: model.name(),
        server_threads: spec.server_threads,
        clients,
        clients_requested: requested,
        clients_capped_reason: capped,
        size_bytes: spec.size,
        duration_s: spec.duration.as_secs_f64(),
        warmup_s: spec.warmup.as_secs_f64(),
        load_loop: if spec.rate.is_some() {
            "open"
        } else {
            "closed"
        },
        rate_per_s: spec.rate,
        client_threads: spec.client_threads.min(clients),
        requests_per_connection: spec.requests_per_connection,
        stalled_clients: spec.stalled_clients,
        open_file_limit: limit,
        placement: spec.placement.clone(),
        where_sides_run,
        network: spec.network.clone(),
    }
}

/// One point, measured or refused, as its record.
fn point(
    spec: &ServersSpec,
    link: &Link,
    remote: Option<&dyn ServersHost>,
    model: ServerModel,
    requested: usize,
    limit: Option<u64>,
    interrupt: &AtomicBool,
) -> Value {
    let allowed = limit.map(super::clients_allowed);
    let extra = spec.stalled_clients;
    let (clients, capped) = match allowed {
        Some(a) if requested + extra > a => (
            a.saturating_sub(extra).max(1),
            Some(format!(
                "--clients {requested} capped to {}: RLIMIT_NOFILE is {} per process and each process holds one descriptor per client plus {}",
                a.saturating_sub(extra).max(1),
                limit.unwrap_or(0),
                super::RESERVED_FDS
            )),
        ),
        _ => (requested, None),
    };
    let place = where_sides_run(link, remote);
    let cfg = config(spec, place, model, clients, requested, capped, limit);
    let mut record = json!({
        "schema_version": SERVERS_SCHEMA_VERSION,
        "command": "servers",
        "config": cfg,
        "errors": [],
    });
    let not_run = if model == ServerModel::Select {
        super::select_refusal(clients + extra).map(|r| (PointStatus::Refused, r))
    } else if model == ServerModel::Uring && remote.is_none() {
        // Remote: the server probes its own kernel and says whether to skip.
        sys::uring::probe().err().map(|r| (PointStatus::Skipped, r))
    } else {
        None
    };
    if let Some((status, reason)) = not_run {
        record["status"] = json!(status);
        record["reason"] = json!(reason);
        return record;
    }
    match measure(spec, link, remote, model, clients, interrupt) {
        Err((PointStatus::Failed, reason)) => {
            record["status"] = json!(PointStatus::Failed);
            record["errors"] = json!([reason]);
        }
        Err((status, reason)) => {
            record["status"] = json!(status);
            record["reason"] = json!(reason);
        }
        Ok((m, report)) => {
            let mut errors: Vec<String> = Vec::new();
            if let Err(reason) = &report {
                errors.push(reason.clone());
            }
            if let Ok(r) = &report {
                errors.extend(r.errors.iter().cloned());
            }
            let status = if interrupt.load(Ordering::SeqCst) {
                PointStatus::Interrupted
            } else if report.is_err() || m.mismatched > 0 {
                PointStatus::Failed
            } else {
                PointStatus::Completed
            };
            record["status"] = json!(status);
            record["metrics"] = metrics_json(&m, report.as_ref().ok(), cfg.client_threads);
            record["errors"] = json!(errors);
            if spec.record_connections {
                record["connections"] = json!(m.spans);
            }
        }
    }
    record
}

/// Measures every point of `spec` into a new results folder, one record per point, and
/// renders the report. The server runs here, forked on `spec.network`'s link, or with
/// `spec.remote` on the host `open_host` opens.
pub fn run(
    spec: &ServersSpec,
    output: &StudyOutput,
    cpus: &[usize],
    open_host: OpenHost<'_>,
    interrupt: &AtomicBool,
) -> Result<Status, Error> {
    let points = spec.points();
    let marker = folder::marker(
        SERVERS_KIND,
        json!({}),
        output.arguments.clone(),
        points.len(),
        "per client count, every model in list order",
    );
    let (mut results, _) = folder::open_with(output.out.as_deref(), false, &marker, csv_columns())?;
    let limit = sys::raise_open_file_limit().ok();
    let env = serde_json::to_value(Environment::detect(cpus)).expect("JSON");
    // Set up once for every point; dropped (namespaces deleted) when the command returns.
    let link = Link::open(&spec.network)?;
    let remote = spec.remote.as_ref().map(open_host).transpose()?;
    if !output.json {
        println!(
            "servers: {} points, {} B requests, {} loop, RLIMIT_NOFILE {}, results in {}",
            points.len(),
            spec.size,
            if spec.rate.is_some() {
                "open"
            } else {
                "closed"
            },
            limit.map_or("unknown".into(), |l| l.to_string()),
            results.dir.display()
        );
    }
    let mut status = Status::Success;
    let mut records = Vec::new();
    for (index, &(model, clients)) in points.iter().enumerate() {
        if interrupt.load(Ordering::SeqCst) {
            status = Status::Interrupted;
            break;
        }
        let mut record = point(
            spec,
            &link,
            remote.as_deref(),
            model,
            clients,
            limit,
            interrupt,
        );
        record["environment"] = env.clone();
        record["sweep_point"] = json!({"index": index, "total": points.len(), "key": format!("{}/{clients}", model.name())});
        if !output.json {
            println!("{}", line(&record));
        }
        results.append(&Saved::from_value(record.clone()))?;
        match record["status"].as_str() {
            Some("failed") => status = Status::Failed,
            Some("interrupted") => status = Status::Interrupted,
            _ => {}
        }
        records.push(record);
    }
    if output.json {
        println!("{}", serde_json::to_string_pretty(&records).expect("JSON"));
    }
    super::report::at_end(&results.dir, output.json)?;
    Ok(status)
}

fn f(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// One line per point.
fn line(r: &Value) -> String {
    let c = &r["config"];
    let head = format!(
        "{:<9} {:>6} clients",
        c["model"].as_str().unwrap_or("?"),
        c["clients"]
    );
    let capped = c["clients_capped_reason"]
        .as_str()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    match r["status"].as_str() {
        Some("refused") | Some("skipped") => {
            return format!(
                "{head} {}: {}{capped}",
                r["status"].as_str().unwrap_or(""),
                r["reason"].as_str().unwrap_or("")
            )
        }
        _ => {}
    }
    let m = &r["metrics"];
    if m.is_null() {
        return format!("{head} failed: {}", r["errors"]);
    }
    let lat = &m["latency_ns"];
    let us = |k: &str| f(&lat[k]).map_or("n/a".into(), |v| format!("{:.1}", v / 1e3));
    let s = &m["server"];
    let per = |k: &str| f(&s[k]).map_or("n/a".into(), |v| format!("{v:.2}"));
    let mut text = format!(
        "{head} {:>10} req/s  p50 {} p99 {} p99.9 {} max {} µs  server CPU/req {} ns, cs/req {}, threads {}, peak RSS {} KiB; client CPU/thread {}",
        f(&m["requests_per_s"]).map_or("n/a".into(), |v| format!("{v:.0}")),
        us("p50"), us("p99"), us("p99_9"), us("max"),
        f(&s["cpu_per_request_ns"]).map_or("n/a".into(), |v| format!("{v:.0}")),
        per("context_switches_per_request"),
        s["threads"],
        s["peak_rss_bytes"].as_u64().map_or("n/a".into(), |b| (b / 1024).to_string()),
        f(&m["client"]["cpu_share_per_thread"]).map_or("n/a".into(), |v| format!("{:.0}%", v * 100.0)),
    );
    if m["mismatched_requests"].as_u64() != Some(0) {
        text += &format!("; {} MISMATCHED echoes", m["mismatched_requests"]);
    }
    let errors = r["errors"].as_array().map_or(0, Vec::len);
    if errors > 0 {
        text += &format!("; errors: {}", r["errors"]);
    }
    text + &capped
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

/// results.csv for a servers study: one row per point.
pub fn csv_columns() -> Vec<crate::report::csv::Column> {
    let cells: Vec<(&str, &str, crate::report::csv::Cell)> = COLUMNS
        .iter()
        .map(|&(name, pointer)| (name, pointer, crate::report::csv::Cell::Scalar))
        .collect();
    crate::report::csv::fixed(&cells)
}
