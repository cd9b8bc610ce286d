//! The command line -> validated specs and opened placements, one file per command, and the
//! glue that hands them to the studies: clap's structs (`cli`) in; specs (`spec`), remote
//! targets with their tokens, and placements (`sides`, `remote`) out. All input checking
//! lives here or in `spec`'s parsers, and every error is one line that names the flag and
//! says what is allowed.
pub mod compare;
pub mod export;
pub mod file;
pub(crate) mod gso;
pub(crate) mod health;
pub mod ipc;
pub mod keygen;
pub mod mesh;
pub(crate) mod network;
pub(crate) mod normalize;
pub mod probe;
pub(crate) mod remote;
pub mod report;
pub mod run;
pub mod server;
pub mod servers;
pub mod shell;
pub(crate) mod socket_buffers;
pub mod sweep;
pub(crate) mod watch;

#[cfg(test)]
mod added_study_tests;

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
    /// floor and servers' placement keep the marker's older keys, `visits` and `pin`): no
    /// hand-kept list to drift.
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
                let key = match (name, id) {
                    ("sweep", "min_visits") => "visits",
                    ("servers", "placement") => "pin",
                    _ => id,
                };
                assert!(
                    given.get(key).is_some(),
                    "{name} --{id} is not recorded: {given}"
                );
            }
        }
    }

    /// Reads a marker's `arguments` back into the command's flags.
    fn read_back<T: serde::de::DeserializeOwned>(given: Value) -> T {
        serde_json::from_value(given).expect("a marker's arguments read back")
    }

    /// What a study records of its command line is enough to rebuild the same spec: recorded,
    /// read back and parsed again, every study's spec is equal to the one it ran with.
    #[test]
    fn every_studys_recorded_flags_rebuild_the_same_spec() {
        let cpus = [0, 1];
        let parse = |line: &[&str]| {
            let cli = Cli::try_parse_from([&["bytepath"][..], line].concat()).unwrap();
            cli.command
        };
        let sweep = [
            "sweep",
            "--seed",
            "9",
            "--min-visits",
            "4",
            "--recv",
            "uring-recv",
            "--profile",
        ];
        let Command::Sweep(a) = parse(&sweep) else {
            unreachable!()
        };
        let b: crate::cli::SweepArgs = read_back(super::as_given(&a));
        assert_eq!(
            super::sweep::sweep_spec(&b, &cpus).unwrap(),
            super::sweep::sweep_spec(&a, &cpus).unwrap()
        );
        let Command::Ipc(a) = parse(&[
            "ipc",
            "--seed",
            "3",
            "--visits",
            "5",
            "--pipe-sizes",
            "64K,1M",
        ]) else {
            unreachable!()
        };
        let b: crate::cli::IpcArgs = read_back(super::as_given(&a));
        assert_eq!(
            super::ipc::ipc_spec(&b, &cpus).unwrap(),
            super::ipc::ipc_spec(&a, &cpus).unwrap()
        );
        let Command::File(a) = parse(&[
            "file",
            "--seed",
            "4",
            "--sizes",
            "4K,1M",
            "--verify",
            "--cache",
            "warm,cold",
        ]) else {
            unreachable!()
        };
        let b: crate::cli::FileArgs = read_back(super::as_given(&a));
        assert_eq!(
            super::file::file_spec(&b, &cpus).unwrap(),
            super::file::file_spec(&a, &cpus).unwrap()
        );
        let Command::Servers(a) = parse(&[
            "servers",
            "--seed",
            "5",
            "--visits",
            "2",
            "--clients",
            "5,15",
        ]) else {
            unreachable!()
        };
        let b: crate::cli::ServersArgs = read_back(super::as_given(&a));
        assert_eq!(
            super::servers::servers_spec(&b, &cpus).unwrap(),
            super::servers::servers_spec(&a, &cpus).unwrap()
        );
        let Command::Mesh(a) =
            parse(&["mesh", "--hosts", "10.0.0.1,10.0.0.2:5302", "--visits", "2"])
        else {
            unreachable!()
        };
        let b: crate::cli::MeshArgs = read_back(super::as_given(&a));
        assert_eq!(
            super::mesh::mesh_spec(&b).unwrap(),
            super::mesh::mesh_spec(&a).unwrap()
        );
        let Command::Run(a) = parse(&[
            "run",
            "-m",
            "uring",
            "--queue-depth",
            "8",
            "-s",
            "64K",
            "--verify",
        ]) else {
            unreachable!()
        };
        let b: crate::cli::RunArgs = read_back(super::as_given(&a));
        assert_eq!(
            super::run::run_spec(&b, &cpus).unwrap(),
            super::run::run_spec(&a, &cpus).unwrap()
        );
    }

    /// `--warmup` is one flag with one help text: the defaults it states are the ones taken.
    #[test]
    fn each_command_warms_up_for_the_default_its_help_states() {
        use crate::cli::WarmupArgs;
        use std::time::Duration;
        let tree = Cli::command();
        let help = tree.find_subcommand("run").unwrap().get_arguments();
        let help = help
            .filter(|a| a.get_id() == "warmup")
            .map(|a| a.get_help().unwrap().to_string());
        let help = help.collect::<String>().replace('\n', " ");
        for stated in ["run 1s", "sweep 25ms", "ipc, servers and mesh 200ms"] {
            assert!(help.contains(stated), "{stated:?} not in {help:?}");
        }
        let parse = |line: &[&str]| {
            Cli::try_parse_from([&["bytepath"][..], line].concat())
                .unwrap()
                .command
        };
        let cpus = [0, 1];
        let Command::Run(a) = parse(&["run", "-m", "send"]) else {
            unreachable!()
        };
        assert_eq!(
            super::run::run_spec(&a, &cpus).unwrap().warmup,
            WarmupArgs::RUN
        );
        assert_eq!(WarmupArgs::RUN, Duration::from_secs(1));
        let Command::Sweep(a) = parse(&["sweep"]) else {
            unreachable!()
        };
        assert_eq!(
            super::sweep::sweep_spec(&a, &cpus).unwrap().warmup,
            Duration::from_millis(25)
        );
        let Command::Ipc(a) = parse(&["ipc"]) else {
            unreachable!()
        };
        assert_eq!(
            super::ipc::ipc_spec(&a, &cpus).unwrap().warmup,
            Duration::from_millis(200)
        );
        let Command::Servers(a) = parse(&["servers"]) else {
            unreachable!()
        };
        assert_eq!(
            super::servers::servers_spec(&a, &cpus).unwrap().warmup,
            Duration::from_millis(200)
        );
        let Command::Mesh(a) = parse(&["mesh", "--hosts", "10.0.0.1,10.0.0.2"]) else {
            unreachable!()
        };
        assert_eq!(
            super::mesh::mesh_spec(&a).unwrap().warmup,
            Duration::from_millis(200)
        );
        let Command::Sweep(a) = parse(&["sweep", "--warmup", "0s"]) else {
            unreachable!()
        };
        assert_eq!(
            super::sweep::sweep_spec(&a, &cpus).unwrap().warmup,
            Duration::ZERO
        );
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
