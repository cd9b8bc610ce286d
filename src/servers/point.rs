//! One servers point: its server forked here (on the link) or started on the remote host,
//! the load generator driving it over the window, and the record it ends as (measured,
//! refused, failed or not run, with the profile where one was taken).
use super::host::{ServersHost, Started};
use super::load::{self, Load, LoadSpec};
use super::model::ServerModel;
use super::process::{self, ServerSide};
use super::record::{gather, Measured, PointConfig, PointMetrics, PointStatus, ServersRecord};
use super::ServersSpec;
use crate::error::Error;
use crate::measure::profile::{self, Profile};
use crate::record::wire::ServerReport;
use crate::sys;
use crate::transport::Link;
use std::net::{SocketAddrV4, TcpListener};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
/// What a measured point gives: the clients' figures, the server's report, and with
/// `--profile` the server's profile.
type Measured3 = (Measured, Result<ServerReport, String>, Option<Profile>);

/// Starts the point's server, forked here or on the remote host; returns it and the address
/// its clients connect to.
fn start_server(
    spec: &ServersSpec,
    link: &Link,
    remote: Option<&dyn ServersHost>,
    (model, clients, per_request): (ServerModel, usize, bool),
) -> Result<(Box<dyn ServerSide>, SocketAddrV4), NotRun> {
    let failed = |reason: String| (PointStatus::Failed, reason);
    let setup = process::ServerSetup {
        model,
        size: spec.size,
        threads: spec.server_threads,
        cpus: spec.placement.server_cpus.as_deref(),
        // The load generator is this process; a remote server sets its own door.
        door: super::door::Door::ANYONE,
    };
    if let Some(remote) = remote {
        // The connections this point opens when each client keeps one: the remote model stops
        // listening once they are in (its door lets in only this driver's address).
        let most = (!per_request).then_some((clients + spec.stalled_clients) as u64);
        let setup = process::ServerSetup {
            door: super::door::Door { peer: None, most },
            ..setup
        };
        return match remote.start(setup, clients) {
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
    let server =
        process::spawn(setup, listener).map_err(|e| failed(format!("forking the server: {e}")))?;
    Ok((Box::new(server), addr))
}

/// Measures one point; `Err` says why the point could not run at all.
fn measure(
    spec: &ServersSpec,
    link: &Link,
    remote: Option<&dyn ServersHost>,
    (model, clients, per_request): (ServerModel, usize, bool),
    interrupt: &AtomicBool,
) -> Result<Measured3, NotRun> {
    let (mut server, addr) = start_server(spec, link, remote, (model, clients, per_request))?;
    let failed = |reason: String| (PointStatus::Failed, reason);
    let stalled = open_stalled(link, addr, spec.stalled_clients, spec.size);
    let load = Load::start(&LoadSpec {
        addr,
        clients,
        client_threads: spec.client_threads.for_clients(clients),
        size: spec.size,
        rate: spec.rate,
        requests_per_connection: spec.requests_per_connection,
        per_request,
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
    let fell_over = sleep_unless(spec.visit_duration(), &load, interrupt)
        .then(|| server.ended())
        .flatten();
    // `--profile`: the clients keep their load, uncounted, for the profile window.
    load.set_phase(if spec.profile {
        load::PROFILE
    } else {
        load::STOP
    });
    let measured_s = started.elapsed().as_secs_f64();
    let report = match fell_over {
        Some(reason) => Err(reason),
        None => server.end_window(Duration::from_secs(10)),
    };
    let profile = spec
        .profile
        .then(|| profile_window(spec, &*server, &load, report.is_ok(), interrupt));
    let results = load.join();
    drop(stalled);
    server.close();
    Ok((gather(results, measured_s), report, profile))
}

/// `--profile`: the server process's threads sampled while the clients keep their load, for
/// as long as the measured window (at most 2 s); nothing in this window is counted.
fn profile_window(
    spec: &ServersSpec,
    server: &dyn ServerSide,
    load: &Load,
    served: bool,
    interrupt: &AtomicBool,
) -> Profile {
    let unavailable = |reason: &str| Profile::Unavailable {
        reason: reason.into(),
    };
    let Some(pid) = server.local_pid() else {
        return unavailable("the server ran on another host");
    };
    if !served {
        return unavailable("the measured window failed, so no profile window followed it");
    }
    let tids = match profile::process_threads(pid) {
        Ok(tids) => tids,
        Err(e) => return unavailable(&format!("the server's threads could not be listed: {e}")),
    };
    let window = spec.duration.min(Duration::from_secs(2));
    match profile::start(&tids, &crate::engine::profiling::settings(window)) {
        Ok(running) => {
            sleep_unless(window, load, interrupt);
            let profile = running.stop();
            // The symbol tables just freed would stay in this process's heap and be counted
            // in the next forked server's resident memory.
            sys::release_free_memory();
            profile
        }
        Err(u) => Profile::Unavailable { reason: u.reason },
    }
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
    (model, clients, per_request): (ServerModel, usize, bool),
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
        duration_s: spec.visit_duration().as_secs_f64(),
        warmup_s: spec.warmup.as_secs_f64(),
        load_loop: if spec.rate.is_some() {
            "open"
        } else {
            "closed"
        },
        rate_per_s: spec.rate,
        client_threads: spec.client_threads.for_clients(clients),
        client_threads_chosen: spec.client_threads.chosen(clients),
        client_threads_default: spec.client_threads.default,
        requests_per_connection: spec.requests_per_connection,
        connection: super::connection_name(per_request),
        stalled_clients: spec.stalled_clients,
        open_file_limit: limit,
        placement: spec.placement.clone(),
        where_sides_run,
        network: spec.network.clone(),
    }
}

/// The clients a point can have under the open-file limit: `requested`, or fewer with the
/// reason (`extra` stalled clients need descriptors too).
fn capped_clients(requested: usize, extra: usize, limit: Option<u64>) -> (usize, Option<String>) {
    match limit.map(super::clients_allowed) {
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
    }
}

/// Why `model` cannot serve `clients` here at all, if it cannot: select beyond FD_SETSIZE, or
/// io_uring this kernel lacks (a remote server probes its own kernel and says so itself).
fn not_run(model: ServerModel, clients: usize, remote: bool) -> Option<NotRun> {
    if model == ServerModel::Select {
        super::select_refusal(clients).map(|r| (PointStatus::Refused, r))
    } else if model == ServerModel::Uring && !remote {
        sys::echo_ring::supported()
            .err()
            .map(|r| (PointStatus::Skipped, r))
    } else {
        None
    }
}

/// One point, measured or refused, as its record.
pub(super) fn point(
    spec: &ServersSpec,
    link: &Link,
    remote: Option<&dyn ServersHost>,
    (model, requested, per_request): (ServerModel, usize, bool),
    limit: Option<u64>,
    interrupt: &AtomicBool,
) -> ServersRecord {
    let extra = spec.stalled_clients;
    let (clients, capped) = capped_clients(requested, extra, limit);
    let place = where_sides_run(link, remote);
    let cfg = config(
        spec,
        place,
        (model, clients, per_request),
        requested,
        capped,
        limit,
    );
    let client_threads = cfg.client_threads;
    if let Some((status, reason)) = not_run(model, clients + extra, remote.is_some()) {
        let mut record = ServersRecord::new(cfg, status);
        record.reason = Some(reason);
        return record;
    }
    match measure(spec, link, remote, (model, clients, per_request), interrupt) {
        Err((PointStatus::Failed, reason)) => {
            let mut record = ServersRecord::new(cfg, PointStatus::Failed);
            record.errors = vec![reason];
            record
        }
        Err((status, reason)) => {
            let mut record = ServersRecord::new(cfg, status);
            record.reason = Some(reason);
            record
        }
        Ok(measured) => measured_record(
            spec,
            cfg,
            (client_threads, per_request),
            measured,
            interrupt,
        ),
    }
}

/// The record of a point that ran: its metrics, the server's errors, and the profile where
/// one was taken.
fn measured_record(
    spec: &ServersSpec,
    cfg: PointConfig,
    (client_threads, per_request): (usize, bool),
    (m, report, profile): (Measured, Result<ServerReport, String>, Option<Profile>),
    interrupt: &AtomicBool,
) -> ServersRecord {
    let mut errors: Vec<String> = Vec::new();
    match &report {
        Err(reason) => errors.push(reason.clone()),
        Ok(r) => errors.extend(r.errors.iter().cloned()),
    }
    let status = if interrupt.load(Ordering::SeqCst) {
        PointStatus::Interrupted
    } else if report.is_err() || m.mismatched > 0 {
        PointStatus::Failed
    } else {
        PointStatus::Completed
    };
    let mut record = ServersRecord::new(cfg, status);
    record.metrics = Some(PointMetrics::of(
        &m,
        report.as_ref().ok(),
        (client_threads, per_request),
    ));
    record.errors = errors;
    if spec.record_connections {
        record.connections = Some(m.spans);
    }
    if let Some(profile) = profile {
        record.profiled_window = Some(format!(
            "a window of its own right after the measured one ({:.1} s at most 2 s), the \
             server process's every thread sampled while the clients kept their load; \
             nothing in it is counted",
            spec.duration.as_secs_f64().min(2.0)
        ));
        record.profile = Some(profile);
    }
    record
}

/// The points of each client count (every model and connection mode): what one round visits
/// back to back.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::counters::{CounterEvent, CounterSample, CounterValue, Scope};
    use crate::measure::histogram::LatencyHistogram;
    use crate::servers::client_threads::ClientThreads;

    fn counted(v: f64) -> CounterValue {
        CounterValue::Counted {
            value: v,
            scope: Scope::UserAndKernel,
            multiplexed: false,
        }
    }

    fn report(cycles: CounterValue) -> ServerReport {
        let mut values: [CounterValue; 10] =
            std::array::from_fn(|i| counted(1000.0 * (i as f64 + 1.0)));
        values[CounterEvent::Cycles as usize] = cycles;
        values[CounterEvent::CacheMisses as usize] = CounterValue::Unavailable("no PMU".into());
        ServerReport {
            counters: CounterSample { values },
            cpu_time_ns: 123_456,
            voluntary_switches: 7,
            involuntary_switches: 3,
            threads: 2,
            peak_rss_bytes: Some(4096),
            rss_at_fork_bytes: None,
            accepted: 5,
            allowed_cpus: vec![0, 1],
            errors: vec![],
        }
    }

    fn measured(requests: u64, latency: bool) -> Measured {
        let mut h = LatencyHistogram::new();
        if latency {
            h.record(1500);
            h.record(2500);
        }
        Measured {
            requests,
            measured_s: 0.5,
            latency: h.summary(),
            distribution: crate::record::distribution::of_side(&h, latency),
            mismatched: 0,
            connection_errors: 1,
            connected: 4,
            failed_connects: 0,
            first_connect_error: Some("refused".into()),
            client_cpu_ns: 250_000_000,
            spans: vec![],
            connections_opened: 0,
            requests_all_phases: 0,
            unserved: 0,
        }
    }

    /// The JSON of a measured point's metrics (every counter, one unavailable, no cycles, no
    /// server report) and of a refused point, as results.jsonl keeps them: the typed record
    /// writes what the `serde_json::Value` it replaced wrote, byte for byte.
    #[test]
    fn records_keep_their_json_shape() {
        let mut out = String::new();
        for (m, r) in [
            (measured(100, true), Some(report(counted(5000.0)))),
            (
                measured(0, true),
                Some(report(CounterValue::Unavailable("cycles off".into()))),
            ),
            (measured(10, false), Some(report(counted(0.0)))),
            (measured(10, true), None),
        ] {
            let v = serde_json::to_value(PointMetrics::of(&m, r.as_ref(), (2, false))).unwrap();
            out += &serde_json::to_string_pretty(&v).unwrap();
            out += "\n";
        }
        // `bytepath servers --clients 2000` on two CPUs.
        let spec = ServersSpec {
            models: ServerModel::ALL.to_vec(),
            clients: vec![2000],
            size: 64,
            duration: Duration::from_secs(5),
            visits: 1,
            seed: 0,
            warmup: Duration::from_millis(200),
            rate: None,
            server_threads: 1,
            client_threads: ClientThreads::new(Some(2), &[0], "the load side"),
            requests_per_connection: None,
            connections: vec![false],
            stalled_clients: 0,
            record_connections: false,
            placement: super::super::Placement::parse(None, &[0, 1]).unwrap(),
            network: Default::default(),
            remote: None,
            profile: false,
            watch: Default::default(),
            margin: 0.05,
        };
        let link = Link::open(&spec.network).unwrap();
        let rec = point(
            &spec,
            &link,
            None,
            (ServerModel::Select, 2000, false),
            Some(100_000),
            &AtomicBool::new(false),
        );
        out += &serde_json::to_string_pretty(&rec.to_value()).unwrap();
        insta::assert_snapshot!(out);
    }
}
