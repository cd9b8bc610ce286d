//! The command line -> validated specs and opened placements, one file per command, and the
//! glue that hands them to the studies: clap's structs (`cli`) in; specs (`spec`), remote
//! targets with their tokens, and placements (`sides`, `remote`) out. All input checking
//! lives here or in `spec`'s parsers, and every error is one line that names the flag and
//! says what is allowed.
pub mod compare;
pub mod export;
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
pub mod shell;
pub mod sweep;

use crate::cli::StreamArgs;
use crate::error::{Error, Status};
use crate::report::stream::{self, JsonStream};

/// The CPUs this process may use, which pinning and placement are computed on.
pub fn allowed_cpus() -> Result<Vec<usize>, Error> {
    crate::sys::affinity::allowed_cpus()
        .map_err(|e| Error::Failed(format!("reading this process's CPU affinity: {e}")))
}

/// A command's flags as given (the text typed, or each default), for the marker: derived from
/// the clap structs, so a flag added there is recorded without another line here.
pub fn as_given(args: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(args).expect("flags are text, numbers, booleans and paths")
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

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::{CommandFactory, Parser};
    use serde_json::Value;

    fn as_given(line: &[&str]) -> Value {
        let cli = Cli::try_parse_from([&["bytepath"][..], line].concat()).unwrap();
        match cli.command {
            Command::Sweep(a) => super::as_given(&a),
            Command::Ipc(a) => super::as_given(&a),
            Command::File(a) => super::as_given(&a),
            Command::Servers(a) => super::as_given(&a),
            Command::Mesh(a) => super::as_given(&a),
            Command::Run(a) => super::as_given(&a),
            other => unreachable!("{other:?} writes no marker"),
        }
    }

    /// Every flag a study takes lands in its marker's `arguments`, under its clap id (sweep's
    /// floor keeps the marker's older key, `visits`): no hand-kept list to drift.
    #[test]
    fn every_flag_of_a_study_is_recorded_as_given() {
        let tree = Cli::command();
        for (line, name) in [
            (&["sweep"][..], "sweep"),
            (&["ipc"], "ipc"),
            (&["file"], "file"),
            (&["servers"], "servers"),
            (&["mesh", "--hosts", "a,b"], "mesh"),
            (&["run", "-m", "send"], "run"),
        ] {
            let given = as_given(line);
            let sub = tree.find_subcommand(name).unwrap();
            for arg in sub.get_arguments().filter(|a| a.get_long().is_some()) {
                let id = arg.get_id().as_str();
                let key = if (name, id) == ("sweep", "min_visits") {
                    "visits"
                } else {
                    id
                };
                assert!(
                    given.get(key).is_some(),
                    "{name} --{id} is not recorded: {given}"
                );
            }
        }
    }

    #[test]
    fn the_sweep_records_what_its_old_builder_left_out() {
        let given = as_given(&[
            "sweep",
            "--mechanisms",
            "uring",
            "--queue-depth",
            "8",
            "--recv",
            "uring-recv",
            "--profile",
            "--min-visits",
            "4",
        ]);
        assert_eq!(given["queue_depth"], "8");
        assert_eq!(given["recv"], "uring-recv");
        assert_eq!(given["profile"], true);
        assert_eq!(given["visits"], "4");
        assert_eq!(given["seed"], Value::Null);
        assert_eq!(
            given["sizes"], "256,1K,4K,16K,64K,512K",
            "a default is recorded too"
        );
    }
}
