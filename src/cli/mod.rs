//! Command-line definitions (clap only). Values arrive as text and are validated in
//! `args`, so every bad input gets the same one-line error style.
use clap::{Args, Parser, Subcommand};

pub mod canary;
pub mod health;
mod hosts;
pub mod normalize;
pub mod watch;
pub use hosts::{MeshArgs, ServerArgs};

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
    /// Compare two results folders point by point: faster, slower, or no significant change.
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
pub struct ExportArgs {
    /// A results folder written by sweep, ipc, file, servers or mesh.
    pub dir: std::path::PathBuf,
    /// openmetrics (one sample per point and side, `# EOF` at the end), csv or json (one
    /// record per line).
    #[arg(long, default_value = "openmetrics")]
    pub format: String,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh or fish.
    pub shell: String,
}

/// `--json-stream`, shared by run and every study.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct StreamArgs {
    /// Print one JSON object per line to stdout as the work goes (start, slice or visit,
    /// point, end), each flushed at once; text that went to stdout goes to stderr instead.
    #[arg(long)]
    pub json_stream: bool,
}

/// Where the two sides run; shared by run, sweep, ipc, file and servers.
#[derive(Debug, Clone, Default, Args)]
pub struct NetworkArgs {
    /// Run each side in its own network namespace, the two joined by a veth pair with private
    /// addresses (needs root and the ip command); tcp and udp only.
    #[arg(long)]
    pub netns: bool,
    /// With --netns: the veth MTU in bytes, 68 to 65535 (default 1500, like Ethernet).
    #[arg(long)]
    pub mtu: Option<String>,
    /// With --netns: tc netem parameters for both veth ends, such as
    /// "delay 1ms rate 10gbit loss 0.1%" (needs the sch_netem kernel module).
    #[arg(long)]
    pub netem: Option<String>,
}

