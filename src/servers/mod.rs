//! `bytepath servers`: the seeds' comparison of TCP server designs (iterative, threaded,
//! select) extended to poll, epoll and io_uring, under many clients. Each (model, clients)
//! point forks a fresh server process (see `process`), drives it with the load generator
//! (`load`) on loopback, and writes one record (`record`) to the results folder as it ends.
pub mod answers;
pub mod blocking;
pub mod churn;
pub mod host;
pub mod line;
pub mod load;
pub mod model;
pub mod process;
pub mod profile_points;
pub mod readiness;
pub mod record;
pub mod report;
pub mod report_table;
pub mod study;
pub mod uring;
pub mod visits;

use crate::error::{bad, ConfigError};
use model::ServerModel;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

pub use study::run;

/// Descriptors a select server holds besides its clients' (standard streams, listener,
/// control pipes, perf counters): a point whose clients need more than FD_SETSIZE minus these
/// is refused for select.
pub const SELECT_RESERVED_FDS: usize = 24;
/// Descriptors each process holds besides one per client (the same list, plus epoll).
pub const RESERVED_FDS: usize = 64;

/// How the visits are ordered, as the marker and the report state it (the study
/// and the report both read it here).
pub const ORDER: &str = "rounds of visits: in each round the client counts in a seeded shuffled \
     order, at each the models back to back in an order drawn from the seed and reversed every \
     other round; --duration split evenly over a point's visits; one record per visit";

/// A validated `bytepath servers` invocation. Serialized, it is the marker's `spec` block: the
/// study's whole configuration (`seed` and `visits` under the keys they always had).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ServersSpec {
    pub models: Vec<ServerModel>,
    pub clients: Vec<usize>,
    #[serde(rename = "size_bytes")]
    pub size: usize,
    /// Each point's measured time, split evenly over its visits.
    #[serde(rename = "duration_s", serialize_with = "crate::config::seconds")]
    pub duration: Duration,
    /// Visits per point (`--visits`), in rounds ordered by `seed`.
    pub visits: usize,
    pub seed: u64,
    #[serde(rename = "warmup_s", serialize_with = "crate::config::seconds")]
    pub warmup: Duration,
    /// `--rate`: requests per second over all clients (open loop); `None`: closed loop.
    #[serde(rename = "rate_per_s")]
    pub rate: Option<f64>,
    pub server_threads: usize,
    pub client_threads: usize,
    pub requests_per_connection: Option<u64>,
    /// `--connection`: the connection modes measured, each a point dimension (`true`:
    /// per-request, every client connects again for each request).
    #[serde(serialize_with = "connection_names")]
    pub connections: Vec<bool>,
    pub stalled_clients: usize,
    pub record_connections: bool,
    pub placement: Placement,
    /// Where the server and the load generator run (`--netns`, `--mtu`, `--netem`).
    pub network: crate::config::Network,
    /// `--remote`: every point's server runs on `bytepath server` on another host.
    pub remote: Option<crate::config::RemoteRun>,
    /// `--profile`: a window of its own after each measured one, the server process sampled.
    pub profile: bool,
    /// `--settle`: how the study waits for a quiet machine (the quiet threshold is not yet
    /// applied per visit here).
    // Recorded through the arguments block (--settle, --quiet-threshold), so the spec
    // block, which --resume reads back, keeps its keys.
    #[serde(skip)]
    pub watch: crate::config::watch::Watch,
    /// `--margin`: the equivalence margin the report's verdicts are stated with (a share).
    pub margin: f64,
}

/// Where the server process and the load generator run (`--pin`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Placement {
    /// "split" or "none".
    pub pin: &'static str,
    /// CPUs of every server thread (inherited from the server's first thread); `None`: any.
    pub server_cpus: Option<Vec<usize>>,
    /// CPUs of the load generator's threads; `None`: any.
    pub client_cpus: Option<Vec<usize>>,
}

impl Placement {
    /// split: the server on the upper half of the allowed CPUs, the clients on the lower half,
    /// so the load generator never takes the server's CPU (the seeds ran them on two hosts).
    pub fn parse(text: Option<&str>, cpus: &[usize]) -> Result<Placement, ConfigError> {
        let split = cpus.len() >= 2;
        match text.unwrap_or(if split { "split" } else { "none" }) {
            "none" => Ok(Placement {
                pin: "none",
                server_cpus: None,
                client_cpus: None,
            }),
            "split" if split => {
                let (clients, server) = cpus.split_at(cpus.len() / 2);
                Ok(Placement {
                    pin: "split",
                    server_cpus: Some(server.to_vec()),
                    client_cpus: Some(clients.to_vec()),
                })
            }
            "split" => Err(bad(format!(
                "--pin split: needs at least 2 CPUs, this process may use {cpus:?}; allowed: none"
            ))),
            other => Err(bad(format!("--pin {other:?}: allowed: split, none"))),
        }
    }
}

