//! The command line -> validated specs and opened placements, one file per command, and the
//! glue that hands them to the studies: clap's structs (`cli`) in; specs (`spec`), remote
//! targets with their tokens, and placements (`sides`, `remote`) out. All input checking
//! lives here or in `spec`'s parsers, and every error is one line that names the flag and
//! says what is allowed.
pub mod compare;
pub mod file;
pub mod ipc;
pub mod mesh;
pub mod network;
pub mod probe;
pub mod remote;
pub mod report;
pub mod run;
pub mod server;
pub mod servers;
pub mod sweep;

use crate::error::Error;

/// The CPUs this process may use, which pinning and placement are computed on.
pub fn allowed_cpus() -> Result<Vec<usize>, Error> {
    crate::sys::affinity::allowed_cpus()
        .map_err(|e| Error::Failed(format!("reading this process's CPU affinity: {e}")))
}
