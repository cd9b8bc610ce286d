//! `bytepath file`: the seeds' zero-copy file-server study. A server thread sends a file over
//! loopback TCP with read+send, sendfile(2), splice(2) or mmap(2)+send, a client thread
//! receives it; each (size, mechanism) is timed over `--reps` transfers with the page cache warm
//! or dropped (cold), and the results become a table, results.jsonl and a report.
pub mod answers;
mod measure;
pub mod mechanisms;
pub mod record;
pub mod report;
pub mod server;
pub mod test_files;
pub mod transfer;

use crate::config::{FlowPlacement, Network, Pinning, RemoteRun};
use crate::environment::Environment;
use crate::error::{ConfigError, Error, Status};
use crate::measure::counters::CounterSelection;
use crate::report::folder::{self, StudyOutput};
use crate::transport::FlowConnector;
pub use measure::{prepare_cache, read_through};
use mechanisms::FileMechanism;
use record::{FileConfig, FileStudy, TransferRecord, SCHEMA_VERSION};
use server::FileServer;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use test_files::{ServedFile, TestFolder};

pub const FILE_KIND: &str = crate::report::study_kind::StudyKind::File.marker();
/// A chunk above this is refused: it would be one huge buffer, not a chunk.
pub const MAX_CHUNK: u64 = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    Warm,
    Cold,
}

impl Cache {
    pub fn name(self) -> &'static str {
        match self {
            Cache::Warm => "warm",
            Cache::Cold => "cold",
        }
    }

    /// One `--cache` value, or why it is refused.
    pub fn parse(text: &str) -> Result<Cache, ConfigError> {
        match text {
            "warm" => Ok(Cache::Warm),
            "cold" => Ok(Cache::Cold),
            other => Err(ConfigError(format!(
                "{other:?}: allowed: warm, cold (one or both, comma-separated: warm,cold)"
            ))),
        }
    }
}

/// A validated `bytepath file` invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSpec {
    /// Test file sizes; empty with `--file`.
    pub sizes: Vec<u64>,
    pub mechanisms: Vec<FileMechanism>,
    pub chunk: usize,
    /// The page-cache states measured, in `--cache` order (the first one for `--profile`).
    pub caches: Vec<Cache>,
    pub user_file: Option<PathBuf>,
    pub reps: u32,
    /// The seed each repetition's mechanism order is drawn from (`measure::ORDER`).
    pub seed: u64,
    pub verify: bool,
    pub counters: CounterSelection,
    pub pinning: Pinning,
    pub cpus: Vec<usize>,
    /// Where the server and client run (`--netns`, `--mtu`, `--netem`).
    pub network: Network,
    /// `--remote`: `bytepath server` there writes and sends the files; this host receives.
    pub remote: Option<RemoteRun>,
    /// `--profile`: one more transfer per size and mechanism with both threads sampled.
    pub profile: bool,
    /// `--margin`: the equivalence margin of the answers (a share).
    pub margin: f64,
}

impl FileSpec {
    /// Where the server (the flow's sending end) and the client run.
    fn placement(&self) -> FlowPlacement {
        self.pinning.placement(0, &self.cpus)
    }

    fn config(&self, sizes: &[u64], server: Server<'_>) -> FileConfig {
        let remote = self.remote.as_ref().map(|r| r.target.to_string());
        let (where_sides_run, timing) = match server {
            Server::Here(connector) => (
                connector.describe(),
                "CLOCK_MONOTONIC (Instant): server's first system call of the transfer to the client's receipt of the last byte",
            ),
            Server::Remote(_) => (
                format!(
                    "remote: bytepath server at {} wrote each test file, prepared its cache and sent it; this host received{} and measured",
                    remote.as_deref().unwrap_or_default(),
                    if self.verify { ", hashed" } else { "" }
                ),
                "CLOCK_MONOTONIC (Instant) on this host: from just before it told the server to send (FileGo) to its receipt of the last byte; includes one network round trip",
            ),
        };
        FileConfig {
            sizes_bytes: sizes.to_vec(),
            mechanisms: self.mechanisms.clone(),
            chunk_bytes: self.chunk,
            cache: self
                .caches
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(","),
            user_file: self.user_file.as_ref().map(|p| p.display().to_string()),
            reps: self.reps,
            seed: Some(self.seed),
            order: Some(measure::ORDER.into()),
            verify: self.verify,
            counters: self.counters.name().into(),
            where_sides_run,
            remote,
            network: self.network.clone(),
            pin: self.pinning.name(),
            placement: self.placement(),
            recv_buffer_bytes: transfer::RECV_BUFFER,
            timing: timing.into(),
            margin: self.margin,
        }
    }
}

/// splice moves at most a pipe's worth per call, and the pipe is sized to the chunk.
pub fn check_pipe_size(chunk: usize, text: &str) -> Result<(), ConfigError> {
    let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
        .unwrap_or(1 << 20);
    if chunk > max {
        return Err(ConfigError(format!(
            "--chunk {text:?}: splice sizes its pipe to the chunk, and pipe-max-size is {max} B; allowed: up to {max} B with splice"
        )));
    }
    Ok(())
}

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

