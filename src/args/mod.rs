//! The command line -> validated specs and opened placements, one file per command, and the
//! glue that hands them to the studies: clap's structs (`cli`) in; specs (`spec`), remote
//! targets with their tokens, and placements (`sides`, `remote`) out. All input checking
//! lives here or in `spec`'s parsers, and every error is one line that names the flag and
//! says what is allowed.
pub mod compare;
pub mod export;
pub mod file;
pub mod health;
pub mod ipc;
pub mod mesh;
pub mod network;
pub mod normalize;
pub mod probe;
pub mod remote;
pub mod report;
pub mod run;
pub mod server;
pub mod servers;
pub mod shell;
pub mod sweep;
pub mod watch;

use crate::cli::StreamArgs;
use crate::error::{Error, Status};
use crate::report::stream::{self, JsonStream};

/// The CPUs this process may use, which pinning and placement are computed on.
pub fn allowed_cpus() -> Result<Vec<usize>, Error> {
    crate::sys::affinity::allowed_cpus()
        .map_err(|e| Error::Failed(format!("reading this process's CPU affinity: {e}")))
}

/// `--json-stream`: a stream that owns stdout (text goes to stderr from now on), or none.
/// `json`: whether `--json` was given too, which wants stdout as well and is refused.
pub fn stream(args: &StreamArgs, json: bool) -> Result<JsonStream, Error> {
    if json && args.json_stream {
        return Err(crate::error::ConfigError(
            "--json with --json-stream: both print JSON on stdout; choose one (the stream's point lines hold the records)".into(),
        )
        .into());
    }
    if args.json_stream {
        JsonStream::take_stdout()
    } else {
        Ok(JsonStream::default())
    }
}

/// Ends `stream` with how the command ended, and hands the result on.
pub fn streamed(stream: &JsonStream, result: Result<Status, Error>) -> Result<Status, Error> {
    stream.end(
        stream::exit_code(&result),
        result.as_ref().err().map(ToString::to_string),
    );
    result
}
