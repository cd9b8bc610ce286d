//! The library's error type. Input errors are `Config` (exit 2); the rest are run failures.
use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("setting up the flows failed: {0}")]
    Setup(#[source] std::io::Error),
}
