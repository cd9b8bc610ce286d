//! `bytepath file`'s flags: a file served by one mechanism after another, received whole.
use super::{
    CountersArgs, FolderArgs, JsonArgs, MarginArgs, NetworkArgs, PinArgs, ProfileArgs, RemoteArgs,
    SeedArgs, StreamArgs, VerifyArgs,
};
use clap::Args;

// `--transfer-counters`, file's name for `--counters` before the flag was shared, still works.
#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
#[command(mut_arg("counters", |a| a.alias("transfer-counters")))]
pub struct FileArgs {
    /// File sizes, comma-separated (K/M/G suffixes, binary); test files of these sizes are
    /// created in a temporary folder and removed afterwards.
    #[arg(long, conflicts_with = "file")]
    pub sizes: Option<String>,
    /// How the server sends the file: readsend (read+send), sendfile, splice (file, pipe,
    /// socket), mmap (send from a mapping); comma-separated.
    #[arg(long, default_value = "readsend,sendfile,splice,mmap")]
    pub mechanisms: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub pin: PinArgs,
    /// Bytes per read/sendfile/splice/send call on the server.
    #[arg(long, default_value = "64K")]
    pub chunk: String,
    /// warm (read the file once first) or cold (fsync and POSIX_FADV_DONTNEED before every
    /// repetition; the residency achieved is reported), or both, `warm,cold`: each mechanism
    /// measured under both, back to back, and the report compares them.
    #[arg(long, default_value = "warm")]
    pub cache: String,
    /// Serve this file (opened read-only, never modified) instead of test files.
    #[arg(long)]
    pub file: Option<std::path::PathBuf>,
    /// Transfers per size and mechanism; mean and 95 % CI over them. The default, 6, is even
    /// so that each seeded order and its reversal pair up.
    #[arg(long, default_value = "6")]
    pub reps: String,
    // The order the mechanisms are measured in within each repetition: drawn afresh for every
    // two repetitions, reversed on the second.
    #[command(flatten)]
    #[serde(flatten)]
    pub seed: SeedArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub verify: VerifyArgs,
    // Both sides open them in one transfer of their own per size, mechanism and cache.
    #[command(flatten)]
    #[serde(flatten)]
    pub counters: CountersArgs,
    // One more transfer per size and mechanism, after the measured ones.
    #[command(flatten)]
    #[serde(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub network: NetworkArgs,
    // With --remote the server writes each test file and sends it; this host receives.
    #[command(flatten)]
    #[serde(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub folder: FolderArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub json: JsonArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub stream: StreamArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub margin: MarginArgs,
}
