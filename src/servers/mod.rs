//! `bytepath servers`: the seeds' comparison of TCP server designs (iterative, threaded,
//! select) extended to poll, epoll and io_uring, under many clients. Each (model, clients)
//! point forks a fresh server process (see `process`), drives it with the load generator
//! (`load`) on loopback, and writes one record (`record`) to the results folder as it ends.
pub(crate) mod answers;
pub(crate) mod blocking;
pub(crate) mod churn;
pub(crate) mod client_threads;
pub(crate) mod door;
pub(crate) mod host;
pub(crate) mod leaders;
pub(crate) mod line;
pub(crate) mod load;
pub(crate) mod model;
pub(crate) mod openmetrics;
pub(crate) mod percentiles;
pub(crate) mod point;
pub(crate) mod process;
pub(crate) mod profile_points;
pub(crate) mod readiness;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod report_table;
pub(crate) mod spec;
pub(crate) mod study;
pub(crate) mod uring;
pub(crate) mod visits;
/// Each synthetic point's own round-to-round wobble, for the answers' and churn's tests.
#[cfg(test)]
mod wobble;

use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

pub use spec::{connection_name, Placement, ServersSpec};
pub use study::{Servers, KIND};

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
