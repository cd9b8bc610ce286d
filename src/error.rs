//! The library's error type and command status. Input errors are `Config` (exit 2); the rest
//! are run failures (exit 1).
use crate::config::ConfigError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("setting up the flows failed: {0}")]
    Setup(#[source] std::io::Error),
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Failed(String),
}

/// How a command ended, for the exit code: 0, 1 or 130.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Success,
    /// A failed run, a verify mismatch, or a regression found by `compare`.
    Failed,
    /// Ctrl-C; what was measured was kept.
    Interrupted,
}