/// Whether the other side runs on `bytepath server` on another host; shared by run, sweep and
/// ipc.
#[derive(Debug, Clone, Default, Args)]
pub struct RemoteArgs {
    /// Run the other side on `bytepath server` at HOST[:PORT] (default port 5301): it sends
    /// (stream) or answers (rr); this host receives or asks, and measures. tcp and udp.
    #[arg(long)]
    pub remote: Option<String>,
    /// With --remote: a file holding the token the server was started with.
    #[arg(long)]
    pub token_file: Option<std::path::PathBuf>,
    /// With --remote, `run` with stream only: this host sends and the server receives and
    /// measures (like iperf3 without -R).
    #[arg(long)]
    pub reverse: bool,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Print one JSON document instead of the text block.
    #[arg(long)]
    pub json: bool,
    /// A tenth of the trials and shorter calibrations (well under a second); for tests.
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub canary: canary::CanaryArgs,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Mechanisms, comma-separated (send, copy, gather, zerocopy, uring, uring-gather,
    /// uring-zc, splice, sendfile), or all.
    #[arg(long, default_value = "send,copy,gather,zerocopy")]
    pub mechanisms: String,
    /// io_uring mechanisms: sends submitted together (see `run --queue-depth`).
    #[arg(long)]
    pub queue_depth: Option<String>,
    /// How every point's receiving side takes bytes (see `run --recv`).
    #[arg(long, default_value = "recv")]
    pub recv: String,
    /// Message sizes, comma-separated (256, 1K, 4KiB, 512k …).
    #[arg(long, default_value = "256,1K,4K,16K,64K,512K")]
    pub sizes: String,
    /// Flow counts, comma-separated.
    #[arg(long, default_value = "1,2,4,8")]
    pub threads: String,
    /// Patterns, comma-separated (stream, rr).
    #[arg(long, default_value = "stream")]
    pub patterns: String,
    /// Give a point further visits until the 95 % CI of its visit means is within ± this share
    /// of their mean (or the budget is spent).
    #[arg(long, default_value = "2%")]
    pub ci: String,
    /// Visits every point gets, at least: its interval comes from the visit means (2 to 1000).
    #[arg(long, default_value = "3")]
    pub visits: String,
    /// Measured time of one visit (after its warm-up).
    #[arg(long, default_value = "300ms")]
    pub visit: String,
    /// Time per point, on average, for the whole sweep's visits (set-up and warm-up included):
    /// once points × budget is spent no further visits are added. The minimum visits and the
    /// counter visits are always made.
    #[arg(long, default_value = "2s")]
    pub budget: String,
    /// Seed of the shuffled visit order (default: a fresh one, printed and recorded).
    #[arg(long)]
    pub seed: Option<String>,
    /// Length of one slice inside a visit (diagnostics of a visit's steadiness).
    #[arg(long, default_value = "100ms")]
    pub slice: String,
    /// Warm-up before each visit, excluded from every figure.
    #[arg(long, default_value = "100ms")]
    pub warmup: String,
    /// CPU placement for every point (see `run --pin`); default: cross where two CPUs exist.
    #[arg(long)]
    pub pin: Option<String>,
    /// Bytes per recv() call (see `run --recv-size`).
    #[arg(long)]
    pub recv_size: Option<String>,
    /// perf counters per thread, opened in one visit of each point's own, never in the visits
    /// the headline figures come from (auto = all; none = no counter visits).
    #[arg(long, default_value = "auto")]
    pub counters: String,
    /// One more visit of every point, after the headline and counter visits, with every
    /// side's threads sampled: where the CPU goes (see `run --profile`).
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub watch: watch::WatchArgs,
    /// Check every byte of every point (see `run --verify`).
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Results folder; default ./bytepath-results/<timestamp>/.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Continue the sweep in --out: keep its finished visits and make the missing ones.
    #[arg(long)]
    pub resume: bool,
    #[command(flatten)]
    pub stream: StreamArgs,
}

#[derive(Debug, Args)]
pub struct FileArgs {
    /// File sizes, comma-separated (K/M/G suffixes, binary); test files of these sizes are
    /// created in a temporary folder and removed afterwards.
    #[arg(long, conflicts_with = "file")]
    pub sizes: Option<String>,
    /// How the server sends the file: readsend (read+send), sendfile, splice (file, pipe,
    /// socket), mmap (send from a mapping); comma-separated.
    #[arg(long, default_value = "readsend,sendfile,splice,mmap")]
    pub mechanisms: String,
    /// CPU placement of the server and client threads: cross, same, none or a CPU list
    /// (server first); default cross where two CPUs exist.
    #[arg(long)]
    pub pin: Option<String>,
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
    /// Transfers per size and mechanism; mean and 95 % CI over them.
    #[arg(long, default_value = "5")]
    pub reps: String,
    /// Seed of the order the mechanisms are measured in within each repetition (default:
    /// drawn, and recorded); the order is reversed on every other repetition.
    #[arg(long)]
    pub seed: Option<String>,
    /// The client hashes what it receives (xxh3-64) and compares it with the file's hash.
    #[arg(long)]
    pub verify: bool,
    /// perf counters to open per side: all, software, hardware, none.
    #[arg(long, default_value = "all")]
    pub counters: String,
    /// One more transfer per size and mechanism, after the measured ones, with the server's
    /// sending thread and the client's receiving thread sampled (see `run --profile`).
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub network: NetworkArgs,
    // With --remote the server writes each test file and sends it; this host receives.
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Results folder; default ./bytepath-results/<timestamp>/.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub stream: StreamArgs,
}

#[derive(Debug, Args)]
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
    /// Warm-up before each point, excluded from every figure.
    #[arg(long, default_value = "200ms")]
    pub warmup: String,
    /// Pipe buffer (F_SETPIPE_SZ) for pipe, ring size for shm (one value of --pipe-sizes).
    #[arg(long)]
    pub pipe_size: Option<String>,
    /// Pipe buffers (and shm ring sizes), comma-separated, such as 64K,1M: each a point of its
    /// own, so the report can say whether bandwidth falls beyond the buffer.
    #[arg(long)]
    pub pipe_sizes: Option<String>,
    /// Visits per point (at least 2): the transports at one size are visited back to back in a
    /// seeded order, round after round; --trials and --bytes are split over the visits.
    #[arg(long, default_value = "3")]
    pub visits: String,
    /// Seed of the visit order (default: drawn, and recorded).
    #[arg(long)]
    pub seed: Option<String>,
    /// udp, unix-dgram: send a size above the datagram limit as several numbered datagrams.
    #[arg(long)]
    pub udp_split: bool,
    /// CPU placement (see `run --pin`); default: cross where two CPUs exist.
    #[arg(long)]
    pub pin: Option<String>,
    /// Run the two sides in two processes (fork) instead of two threads of one process.
    #[arg(long)]
    pub processes: bool,
    #[command(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    pub watch: watch::WatchArgs,
    /// Results folder; default ./bytepath-results/<timestamp>/.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub stream: StreamArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results folder written by `bytepath sweep`.
    pub dir: std::path::PathBuf,
    /// Where to write the HTML report (default DIR/report.html; report.md goes beside it).
    #[arg(long, short = 'o')]
    pub output: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline results folder.
    pub old: std::path::PathBuf,
    /// The results folder to judge against it.
    pub new: std::path::PathBuf,
    /// Exit 1 when any point got slower by more than this share (e.g. 5%).
    #[arg(long)]
    pub fail_on_regression: Option<String>,
    #[command(flatten)]
    pub normalize: normalize::NormalizeArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What carries the bytes: tcp (loopback), unix (AF_UNIX stream socket pair), pipe (two
    /// pipes per flow), shm (two shared-memory rings per flow, spin-then-futex).
    #[arg(long, default_value = "tcp")]
    pub transport: String,
    /// Bytes each direction holds: the pipe buffer for --transport pipe (F_SETPIPE_SZ, up to
    /// /proc/sys/fs/pipe-max-size) or the ring size for --transport shm (default 64 KiB).
    #[arg(long)]
    pub pipe_size: Option<String>,
    /// How the sender hands a message to the kernel: send (reference, one prebuilt buffer),
    /// copy (serialize 8 fields, send), gather (sendmsg over 8 fields), zerocopy (MSG_ZEROCOPY),
    /// uring (io_uring send), uring-gather (io_uring sendmsg over 8 fields), uring-zc (io_uring
    /// send-zc), splice (vmsplice into a pipe, splice to the socket), sendfile (from a memfd).
    #[arg(long, short = 'm')]
    pub mechanism: String,
    /// io_uring mechanisms: sends submitted together, linked in order (default 16).
    #[arg(long)]
    pub queue_depth: Option<String>,
    /// How the receiving side takes bytes: recv, uring-recv (io_uring, provided buffers),
    /// zc-recv (TCP_ZEROCOPY_RECEIVE mapping), trunc (MSG_TRUNC: discards, delivers nothing).
    #[arg(long, default_value = "recv")]
    pub recv: String,
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
    /// stream (one-way, as fast as possible) or rr (request/response round trips).
    #[arg(long, short = 'p', default_value = "stream")]
    pub pattern: String,
    /// Time run before measuring, excluded from every figure (0s disables it).
    #[arg(long, default_value = "1s")]
    pub warmup: String,
    /// CPU placement: cross (sender and receiver of a flow on different CPUs), same, or a CPU
    /// list such as 0,1 or 0-3 handed out in order flow0-sender, flow0-receiver, flow1-sender…
    #[arg(long)]
    pub pin: Option<String>,
    /// Bytes per recv() call on the receiving side. Default: the message size, read until the
    /// whole message has arrived.
    #[arg(long)]
    pub recv_size: Option<String>,
    /// Receiving and answering sides busy-poll with non-blocking calls instead of sleeping.
    #[arg(long)]
    pub spin: bool,
    /// Sender writes a (flow, sequence) pattern into every message and the receiver checks
    /// every byte; any mismatch makes the run exit non-zero.
    #[arg(long)]
    pub verify: bool,
    /// udp, unix-dgram: send a message larger than one datagram as several equal datagrams
    /// (each numbered) instead of refusing the size.
    #[arg(long)]
    pub udp_split: bool,
    /// Run the two sides in two processes (fork): the measured side (stream receiver, rr
    /// client) stays in this process, the other side of every flow goes to one child.
    #[arg(long)]
    pub processes: bool,
    /// perf counters to open per thread: all, software, hardware, none, or auto (all for
    /// stream; none for rr, because counters add a perf context switch to every round trip).
    #[arg(long, default_value = "auto")]
    pub counters: String,
    /// Where each side's CPU goes: after the headline run, one more run of the same point with
    /// every side's threads sampled (perf_event_open; cycles with a PMU, cpu-clock without),
    /// broken down into copies, protocol, memory, locks, scheduling … (needs root or
    /// perf_event_paranoid ≤ 1; otherwise the profile says why it is unavailable).
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub network: NetworkArgs,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub stream: StreamArgs,
}

#[derive(Debug, Args)]
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
    /// Visits per point: every round visits the client counts in a seeded shuffled order and,
    /// at each, the models back to back (order reversed every other round); --duration is split
    /// evenly over a point's visits. One visit gives no interval.
    #[arg(long, default_value = "3")]
    pub visits: String,
    /// Seed of the visit order (default: drawn, and recorded).
    #[arg(long)]
    pub seed: Option<String>,
    /// Load before the measured time of each point, excluded from every figure.
    #[arg(long, default_value = "200ms")]
    pub warmup: String,
    /// Open loop: this many requests per second over all clients, latency measured from each
    /// request's intended send time. Default: closed loop (send again after each echo).
    #[arg(long)]
    pub rate: Option<String>,
    /// epoll only: worker threads, each with its own epoll sharing the listener.
    #[arg(long, default_value = "1")]
    pub server_threads: String,
    /// Threads driving the client connections (each with its own epoll).
    #[arg(long, default_value = "2")]
    pub client_threads: String,
    /// Each client closes its connection after this many requests (the point ends when all
    /// have, or at --duration).
    #[arg(long)]
    pub requests_per_connection: Option<String>,
    /// CPU placement: split (the server process on the upper half of the allowed CPUs, the
    /// load generator on the lower half; the default where two CPUs exist) or none.
    #[arg(long)]
    pub pin: Option<String>,
    /// Tests: this many extra clients that connect and never send, send half a request, or
    /// send half and disconnect.
    #[arg(long, default_value_t = 0, hide = true)]
    pub stalled_clients: usize,
    /// Tests: per-connection first and last completion times in each record.
    #[arg(long, hide = true)]
    pub record_connections: bool,
    /// One more window per point, after the measured one, with the server process's threads
    /// sampled: where the server's CPU goes, per model (see `run --profile`).
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub network: NetworkArgs,
    /// With --remote: each point's server model runs on `bytepath server` at HOST[:PORT],
    /// which reports what the server alone cost; this host runs the load generator.
    #[command(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    pub watch: watch::WatchArgs,
    /// Print the records as one JSON array instead of one line per point.
    #[arg(long)]
    pub json: bool,
    /// Results folder; default ./bytepath-results/<timestamp>/.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub stream: StreamArgs,
}
