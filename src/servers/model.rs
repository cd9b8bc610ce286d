//! The server models `bytepath servers` compares, and the one `match` that starts each.
use super::door::{Door, Doorkeeper};
use super::readiness::{self, Readiness};
use super::{blocking, uring, ServerStats};
use crate::error::ConfigError;
use std::net::TcpListener;
use std::sync::Arc;

/// How a server waits for and serves its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerModel {
    /// One client at a time, in accept order, with blocking calls.
    Iterative,
    /// A thread per client, blocking calls.
    Threaded,
    /// One thread, select(2).
    Select,
    /// One thread, poll(2).
    Poll,
    /// One thread per --server-threads, epoll(7) level-triggered.
    Epoll,
    /// One thread, io_uring: multishot accept, recv and send completions.
    Uring,
}

impl ServerModel {
    pub const ALL: [ServerModel; 6] = [
        ServerModel::Iterative,
        ServerModel::Threaded,
        ServerModel::Select,
        ServerModel::Poll,
        ServerModel::Epoll,
        ServerModel::Uring,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ServerModel::Iterative => "iterative",
            ServerModel::Threaded => "threaded",
            ServerModel::Select => "select",
            ServerModel::Poll => "poll",
            ServerModel::Epoll => "epoll",
            ServerModel::Uring => "uring",
        }
    }

    pub fn parse(text: &str) -> Result<ServerModel, ConfigError> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == text)
            .ok_or_else(|| {
                ConfigError(format!(
                    "{text:?}: unknown server model; allowed: iterative, threaded, select, poll, epoll, uring"
                ))
            })
    }

    /// Starts the server's threads on `listener`, letting in whom `door` says; they run until
    /// the process exits. `threads` is --server-threads (epoll only).
    pub fn start(
        self,
        listener: TcpListener,
        (size, threads): (usize, usize),
        door: Door,
        stats: &Arc<ServerStats>,
    ) -> std::io::Result<()> {
        let door = Arc::new(Doorkeeper::new(door));
        let at = (listener, door);
        match self {
            ServerModel::Iterative => blocking::start_iterative(at, size, stats),
            ServerModel::Threaded => blocking::start_threaded(at, size, stats),
            ServerModel::Select => readiness::start(Readiness::Select, at, size, 1, stats),
            ServerModel::Poll => readiness::start(Readiness::Poll, at, size, 1, stats),
            ServerModel::Epoll => readiness::start(Readiness::Epoll, at, size, threads, stats),
            ServerModel::Uring => uring::start(at, size, stats),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_parses_back_from_its_name() {
        for m in ServerModel::ALL {
            assert_eq!(ServerModel::parse(m.name()).unwrap(), m);
        }
        let e = ServerModel::parse("kqueue").unwrap_err();
        assert!(
            e.0.contains("\"kqueue\"") && e.0.contains("allowed: iterative"),
            "{e}"
        );
    }
}
