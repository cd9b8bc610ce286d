//! `bytepath file`: the seeds' zero-copy file-server study. A server thread sends a file over
//! loopback TCP with read+send, sendfile(2), splice(2) or mmap(2)+send, a client thread
//! receives it; each (size, mechanism) is timed over `--reps` transfers with the page cache warm
//! or dropped (cold), and the results become a table, results.jsonl and a report.
pub mod mechanisms;
pub mod record;
pub mod report;
pub mod test_files;
pub mod transfer;

use crate::cli::FileArgs;
use crate::config::{
    parse_bytes, parse_counters, parse_pinning, ConfigError, Network, Pattern, Pinning, RemoteRun,
};
use crate::environment::Environment;
use crate::error::{Error, Status};
use crate::measure::counters::CounterSelection;
use crate::remote::client::RemotePeer;
use crate::remote::protocol::FileRequest;
use crate::sides::Sides;
use crate::sweep::folder::{self, Saved};
use crate::sweep::spec::parse_list;
use crate::transport::{FlowConnector, Link, Transport};
use mechanisms::FileMechanism;
use record::{FileConfig, FileStudy, Residency, TransferRecord, SCHEMA_VERSION};
use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use test_files::{ServedFile, TestFolder};

pub const FILE_KIND: &str = "bytepath file results";
/// The seeds' file sizes, the default of `--sizes`.
const SEED_SIZES: &str = "7M,21M,63M,98M,200M,350M,700M,1G";
/// A chunk above this is refused: it would be one huge buffer, not a chunk.
pub(crate) const MAX_CHUNK: u64 = 64 << 20;

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
}

/// A validated `bytepath file` invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSpec {
    /// Test file sizes; empty with `--file`.
    pub sizes: Vec<u64>,
    pub mechanisms: Vec<FileMechanism>,
    pub chunk: usize,
    pub cache: Cache,
    pub user_file: Option<PathBuf>,
    pub reps: u32,
    pub verify: bool,
    pub counters: CounterSelection,
    pub pinning: Pinning,
    pub cpus: Vec<usize>,
    /// Where the server and client run (`--netns`, `--mtu`, `--netem`).
    pub network: Network,
    /// `--remote`: `bytepath server` there writes and sends the files; this host receives.
    pub remote: Option<RemoteRun>,
}

fn bad(msg: String) -> ConfigError {
    ConfigError(msg)
}

