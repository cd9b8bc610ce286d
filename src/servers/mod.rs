//! `bytepath servers`: the seeds' comparison of TCP server designs (iterative, threaded,
//! select) extended to poll, epoll and io_uring, under many clients. Each (model, clients)
//! point forks a fresh server process (see `process`), drives it with the load generator
//! (`load`) on loopback, and writes one record (`record`) to the results folder as it ends.
pub mod blocking;
pub mod load;
pub mod model;
pub mod process;
pub mod readiness;
pub mod record;
pub mod report;
pub mod uring;

use crate::cli::ServersArgs;
use crate::config::{parse_bytes, parse_duration, ConfigError, MAX_MESSAGE_SIZE};
use crate::sweep::spec::parse_list;
use model::ServerModel;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

pub use record::command;

/// Descriptors a select server holds besides its clients' (standard streams, listener,
/// control pipes, perf counters): a point whose clients need more than FD_SETSIZE minus these
/// is refused for select.
pub const SELECT_RESERVED_FDS: usize = 24;
/// Descriptors each process holds besides one per client (the same list, plus epoll).
pub const RESERVED_FDS: usize = 64;

/// A validated `bytepath servers` invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct ServersSpec {
    pub models: Vec<ServerModel>,
    pub clients: Vec<usize>,
    pub size: usize,
    pub duration: Duration,
    pub warmup: Duration,
    pub rate: Option<f64>,
    pub server_threads: usize,
    pub client_threads: usize,
    pub requests_per_connection: Option<u64>,
    pub stalled_clients: usize,
    pub record_connections: bool,
    pub placement: Placement,
    /// Where the server and the load generator run (`--netns`, `--mtu`, `--netem`).
    pub network: crate::config::Network,
    /// `--remote`: every point's server runs on `bytepath server` on another host.
    pub remote: Option<crate::config::RemoteRun>,
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

fn bad(msg: String) -> ConfigError {
    ConfigError(msg)
}

fn positive(flag: &str, text: &str) -> Result<u64, ConfigError> {
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(bad(format!(
            "{flag} {text:?}: allowed: a whole number above 0"
        ))),
    }
}

impl ServersSpec {
    pub fn from_args(args: &ServersArgs, cpus: &[usize]) -> Result<ServersSpec, ConfigError> {
        let models = parse_list("--models", &args.models, ServerModel::parse)?;
        let clients = parse_list("--clients", &args.clients, |c| match c.parse::<usize>() {
            Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
            _ => Err(bad(format!(
                "{c:?}: allowed: a client count from 1 to 1000000"
            ))),
        })?;
        let size = match parse_bytes(&args.size) {
            Some(n) if n >= 1 && n <= MAX_MESSAGE_SIZE as u64 => n as usize,
            _ => {
                return Err(bad(format!(
                    "--size {:?}: allowed: a request size from 1 B to 64 MiB",
                    args.size
                )))
            }
        };
        let rate = match args.rate.as_deref() {
            None => None,
            Some(text) => match text.trim().parse::<f64>() {
                Ok(r) if r.is_finite() && r > 0.0 => Some(r),
                _ => {
                    return Err(bad(format!(
                        "--rate {text:?}: allowed: requests per second above 0, such as 10000"
                    )))
                }
            },
        };
        let server_threads = positive("--server-threads", &args.server_threads)? as usize;
        if server_threads > 1 && models.iter().any(|&m| m != ServerModel::Epoll) {
            return Err(bad(format!(
                "--server-threads {server_threads}: only the epoll model has worker threads; allowed: 1, or --models epoll"
            )));
        }
        let network = crate::config::Network::from_args(&args.network)?;
        // Refuses --netns with --remote: two placements at once.
        let remote = crate::config::RemoteRun::from_args(&args.remote, &network)?;
        let placement = match &remote {
            None => Placement::parse(args.pin.as_deref(), cpus)?,
            Some(_) => remote_placement(args, cpus)?,
        };
        Ok(ServersSpec {
            models,
            clients,
            size,
            duration: parse_duration("--duration", &args.duration, false)?,
            warmup: parse_duration("--warmup", &args.warmup, true)?,
            rate,
            server_threads,
            client_threads: positive("--client-threads", &args.client_threads)? as usize,
            requests_per_connection: args
                .requests_per_connection
                .as_deref()
                .map(|t| positive("--requests-per-connection", t))
                .transpose()?,
            stalled_clients: args.stalled_clients,
            record_connections: args.record_connections,
            placement,
            network,
            remote,
        })
    }

    /// Every (model, clients), models interleaved within each client count.
    pub fn points(&self) -> Vec<(ServerModel, usize)> {
        self.clients
            .iter()
            .flat_map(|&c| self.models.iter().map(move |&m| (m, c)))
            .collect()
    }
}

/// With --remote the server process runs on the other host, where this host cannot place it,
/// and the load generator has this host to itself: nothing to split, so `--pin split` is
/// refused and the placement is none. The stalled clients of the robustness tests and
/// `--reverse` (a `run` flag) do not apply.
fn remote_placement(args: &ServersArgs, cpus: &[usize]) -> Result<Placement, ConfigError> {
    if args.remote.reverse {
        return Err(bad(
            "--reverse with servers: the server always runs on the --remote host and this host always runs the clients; --reverse is for `run` (stream) only".into(),
        ));
    }
    if args.stalled_clients > 0 {
        return Err(bad(
            "--stalled-clients with --remote: the stalled clients are a test on one host; allowed: 0".into(),
        ));
    }
    match args.pin.as_deref() {
        None | Some("none") => Placement::parse(Some("none"), cpus),
        Some("split") => Err(bad(
            "--pin split with --remote: the server process runs on the other host, where this host cannot place it, and the load generator has this host to itself; allowed: none".into(),
        )),
        Some(other) => Err(bad(format!("--pin {other:?}: allowed: none (with --remote)"))),
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
    use clap::Parser;

    fn spec(extra: &[&str]) -> Result<ServersSpec, ConfigError> {
        let cli = crate::cli::Cli::parse_from([&["bytepath", "servers"][..], extra].concat());
        match cli.command {
            crate::cli::Command::Servers(args) => ServersSpec::from_args(&args, &[0, 1]),
            _ => unreachable!("parsed a servers command"),
        }
    }

    #[test]
    fn every_model_and_client_count_is_one_point() {
        let s = spec(&["--models", "epoll,uring", "--clients", "5,100"]).unwrap();
        assert_eq!(
            s.points(),
            vec![
                (ServerModel::Epoll, 5),
                (ServerModel::Uring, 5),
                (ServerModel::Epoll, 100),
                (ServerModel::Uring, 100)
            ]
        );
    }

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

    #[test]
    fn worker_threads_are_refused_for_models_without_them() {
        let e = spec(&["--models", "poll", "--server-threads", "4"]).unwrap_err();
        assert!(
            e.0.starts_with("--server-threads 4: only the epoll model"),
            "{e}"
        );
        assert!(spec(&["--models", "epoll", "--server-threads", "2"]).is_ok());
        let e = spec(&["--rate=-5"]).unwrap_err();
        assert!(e.0.contains("--rate \"-5\""), "{e}");
    }
}
