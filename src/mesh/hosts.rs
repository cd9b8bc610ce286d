//! What the mesh asks of the hosts' `bytepath server`s, as a trait the remote placement
//! implements (`remote::client::MeshClient`), so the mesh schedules and records runs without
//! knowing the control protocol.
use crate::config::{RunSpec, Target};
use crate::error::Error;
use crate::probe::canary::Canary;
use std::sync::atomic::AtomicBool;

/// One run of a point from one host to another.
pub struct PairRun<'a> {
    pub src: &'a Target,
    pub dst: &'a Target,
    /// (source, destination) as the mesh names them, for the record.
    pub names: (&'a str, &'a str),
    pub spec: &'a RunSpec,
    /// The source sends and the destination measures (stream).
    pub reverse: bool,
    pub token: Option<&'a [u8]>,
}

pub trait MeshHosts: Sync {
    /// Says hello to `host` (proving `token`) and checks that it runs peer tests; returns its
    /// version and kernel, or why not.
    fn check(&self, host: &Target, token: Option<&[u8]>) -> Result<String, String>;

    /// Asks the source's server to run `run` against the destination's and returns the run
    /// record it sends back. A refusal is an input error; a server that cannot be reached or
    /// goes away is a failure.
    fn run_pair(
        &self,
        run: &PairRun<'_>,
        interrupt: &AtomicBool,
    ) -> Result<serde_json::Value, Error>;

    /// A fresh token for servers started for this mesh only.
    fn fresh_token(&self) -> Result<Vec<u8>, Error>;

    /// Asks `host`'s server to measure the canary on itself; `Err` says why there is none (an
    /// older server, one busy with another run, or one that cannot be reached).
    fn canary(&self, host: &Target, token: Option<&[u8]>) -> Result<Canary, String>;
}
