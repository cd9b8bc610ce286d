//! Command-line definitions (clap). Values arrive as text. A flag more than one command takes
//! is declared once in `shared`, with its help, parse and bounds, and flattened into each
//! command; the rest are validated in `args`. Every bad input gets the same one-line error.
use crate::mechanism::MechanismKind;
use clap::{Args, Parser, Subcommand};
use mechanisms::{run_help, sweep_help};

pub(crate) mod bidir;
pub(crate) mod canary;
pub(crate) mod connection;
pub(crate) mod crr;
mod file;
pub(crate) mod health;
mod hosts;
mod identity;
mod keygen;
pub(crate) mod log_format;
mod margin;
pub(crate) mod mechanisms;
pub(crate) mod normalize;
mod point;
mod readers;
pub(crate) mod security;
mod shared;
pub(crate) mod under_load;
pub(crate) mod watch;
pub use file::FileArgs;
pub use hosts::{MeshArgs, ServerArgs};
pub use identity::{DriverIdentityArgs, ServerIdentityArgs};
pub use keygen::KeygenArgs;
pub use margin::MarginArgs;
pub use point::{
    CountCopiesArgs, CountersArgs, GsoArgs, PipeSizeArgs, ProcessesArgs, QueueDepthArgs,
    ReceiveArgs, UdpSplitArgs,
};
pub use readers::{CompareArgs, ExportArgs, ReportArgs};
pub use shared::PercentilesArgs;
pub use shared::{
    FolderArgs, JsonArgs, NetworkArgs, PinArgs, ProfileArgs, RemoteArgs, ResumableFolderArgs,
    SeedArgs, SinkArgs, SocketBufferArgs, StreamArgs, TcpInfoArgs, TokenArgs, VerifyArgs,
    VisitsArgs, WarmupArgs,
};

