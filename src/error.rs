//! The library's error type and command status. Input errors are `Config` (exit 2); the rest
//! are run failures (exit 1).
use crate::transport::LinkError;
use std::path::PathBuf;

/// A user-input error: printed as one line, exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The one builder of an input error: `msg` names the value and says what is allowed. Generic
/// so that a function returning `Error` and one returning `ConfigError` both call it as is.
pub fn bad<E: From<ConfigError>>(msg: impl Into<String>) -> E {
    ConfigError(msg.into()).into()
}

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

/// A placement that cannot be set up: refused (an input the link cannot carry, exit 2) or
/// failed (exit 1), as every other error of its kind.
impl From<LinkError> for Error {
    fn from(e: LinkError) -> Error {
        match e {
            LinkError::Refused(why) => Error::Config(ConfigError(why)),
            LinkError::Failed(why) => Error::Failed(why),
        }
    }
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