impl FileSpec {
    pub fn from_args(args: &FileArgs, cpus: &[usize]) -> Result<FileSpec, ConfigError> {
        let sizes =
            match (&args.file, &args.sizes) {
                (Some(_), _) => Vec::new(),
                (None, sizes) => {
                    parse_list("--sizes", sizes.as_deref().unwrap_or(SEED_SIZES), |t| {
                        match parse_bytes(t) {
                            Some(n) if n > 0 => Ok(n),
                            _ => Err(bad(format!(
                                "{t:?}: allowed: a size above 0 with an optional K, M or G suffix"
                            ))),
                        }
                    })?
                }
            };
        let mechanisms = parse_list("--mechanisms", &args.mechanisms, FileMechanism::parse)?;
        let chunk = match parse_bytes(&args.chunk) {
            Some(n) if n > 0 && n <= MAX_CHUNK => n as usize,
            _ => {
                return Err(bad(format!(
                    "--chunk {:?}: allowed: 1 B to 64 MiB, with an optional K or M suffix",
                    args.chunk
                )))
            }
        };
        if mechanisms.contains(&FileMechanism::Splice) {
            check_pipe_size(chunk, &args.chunk)?;
        }
        let cache = match args.cache.as_str() {
            "warm" => Cache::Warm,
            "cold" => Cache::Cold,
            other => return Err(bad(format!("--cache {other:?}: allowed: warm, cold"))),
        };
        let reps = match args.reps.trim().parse::<u32>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(bad(format!(
                    "--reps {:?}: allowed: a whole number above 0",
                    args.reps
                )))
            }
        };
        let network = Network::from_args(&args.network)?;
        let remote = RemoteRun::from_args(&args.remote, &network)?;
        if let Some(r) = &remote {
            if args.file.is_some() {
                return Err(bad(format!(
                    "--file with --remote {}: the file would have to be on the server; with --remote the server writes test files of --sizes",
                    r.target
                )));
            }
            if r.reverse {
                return Err(bad(
                    "--reverse with file: the server always sends the file and this host receives; drop --reverse".into(),
                ));
            }
        }
        Ok(FileSpec {
            sizes,
            mechanisms,
            chunk,
            cache,
            user_file: args.file.clone(),
            reps,
            verify: args.verify,
            counters: parse_counters(&args.counters, Pattern::Stream)?,
            pinning: parse_pinning(Some(args.pin.as_deref().unwrap_or(default_pin(cpus))), cpus)?,
            cpus: cpus.to_vec(),
            network,
            remote,
        })
    }

    /// Where the server (the flow's sending end) and the client run.
    fn placement(&self) -> crate::config::FlowPlacement {
        self.pinning.placement(0, &self.cpus)
    }

    fn config(&self, sizes: &[u64], server: Server<'_>) -> FileConfig {
        let (where_sides_run, timing) = match server {
            Server::Here(connector) => (
                connector.describe(),
                "CLOCK_MONOTONIC (Instant): server's first system call of the transfer to the client's receipt of the last byte",
            ),
            Server::Remote(remote) => (
                format!(
                    "remote: bytepath server at {} wrote each test file, prepared its cache and sent it; this host received{} and measured",
                    remote.target,
                    if self.verify { ", hashed" } else { "" }
                ),
                "CLOCK_MONOTONIC (Instant) on this host: from just before it told the server to send (FileGo) to its receipt of the last byte; includes one network round trip",
            ),
        };
        FileConfig {
            sizes_bytes: sizes.to_vec(),
            mechanisms: self.mechanisms.clone(),
            chunk_bytes: self.chunk,
            cache: self.cache.name().into(),
            user_file: self.user_file.as_ref().map(|p| p.display().to_string()),
            reps: self.reps,
            verify: self.verify,
            counters: self.counters.name().into(),
            where_sides_run,
            remote: self.remote.as_ref().map(|r| r.target.to_string()),
            network: self.network.clone(),
            pin: self.pinning.name(),
            placement: self.placement(),
            recv_buffer_bytes: transfer::RECV_BUFFER,
            timing: timing.into(),
        }
    }
}

/// splice moves at most a pipe's worth per call, and the pipe is sized to the chunk.
pub(crate) fn check_pipe_size(chunk: usize, text: &str) -> Result<(), ConfigError> {
    let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
        .unwrap_or(1 << 20);
    if chunk > max {
        return Err(bad(format!(
            "--chunk {text:?}: splice sizes its pipe to the chunk, and pipe-max-size is {max} B; allowed: up to {max} B with splice"
        )));
    }
    Ok(())
}

/// Cross-CPU where two CPUs exist, as the seeds' two machines were apart.
fn default_pin(cpus: &[usize]) -> &'static str {
    if cpus.len() >= 2 {
        "cross"
    } else {
        "same"
    }
}

