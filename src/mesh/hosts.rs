//! What the mesh asks of the hosts' `bytepath server`s, as a trait the remote placement
//! implements (`remote::client::MeshClient`), so the mesh schedules and records runs without
//! knowing the control protocol.
use crate::error::Error;
use crate::spec::{RunSpec, Target};
use std::sync::atomic::AtomicBool;

pub trait MeshHosts: Sync {
    /// Says hello to `host` (proving `token`) and checks that it runs peer tests; returns its
    /// version and kernel, or why not.
    fn check(&self, host: &Target, token: Option<&[u8]>) -> Result<String, String>;

    /// Asks `src`'s server to run `spec` against `dst`'s and returns the run record it sends
    /// back. `names` are (source, destination) as the mesh names them; `reverse`: the source
    /// sends and the destination measures (stream). A refusal is an input error; a server
    /// that cannot be reached or goes away is a failure.
    #[allow(clippy::too_many_arguments)]
    fn run_pair(
        &self,
        src: &Target,
        dst: &Target,
        names: (&str, &str),
        spec: &RunSpec,
        reverse: bool,
        token: Option<&[u8]>,
        interrupt: &AtomicBool,
    ) -> Result<serde_json::Value, Error>;

    /// A fresh token for servers started for this mesh only.
    fn fresh_token(&self) -> Result<Vec<u8>, Error>;
}