/// The user's file (`--file`) if one is given, and whether test files are written here (not
/// with `--file`, nor with `--remote`, whose server writes them and checks its own space);
/// refuses before anything is measured when the temporary folder lacks room for them. Also
/// the sizes measured: the user's file's own, or `--sizes`.
fn files_to_send(spec: &FileSpec) -> Result<(Option<ServedFile>, bool, Vec<u64>), Error> {
    let user_file = match &spec.user_file {
        Some(path) => Some(test_files::user_file(path, spec.verify)?),
        None => None,
    };
    let temp = std::env::temp_dir();
    let local_files = user_file.is_none() && spec.remote.is_none();
    if local_files {
        let available = test_files::available_space(&temp).map_err(|source| Error::File {
            path: temp.clone(),
            source,
        })?;
        test_files::check_space(&spec.sizes, &temp, available)?;
    }
    let sizes = match &user_file {
        Some(f) => vec![f.len],
        None => spec.sizes.clone(),
    };
    Ok((user_file, local_files, sizes))
}

/// Measures every transfer `spec` asks for, its server side on `server`, into a new results
/// folder; writes the report and prints the table (or the study as JSON).
pub fn run(
    spec: &FileSpec,
    output: &StudyOutput,
    server: Server<'_>,
    interrupt: &AtomicBool,
) -> Result<Status, Error> {
    let (user_file, local_files, sizes) = files_to_send(spec)?;
    let temp = std::env::temp_dir();
    let marker = folder::marker(
        FILE_KIND,
        serde_json::to_value(spec.config(&sizes, server)).expect("JSON"),
        output.arguments.clone(),
        sizes.len() * spec.mechanisms.len() * spec.caches.len() * spec.reps as usize,
        measure::ORDER,
    );
    let (mut results, _) =
        folder::open_with(output.out.as_deref(), false, &marker, record::csv_columns())?;
    // Each transfer is a visit line; the summaries per (size, mechanism) are the point lines.
    results.stream_to(output, "file", &marker, folder::StreamAs::Visits);
    // Removed on drop: on every return from here on, `?` included, and after Ctrl-C, which only
    // sets `interrupt` and lets this function return normally.
    let test_folder = match local_files {
        false => None,
        true => Some(TestFolder::create(&temp).map_err(|source| Error::File {
            path: temp.clone(),
            source,
        })?),
    };
    announce(spec, &test_folder, &results.dir);
    let source = match (&user_file, &test_folder, server) {
        (Some(f), _, _) => Source::User(f),
        (None, Some(t), _) => Source::Test(t),
        (None, None, Server::Remote(_)) => Source::Server,
        (None, None, Server::Here(_)) => unreachable!("test files here have a folder"),
    };
    let mut transfers = Vec::new();
    let status = measure::measure_all(
        spec,
        server,
        &sizes,
        source,
        interrupt,
        &mut results,
        &mut transfers,
    )?;
    finish(
        spec,
        output,
        server,
        &sizes,
        status,
        transfers,
        &results.dir,
    )?;
    drop(test_folder);
    Ok(status)
}

/// Where the files are and where the results go, before the first transfer.
fn announce(spec: &FileSpec, test_folder: &Option<TestFolder>, results: &Path) {
    if let Some(t) = test_folder {
        eprintln!("file: test files in {}", t.dir.display());
    }
    if let Some(remote) = &spec.remote {
        eprintln!(
            "file: the server at {} writes and sends the files; this host receives",
            remote.target
        );
    }
    eprintln!("file: results in {}", results.display());
}

/// The study's document: written as the report, printed as the table or as JSON.
fn finish(
    spec: &FileSpec,
    output: &StudyOutput,
    server: Server<'_>,
    sizes: &[u64],
    status: Status,
    transfers: Vec<TransferRecord>,
    dir: &Path,
) -> Result<(), Error> {
    let study = FileStudy {
        schema_version: SCHEMA_VERSION,
        command: "file",
        config: spec.config(sizes, server),
        environment: Some(Environment::detect(&spec.cpus)),
        status: match status {
            Status::Success => "completed",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        },
        summaries: record::summarize_transfers(
            sizes,
            &spec.mechanisms,
            &spec.config(sizes, server).caches(),
            &transfers,
        ),
        transfers,
    };
    report::write(dir, &study)?;
    for summary in &study.summaries {
        let mut line = serde_json::to_value(summary).expect("JSON");
        line["status"] =
            serde_json::json!(if summary.reps_failed == 0 && summary.reps_measured > 0 {
                "completed"
            } else {
                "failed"
            });
        output.stream.point(&line);
    }
    if output.json {
        println!("{}", serde_json::to_string_pretty(&study).expect("JSON"));
    } else {
        print!("{}", report::text_table(&study));
        println!("report: {}", dir.join(report::HTML).display());
    }
    Ok(())
}