pub fn command(args: &FileArgs, interrupt: &AtomicBool) -> Result<Status, Error> {
    let cpus = crate::sys::affinity::allowed_cpus()
        .map_err(|e| Error::Failed(format!("reading this process's CPU affinity: {e}")))?;
    let spec = FileSpec::from_args(args, &cpus)?;
    // Held for the whole command: a --netns link's namespaces go when it drops. A remote
    // server is asked now whether it is there, takes this client and serves files, so a wrong
    // address or an older server is one error before any transfer.
    let sides = match &spec.remote {
        Some(remote) => {
            RemotePeer::new(remote.target.clone(), remote.token.clone(), false).check_file()?;
            Sides::Remote(remote.clone())
        }
        None => Sides::Here(Link::open(&spec.network)?),
    };
    let connector = match &sides {
        Sides::Here(link) => Some(link.connector(Transport::Tcp)?),
        Sides::Remote(_) => None,
    };
    let server = match (&sides, &connector) {
        (Sides::Remote(remote), _) => Server::Remote(remote),
        (Sides::Here(_), Some(connector)) => Server::Here(&**connector),
        (Sides::Here(_), None) => unreachable!("a link has a connector"),
    };
    let user_file = match &spec.user_file {
        Some(path) => Some(test_files::user_file(path, spec.verify)?),
        None => None,
    };
    let temp = std::env::temp_dir();
    // With --remote the files are written on the server, which checks its own space.
    let local_files = user_file.is_none() && spec.remote.is_none();
    if local_files {
        let available = test_files::available_space(&temp).map_err(|source| Error::File {
            path: temp.clone(),
            source,
        })?;
        test_files::check_space(&spec.sizes, &temp, available)?;
    }
    let sizes: Vec<u64> = match &user_file {
        Some(f) => vec![f.len],
        None => spec.sizes.clone(),
    };
    let marker = folder::marker(
        FILE_KIND,
        serde_json::to_value(spec.config(&sizes, server)).expect("JSON"),
        serde_json::json!({}),
        sizes.len() * spec.mechanisms.len() * spec.reps as usize,
        "per size, per repetition, every mechanism in list order",
    );
    let (mut results, _) =
        folder::open_with(args.out.as_deref(), false, &marker, record::csv_columns())?;
    // Removed on drop: on every return from here on, `?` included, and after Ctrl-C, which only
    // sets `interrupt` and lets this function return normally.
    let test_folder = match local_files {
        false => None,
        true => Some(TestFolder::create(&temp).map_err(|source| Error::File {
            path: temp.clone(),
            source,
        })?),
    };
    if let Some(t) = &test_folder {
        eprintln!("file: test files in {}", t.dir.display());
    }
    if let Sides::Remote(remote) = &sides {
        eprintln!(
            "file: the server at {} writes and sends the files; this host receives",
            remote.target
        );
    }
    eprintln!("file: results in {}", results.dir.display());
    let source = match (&user_file, &test_folder, &sides) {
        (Some(f), _, _) => Source::User(f),
        (None, Some(t), _) => Source::Test(t),
        (None, None, Sides::Remote(_)) => Source::Server,
        (None, None, Sides::Here(_)) => unreachable!("test files here have a folder"),
    };
    let mut transfers = Vec::new();
    let status = measure_all(
        &spec,
        server,
        &sizes,
        source,
        interrupt,
        &mut results,
        &mut transfers,
    )?;
    let study = FileStudy {
        schema_version: SCHEMA_VERSION,
        command: "file",
        config: spec.config(&sizes, server),
        environment: Some(Environment::detect(
            &crate::sys::affinity::allowed_cpus().unwrap_or_default(),
        )),
        status: match status {
            Status::Success => "completed",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        },
        summaries: record::summarize_transfers(&sizes, &spec.mechanisms, &transfers),
        transfers,
    };
    report::write(&results.dir, &study)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&study).expect("JSON"));
    } else {
        print!("{}", report::text_table(&study));
        println!("report: {}", results.dir.join(report::HTML).display());
    }
    drop(test_folder);
    Ok(status)
}

