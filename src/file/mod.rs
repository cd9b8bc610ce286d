//! `bytepath file`: the seeds' zero-copy file-server study. A server thread sends a file over
//! loopback TCP with read+send, sendfile(2), splice(2) or mmap(2)+send, a client thread
//! receives it; each (size, mechanism) is timed over `--reps` transfers with the page cache warm
//! or dropped (cold), and the results become a table, results.jsonl and a report. `study` is
//! what the study driver runs; `rounds`, the transfers in their order.
pub(crate) mod answers;

pub(crate) mod mechanisms;
pub(crate) mod openmetrics;
pub(crate) mod record;
pub(crate) mod report;
mod rounds;
pub(crate) mod server;
mod spec;
mod study;
pub(crate) mod test_files;
pub(crate) mod transfer;

use crate::transport::FlowConnector;
pub use rounds::{prepare_cache, read_through};
use server::FileServer;
pub use spec::{check_pipe_size, Cache, FileSpec, MAX_CHUNK};
pub use study::{Transfers, KIND};
use test_files::{ServedFile, TestFolder};

/// How the transfers are ordered (`rounds`), as the marker and the report state it.
pub const ORDER: &str = "per size, every repetition a round: the mechanisms back to back in an \
     order drawn from the seed afresh for every two repetitions, reversed on the second of the two";

/// Where the server side of every transfer runs: a thread here, on a flow from the link's
/// connector, or `bytepath server` on another host (`--remote`).
#[derive(Clone, Copy)]
pub enum Server<'a> {
    Here(&'a dyn FlowConnector),
    Remote(&'a dyn FileServer),
}

/// Where the served files come from.
#[derive(Clone, Copy)]
enum Source<'a> {
    User(&'a ServedFile),
    Test(&'a TestFolder),
    /// The remote server writes a test file per transfer.
    Server,
}
