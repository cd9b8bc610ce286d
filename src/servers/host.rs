//! The server of every point when it runs on another host (`servers --remote`): what the study
//! asks that host for, as a trait the remote placement (`remote::client::RemoteServers`)
//! implements, so the study forks its server models here or there without knowing the
//! control protocol.
use super::process::{ServerSetup, ServerSide};
use crate::config::RemoteRun;
use crate::error::Error;
use std::net::Ipv4Addr;

/// A host that forks each point's server model.
pub trait ServersHost {
    /// The address the load generator connects to (the listener's port comes per point).
    fn addr(&self) -> Ipv4Addr;
    /// The host, in words, for the record: "the server at HOST:PORT (version, kernel)".
    fn describe(&self) -> String;
    /// Asks the host to fork the model `setup` names for one point of `clients` clients (the
    /// host places its threads: `setup.cpus` is not sent). A refusal of what was asked (a
    /// limit) is `Error::Config`; the point is then refused and the study goes on.
    fn start(&self, setup: ServerSetup<'_>, clients: usize) -> Result<Started, Error>;
}

/// The host's answer to one point.
pub enum Started {
    /// The model listens on `port` of the host.
    Accepted {
        port: u16,
        server: Box<dyn ServerSide>,
    },
    /// The model cannot run there (io_uring unavailable): why.
    Skipped(String),
}

/// How a command opens the host `--remote` names, once, when the study is ready for it.
pub type OpenHost<'a> = &'a dyn Fn(&RemoteRun) -> Result<Box<dyn ServersHost>, Error>;
