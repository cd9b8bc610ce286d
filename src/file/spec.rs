//! A validated `bytepath file` invocation (`FileSpec`, made by `args::file` from the flags)
//! and the configuration block its records carry (`FileSpec::config`).
use super::mechanisms::FileMechanism;
use super::record::FileConfig;
use super::{transfer, Server, ORDER};
use crate::config::{FlowPlacement, Network, Pinning, RemoteRun};
use crate::error::ConfigError;
use crate::measure::counters::CounterSelection;
use std::path::PathBuf;

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
    /// The seed each repetition's mechanism order is drawn from (`super::ORDER`).
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
    pub(super) fn placement(&self) -> FlowPlacement {
        self.pinning.placement(0, &self.cpus)
    }

    pub(super) fn config(&self, sizes: &[u64], server: Server<'_>) -> FileConfig {
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
            order: Some(ORDER.into()),
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