#[derive(Debug, Parser)]
#[command(
    name = "bytepath",
    version,
    about = "Measures what it costs Linux to move bytes"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure one point: a mechanism, a message size, a number of flows, over loopback TCP
    /// (or across two network namespaces with --netns).
    Run(RunArgs),
    /// Measure a matrix of points with confidence intervals; write results and a report.
    Sweep(SweepArgs),
    /// Re-render report.html and report.md from a saved results folder.
    Report(ReportArgs),
    /// Compare two results folders point by point: faster, slower, equivalent or undecided.
    Compare(CompareArgs),
    /// IPC latency (ping-pong round trips) and bandwidth per transport and message size.
    Ipc(IpcArgs),
    /// Serve a file over loopback TCP: read+send vs sendfile vs splice vs mmap, per file size.
    File(FileArgs),
    /// TCP server models (iterative, threaded, select, poll, epoll, io_uring) under many
    /// clients: requests/s, latency percentiles, and what the server alone costs.
    Servers(ServersArgs),
    /// Serve remote runs: run the other side of `bytepath run --remote` on this host.
    Server(ServerArgs),
    /// Write a new shared token (256 random bits, mode 0600) for `server --token-file` and
    /// the driver's `--token-file`; or with --identity a host's key pair.
    Keygen(KeygenArgs),
    /// Measure every pair of many hosts running `bytepath server`, host to host, in rounds of
    /// disjoint pairs so no host is in two tests at once; N×N heatmaps with CIs and the pairs
    /// significantly slower than their hosts' other pairs.
    Mesh(MeshArgs),
    /// Measure what this machine can do: clocks, system-call cost, the memcpy roofline, which
    /// perf counters open and which zero-copy kernel features work.
    Probe(ProbeArgs),
    /// Print the records of a results folder (sweep, ipc, file, servers, mesh) as OpenMetrics
    /// text (for a Prometheus textfile collector), CSV or JSON lines.
    Export(ExportArgs),
    /// Print a completion script for a shell: bash, zsh or fish.
    Completions(CompletionsArgs),
    /// Print the manual page (roff), e.g. `bytepath man > ~/.local/share/man/man1/bytepath.1`.
    Man,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh or fish.
    pub shell: String,
}

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct ProbeArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub json: JsonArgs,
    /// A tenth of the trials and shorter calibrations (well under a second); for tests.
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub canary: canary::CanaryArgs,
}

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct SweepArgs {
    // Its help lists the mechanisms' descriptors.
    #[arg(long, default_value = "send,copy,gather,zerocopy", help = sweep_help(MechanismKind::ALL))]
    pub mechanisms: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub queue_depth: QueueDepthArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub receive: ReceiveArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub gso: GsoArgs,
    // With --sink, whose points are udp.
    #[command(flatten)]
    #[serde(flatten)]
    pub udp_split: UdpSplitArgs,
    /// Message sizes, comma-separated (256, 1K, 4KiB, 512k …).
    #[arg(long, default_value = "256,1K,4K,16K,64K,512K")]
    pub sizes: String,
    /// Flow counts, comma-separated.
    #[arg(long, default_value = "1,2,4,8")]
    pub threads: String,
    /// Patterns, comma-separated (stream, rr, crr).
    #[arg(long, default_value = "stream")]
    pub patterns: String,
    /// Give a point further visits until the 95 % CI of its visit means is within ± this share
    /// of their mean (or the budget is spent).
    #[arg(long, default_value = "2%")]
    pub ci: String,
    /// Visits every point gets, at least (2 to 1000; default 4, even, so that each group's
    /// seeded order and its reversal pair up): its interval comes from the visit means,
    /// and further visits are added toward --ci. `--visits` is kept as a hidden alias; in
    /// ipc, servers and mesh `--visits` is an exact count.
    #[arg(long, alias = "visits", default_value = "4")]
    #[serde(rename = "visits")] // the marker's key since schema 2
    pub min_visits: String,
    /// Measured time of one visit (after its warm-up).
    #[arg(long, default_value = "100ms")]
    pub visit: String,
    /// Time per point, on average, for the whole sweep's visits (set-up and warm-up included):
    /// once points × budget is spent no further visits are added. The minimum visits and the
    /// counter visits are always made. The default keeps the seeds' 48 points within two
    /// minutes here (issue 36: 3.5 s made it 200 s and decided no more cells at this noise).
    #[arg(long, default_value = "2.2s")]
    pub budget: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub seed: SeedArgs,
    /// Length of one slice inside a visit (diagnostics of a visit's steadiness).
    #[arg(long, default_value = "25ms")]
    pub slice: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub warmup: WarmupArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub counters: CountersArgs,
    // One more visit of every point, after the headline and counter visits.
    #[command(flatten)]
    #[serde(flatten)]
    pub profile: ProfileArgs,
    // One more visit of every point, with the kernel's tracepoints open.
    #[command(flatten)]
    #[serde(flatten)]
    pub count_copies: CountCopiesArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub watch: watch::WatchArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub verify: VerifyArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub sink: SinkArgs,
    /// With --sink: visit every point over loopback UDP too, in the same rounds, so the
    /// report answers the zero-copy crossover both where nothing is copied (the sink) and
    /// where a local receiver makes the kernel copy (loopback).
    #[arg(long)]
    #[serde(default)]
    pub beside_loopback: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub folder: ResumableFolderArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub stream: StreamArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub bidir: bidir::BidirArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub under_load: under_load::UnderLoadArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub margin: MarginArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub percentiles: shared::PercentilesArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub socket_buffers: SocketBufferArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub tcp_info: TcpInfoArgs,
}

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct IpcArgs {
    /// Transports, comma-separated: pipe, unix, unix-dgram, tcp, udp, shm. By default all six;
    /// the datagram ones then skip sizes above their datagram limit (named, they refuse them).
    #[arg(long)]
    pub transports: Option<String>,
    /// Message sizes, comma-separated (any size from 1 B to 64 MiB).
    #[arg(long, default_value = "4,16,64,256,1K,4K,16K,64K,256K,512K")]
    pub sizes: String,
    /// What to measure: latency (ping-pong round trips), bandwidth, or both.
    #[arg(long, default_value = "latency,bandwidth")]
    pub measure: String,
    /// Round trips per latency point.
    #[arg(long, default_value = "100000")]
    pub trials: String,
    /// Bytes moved per bandwidth point, in writes of the message size.
    #[arg(long, default_value = "1GiB")]
    pub bytes: String,
    /// The most one point may take; a point cut short says so (stop reason max_time).
    #[arg(long, default_value = "10s")]
    pub max_time: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub warmup: WarmupArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub pipe_size: PipeSizeArgs,
    /// Pipe buffers (and shm ring sizes), comma-separated, such as 64K,1M: each a point of its
    /// own, so the report can say whether bandwidth falls beyond the buffer.
    #[arg(long)]
    pub pipe_sizes: Option<String>,
    // The transports at one size are visited back to back in a seeded order, round after
    // round; --trials and --bytes are split over the visits.
    #[command(flatten)]
    #[serde(flatten)]
    pub visits: VisitsArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub seed: SeedArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub udp_split: UdpSplitArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub processes: ProcessesArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub watch: watch::WatchArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub folder: FolderArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub stream: StreamArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub margin: MarginArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub percentiles: shared::PercentilesArgs,
}

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct RunArgs {
    /// What carries the bytes: tcp (loopback), unix (AF_UNIX stream socket pair), pipe (two
    /// pipes per flow), shm (two shared-memory rings per flow, spin-then-futex) [default: tcp;
    /// with --sink udp, the one transport a sink carries].
    #[arg(long)]
    pub transport: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub pipe_size: PipeSizeArgs,
    // Its help lists the mechanisms' descriptors with their help lines.
    #[arg(long, short = 'm', help = run_help(MechanismKind::ALL))]
    pub mechanism: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub queue_depth: QueueDepthArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub receive: ReceiveArgs,
    /// Message size in bytes (8 heap fields of size/8 each); accepts 256, 1K, 4KiB, 512k, 1M.
    #[arg(long, short = 's', default_value = "4096")]
    pub size: String,
    /// Number of flows: each is a TCP connection with its own sending and receiving thread.
    #[arg(long, short = 't', default_value = "1")]
    pub threads: String,
    /// Measured time (5s, 1.5s, 200ms, 2m); default 5s, or a 10m cap with --messages/--bytes.
    #[arg(long, short = 'd')]
    pub duration: Option<String>,
    /// Measure this many messages (round trips for rr), shared evenly among the flows, then stop.
    #[arg(long, conflicts_with = "bytes")]
    pub messages: Option<String>,
    /// Measure this many payload bytes (1G, 512M …), shared evenly among the flows, then stop.
    #[arg(long)]
    pub bytes: Option<String>,
    /// stream (one-way, as fast as possible), rr (request/response round trips) or crr
    /// (connect, request, response, close: one connection per transaction; tcp and unix).
    #[arg(long, short = 'p', default_value = "stream")]
    pub pattern: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub warmup: WarmupArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub pin: PinArgs,
    /// Receiving and answering sides busy-poll with non-blocking calls instead of sleeping.
    #[arg(long)]
    pub spin: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub verify: VerifyArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub udp_split: UdpSplitArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub gso: GsoArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub processes: ProcessesArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub counters: CountersArgs,
    // After the headline run, one more run of the same point.
    #[command(flatten)]
    #[serde(flatten)]
    pub profile: ProfileArgs,
    // After the headline run, one more run with the kernel's tracepoints open.
    #[command(flatten)]
    #[serde(flatten)]
    pub count_copies: CountCopiesArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub sink: SinkArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub json: JsonArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub stream: StreamArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub crr: crr::CrrArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub bidir: bidir::BidirArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub percentiles: shared::PercentilesArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub under_load: under_load::UnderLoadArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub socket_buffers: SocketBufferArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub tcp_info: TcpInfoArgs,
}

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct ServersArgs {
    /// Server models, comma-separated: iterative, threaded, select, poll, epoll, uring.
    #[arg(long, default_value = "iterative,threaded,select,poll,epoll,uring")]
    pub models: String,
    /// Concurrent client connections per point, comma-separated.
    #[arg(long, default_value = "5,15,100,1000")]
    pub clients: String,
    /// Request size in bytes; the server echoes each request whole.
    #[arg(long, default_value = "64")]
    pub size: String,
    /// Measured time per point.
    #[arg(long, default_value = "5s")]
    pub duration: String,
    // Every round visits the client counts in a seeded shuffled order and, at each, the
    // models back to back (order reversed every other round); --duration is split evenly
    // over a point's visits.
    #[command(flatten)]
    #[serde(flatten)]
    pub visits: VisitsArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub seed: SeedArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub warmup: WarmupArgs,
    /// Open loop: this many requests per second over all clients, latency measured from each
    /// request's intended send time. Default: closed loop (send again after each echo).
    #[arg(long)]
    pub rate: Option<String>,
    /// epoll only: worker threads, each with its own epoll sharing the listener.
    #[arg(long, default_value = "1")]
    pub server_threads: String,
    /// Threads driving the client connections (each with its own epoll). Default: one per
    /// CPU of the load side (split's lower half; every allowed CPU with --placement none or
    /// --remote), at most one per client.
    #[arg(long)]
    pub client_threads: Option<String>,
    /// Each client closes its connection after this many requests (the point ends when all
    /// have, or at --duration).
    #[arg(long)]
    pub requests_per_connection: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub connection: connection::ConnectionArgs,
    /// Where the two processes run: split (the server process on the upper half of the
    /// allowed CPUs, the load generator on the lower half; the default where two CPUs exist)
    /// or none. Its old name, `--pin`, still works here; elsewhere `--pin` places each flow's
    /// threads.
    #[arg(long, alias = "pin")]
    #[serde(rename = "pin")] // the marker's key
    pub placement: Option<String>,
    /// Tests: this many extra clients that connect and never send, send half a request, or
    /// send half and disconnect.
    #[arg(long, default_value_t = 0, hide = true)]
    pub stalled_clients: usize,
    /// Tests: per-connection first and last completion times in each record.
    #[arg(long, hide = true)]
    pub record_connections: bool,
    // One more window per point, after the measured one.
    #[command(flatten)]
    #[serde(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub network: NetworkArgs,
    /// With --remote: each point's server model runs on `bytepath server` at HOST or HOST:PORT,
    /// which reports what the server alone cost; this host runs the load generator.
    #[command(flatten)]
    #[serde(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub watch: watch::WatchArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub json: JsonArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub folder: FolderArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub stream: StreamArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub margin: MarginArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub percentiles: shared::PercentilesArgs,
}