impl ServersSpec {
    /// One visit's measured window: the point's duration over its visits.
    pub fn visit_duration(&self) -> Duration {
        self.duration / self.visits.max(1) as u32
    }

    /// Every (model, clients, per-request), models and connection modes interleaved within
    /// each client count (so a round visits them back to back and they pair).
    pub fn points(&self) -> Vec<(ServerModel, usize, bool)> {
        let modes = &self.connections;
        self.clients
            .iter()
            .flat_map(|&c| {
                modes
                    .iter()
                    .flat_map(move |&p| self.models.iter().map(move |&m| (m, c, p)))
            })
            .collect()
    }
}

/// The marker writes the connection modes by name.
fn connection_names<S: serde::Serializer>(modes: &[bool], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(modes.iter().map(|&p| connection_name(p)))
}

/// A connection mode's name as records and reports write it (`--connection`).
pub fn connection_name(per_request: bool) -> &'static str {
    if per_request {
        "per-request"
    } else {
        "persistent"
    }
}

/// Why select cannot serve `clients` (plus stalled ones), if it cannot.
pub fn select_refusal(clients: usize) -> Option<String> {
    let limit = crate::sys::events::FD_SETSIZE;
    let most = limit - SELECT_RESERVED_FDS;
    (clients > most).then(|| {
        format!(
            "select cannot watch {clients} clients: descriptors would pass FD_SETSIZE ({limit}); at most {most} clients here"
        )
    })
}

/// The most clients one process can hold under an open-file limit.
pub fn clients_allowed(open_file_limit: u64) -> usize {
    open_file_limit.saturating_sub(RESERVED_FDS as u64) as usize
}

/// What the server's threads share: thread counts, accepted connections, errors.
#[derive(Debug, Default)]
pub struct ServerStats {
    live: AtomicUsize,
    peak: AtomicUsize,
    accepted: AtomicU64,
    errors: Mutex<Vec<String>>,
}

/// Errors kept per point: the first few say what went wrong.
const ERRORS_KEPT: usize = 8;

impl ServerStats {
    pub fn thread_started(&self) {
        let now = self.live.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
    }
    pub fn thread_ended(&self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
    pub fn peak_threads(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
    pub fn accepted(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
    }
    pub fn accepted_count(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }
    /// Records an error (off the request path: errors end a connection or a thread).
    pub fn error(&self, message: String) {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        if errors.len() < ERRORS_KEPT {
            errors.push(message);
        }
    }
    pub fn errors(&self) -> Vec<String> {
        self.errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Starts a counted server thread; an error that ends it is recorded.
pub fn spawn_server_thread(
    name: &str,
    stats: &std::sync::Arc<ServerStats>,
    body: impl FnOnce() -> io::Result<()> + Send + 'static,
) -> io::Result<()> {
    let shared = std::sync::Arc::clone(stats);
    let label = name.to_string();
    shared.thread_started();
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            if let Err(e) = body() {
                shared.error(format!("server thread {label} stopped: {e}"));
            }
            shared.thread_ended();
        })
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_puts_the_server_on_the_upper_cpus_and_the_clients_below() {
        let p = Placement::parse(None, &[0, 1]).unwrap();
        assert_eq!(
            (p.pin, p.server_cpus, p.client_cpus),
            ("split", Some(vec![1]), Some(vec![0]))
        );
        let p = Placement::parse(Some("split"), &[2, 3, 5, 7]).unwrap();
        assert_eq!(
            (p.server_cpus, p.client_cpus),
            (Some(vec![5, 7]), Some(vec![2, 3]))
        );
        assert_eq!(
            Placement::parse(None, &[0]).unwrap().pin,
            "none",
            "one CPU: nothing to split"
        );
        let e = Placement::parse(Some("split"), &[0]).unwrap_err().0;
        assert!(e.contains("at least 2 CPUs"), "{e}");
        let e = Placement::parse(Some("half"), &[0, 1]).unwrap_err().0;
        assert!(e.contains("allowed: split, none"), "{e}");
    }

    #[test]
    fn select_is_refused_beyond_fd_setsize_with_the_reason() {
        assert_eq!(select_refusal(1000), None);
        let reason = select_refusal(2000).unwrap();
        assert!(
            reason.contains("FD_SETSIZE (1024)") && reason.contains("at most 1000"),
            "{reason}"
        );
    }

    #[test]
    fn the_open_file_limit_leaves_room_for_the_process_own_descriptors() {
        assert_eq!(clients_allowed(20000), 19936);
        assert_eq!(clients_allowed(10), 0);
    }
}