/// Where the server side of every transfer runs: a thread here, on a flow from the link's
/// connector, or `bytepath server` on another host (`--remote`).
#[derive(Clone, Copy)]
enum Server<'a> {
    Here(&'a dyn FlowConnector),
    Remote(&'a RemoteRun),
}

/// Where the served files come from.
#[derive(Clone, Copy)]
enum Source<'a> {
    User(&'a ServedFile),
    Test(&'a TestFolder),
    /// The remote server writes a test file per transfer.
    Server,
}

/// Every size in turn: its test file written (or the user's file), then all its transfers.
fn measure_all(
    spec: &FileSpec,
    server: Server<'_>,
    sizes: &[u64],
    source: Source<'_>,
    interrupt: &AtomicBool,
    results: &mut folder::ResultsFolder,
    transfers: &mut Vec<TransferRecord>,
) -> Result<Status, Error> {
    let mut status = Status::Success;
    for &size in sizes {
        let served = match source {
            Source::User(f) => Some(f.clone()),
            Source::Server => None,
            Source::Test(t) => match t.write(size, spec.verify, interrupt) {
                Ok(f) => Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                    return Ok(Status::Interrupted)
                }
                Err(source) => {
                    return Err(Error::File {
                        path: t.dir.clone(),
                        source,
                    })
                }
            },
        };
        let measured = match (server, &served) {
            (Server::Here(connector), Some(served)) => {
                let file_error = |source| Error::File {
                    path: served.path.clone(),
                    source,
                };
                if spec.cache == Cache::Warm {
                    read_through(served).map_err(file_error)?;
                }
                measure_size(
                    spec,
                    size,
                    interrupt,
                    results,
                    transfers,
                    |mechanism, rep| {
                        let residency = prepare_cache(served, spec.cache).map_err(file_error)?;
                        let setup = transfer::Setup {
                            connector,
                            placement: spec.placement(),
                            chunk: spec.chunk,
                            counters: spec.counters,
                        };
                        let measured = transfer::transfer(served, mechanism, setup);
                        Ok(record_of(
                            size,
                            mechanism,
                            rep,
                            Some(residency),
                            measured.map_err(|e| e.to_string()),
                        ))
                    },
                )?
            }
            (Server::Remote(remote), _) => {
                measure_size(
                    spec,
                    size,
                    interrupt,
                    results,
                    transfers,
                    |mechanism, rep| {
                        let request = FileRequest {
                            size,
                            mechanism: mechanism.name().into(),
                            chunk: spec.chunk as u64,
                            cache: spec.cache.name().into(),
                            verify: spec.verify,
                            counters: spec.counters.name().into(),
                        };
                        let measured = transfer::transfer_remote(
                            remote,
                            &request,
                            rep,
                            spec.placement(),
                            spec.counters,
                        );
                        let measured = match measured {
                            // A refusal (a limit, an older server) holds for every transfer.
                            Err(Error::Config(e)) => return Err(Error::Config(e)),
                            other => other.map_err(|e| e.to_string()),
                        };
                        let residency = measured.as_ref().ok().and_then(|m| m.residency);
                        Ok(record_of(size, mechanism, rep, residency, measured))
                    },
                )?
            }
            (Server::Here(_), None) => unreachable!("a study here has its files here"),
        };
        match measured {
            Status::Success => {}
            Status::Failed => status = Status::Failed,
            Status::Interrupted => return Ok(Status::Interrupted),
        }
    }
    Ok(status)
}

/// All repetitions of every mechanism for one size; `one` measures one transfer.
fn measure_size(
    spec: &FileSpec,
    size: u64,
    interrupt: &AtomicBool,
    results: &mut folder::ResultsFolder,
    transfers: &mut Vec<TransferRecord>,
    mut one: impl FnMut(FileMechanism, u32) -> Result<TransferRecord, Error>,
) -> Result<Status, Error> {
    let mut status = Status::Success;
    for rep in 0..spec.reps {
        for &mechanism in &spec.mechanisms {
            if interrupt.load(Ordering::SeqCst) {
                return Ok(Status::Interrupted);
            }
            let record = one(mechanism, rep)?;
            if !record.ok() {
                status = Status::Failed;
                eprintln!(
                    "file: {size} B {} rep {rep}: {}",
                    mechanism.name(),
                    record
                        .error
                        .as_deref()
                        .unwrap_or("verify mismatch: the hashes differ")
                );
            }
            results.append(&Saved::from_value(
                serde_json::to_value(&record).expect("the record serializes"),
            ))?;
            transfers.push(record);
        }
    }
    Ok(status)
}

/// One transfer's record, from what it measured or why it failed.
fn record_of(
    size: u64,
    mechanism: FileMechanism,
    rep: u32,
    residency: Option<Residency>,
    measured: Result<transfer::Measured, String>,
) -> TransferRecord {
    let mut record = TransferRecord {
        schema_version: SCHEMA_VERSION,
        size_bytes: size,
        mechanism,
        rep,
        residency_before: residency,
        elapsed_ms: None,
        throughput_gbps: None,
        server_syscalls: None,
        client_recv_calls: None,
        server: None,
        client: None,
        verified: None,
        error: None,
    };
    match measured {
        Ok(m) => {
            let secs = m.elapsed.as_secs_f64();
            record.elapsed_ms = Some(secs * 1e3);
            record.throughput_gbps =
                (secs > 0.0).then(|| m.bytes_received as f64 * 8.0 / secs / 1e9);
            record.server_syscalls = Some(m.server_syscalls);
            record.client_recv_calls = Some(m.client_syscalls);
            record.server = Some(m.server);
            record.client = Some(m.client);
            record.verified = m.verified;
        }
        Err(e) => record.error = Some(e),
    }
    record
}

/// Warm: reads the whole file once, so its pages are cached.
pub(crate) fn read_through(served: &ServedFile) -> std::io::Result<()> {
    let mut file = File::open(&served.path)?;
    let mut buf = vec![0u8; 1 << 20];
    while file.read(&mut buf)? > 0 {}
    Ok(())
}

/// Cold: fsync (dirty pages cannot be dropped) and POSIX_FADV_DONTNEED. Either way, returns
/// what mincore says is resident now, so the report shows what was achieved, not intended.
pub(crate) fn prepare_cache(served: &ServedFile, cache: Cache) -> std::io::Result<Residency> {
    let file = File::open(&served.path)?;
    if cache == Cache::Cold {
        file.sync_all()?;
        crate::sys::file::drop_cached_pages(&file)?;
    }
    let (resident_pages, total_pages) = crate::sys::file::resident_pages(&file, served.len)?;
    Ok(Residency {
        resident_pages,
        total_pages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn spec(extra: &[&str]) -> Result<FileSpec, ConfigError> {
        let cli = crate::cli::Cli::parse_from([&["bytepath", "file"][..], extra].concat());
        match cli.command {
            crate::cli::Command::File(args) => FileSpec::from_args(&args, &[0, 1]),
            _ => unreachable!("parsed a file command"),
        }
    }

    #[test]
    fn the_seeds_sizes_and_all_four_mechanisms_are_the_default() {
        let s = spec(&[]).unwrap();
        assert_eq!(s.sizes.len(), 8);
        assert_eq!(s.sizes[7], 1 << 30);
        assert_eq!(s.mechanisms, FileMechanism::ALL.to_vec());
        assert_eq!((s.chunk, s.cache, s.reps), (64 << 10, Cache::Warm, 5));
    }

    #[test]
    fn zero_and_unknown_suffixes_are_refused_naming_the_value() {
        assert!(spec(&["--sizes", "0"]).unwrap_err().0.contains("\"0\""));
        assert!(spec(&["--sizes", "5X"]).unwrap_err().0.contains("\"5X\""));
        assert!(spec(&["--chunk", "0"]).unwrap_err().0.contains("--chunk"));
        assert!(spec(&["--cache", "hot"])
            .unwrap_err()
            .0
            .contains("warm, cold"));
        assert!(spec(&["--reps", "0"]).unwrap_err().0.contains("--reps"));
    }

    #[test]
    fn splice_refuses_a_chunk_beyond_the_largest_pipe() {
        let e = spec(&["--chunk", "32M"]).unwrap_err();
        assert!(e.0.contains("pipe-max-size"), "{e}");
        assert!(spec(&["--chunk", "32M", "--mechanisms", "sendfile"]).is_ok());
    }

    #[test]
    fn cold_cache_reports_what_mincore_saw_after_dropping() {
        let parent = tempfile::tempdir().unwrap();
        let folder = TestFolder::create(parent.path()).unwrap();
        let served = folder
            .write(8 << 20, false, &AtomicBool::new(false))
            .unwrap();
        read_through(&served).unwrap();
        let warm = prepare_cache(&served, Cache::Warm).unwrap();
        let cold = prepare_cache(&served, Cache::Cold).unwrap();
        let file = File::open(&served.path).unwrap();
        let (now, total) = crate::sys::file::resident_pages(&file, served.len).unwrap();
        assert_eq!(cold.total_pages, total);
        assert_eq!(total, 2048);
        // The kernel may keep pages anyway (e.g. on tmpfs, where they are the file); the figure
        // reported must be what mincore said, never what was intended.
        assert!(
            cold.resident_pages <= warm.resident_pages,
            "{cold:?} vs {warm:?}"
        );
        assert!(
            now.abs_diff(cold.resident_pages) <= total / 100,
            "{now} vs {cold:?}"
        );
        if !is_tmpfs(parent.path()) {
            assert!(
                cold.fraction() < 0.5,
                "DONTNEED after fsync dropped most pages: {cold:?}"
            );
        }
    }

    fn is_tmpfs(path: &std::path::Path) -> bool {
        std::process::Command::new("stat")
            .args(["-f", "-c", "%T"])
            .arg(path)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "tmpfs")
            .unwrap_or(false)
    }
}
