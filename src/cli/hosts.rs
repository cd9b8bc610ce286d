//! The commands that reach other hosts: `bytepath server` (one host's side) and `bytepath mesh`
//! (every pair of many hosts).
use super::{ResumableFolderArgs, StreamArgs, TokenArgs, VisitsArgs, WarmupArgs};
use clap::{ArgGroup, Args};

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Address to listen on; the loopback address unless another is given (0.0.0.0 for all).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// Control port; 0 picks a free one (the first line of output names it).
    #[arg(long, default_value = "5301")]
    pub port: String,
    #[command(flatten)]
    pub token: TokenArgs,
    #[command(flatten)]
    pub identity: super::ServerIdentityArgs,
    /// The most flows (threads) a client may ask for.
    #[arg(long, default_value = "64")]
    pub max_threads: String,
    /// The longest a run may take from its request: warm-up and measured time together, and the
    /// waits for its data connections and its `go`.
    #[arg(long, default_value = "60s")]
    pub max_duration: String,
    /// `bytepath servers --remote`: the most client connections one point may ask for.
    #[arg(long, default_value = "20000")]
    pub max_clients: String,
    /// The largest message a client may ask for.
    #[arg(long, default_value = "64M")]
    pub max_message_size: String,
    /// The most payload bytes one run may move; when set, only runs bounded by --bytes or
    /// --messages are accepted.
    #[arg(long)]
    pub max_bytes: Option<String>,
    /// The largest test file `file --remote` may ask for (it is written in this host's
    /// temporary folder for the transfer and removed after it).
    #[arg(long, default_value = "4G")]
    pub max_file_size: String,
    /// How long to wait for a client's next message or data connection before ending its
    /// session.
    #[arg(long, default_value = "10s")]
    pub timeout: String,
    /// `bytepath mesh`: run points toward other servers when a mesh driver asks, only toward
    /// addresses inside these prefixes (comma-separated, such as 10.244.0.0/16,fd00::/64).
    /// Without it this server runs no test toward another host.
    #[arg(long)]
    pub allow_peers: Option<String>,
    /// `bytepath mesh`: the control ports a peer run may connect to on those addresses
    /// (comma-separated ports or ranges, such as 5301,5400-5410). Default: this server's own
    /// control port only. The run's data ports are the ones the other server names itself,
    /// once it has proved the token.
    #[arg(long)]
    pub peer_ports: Option<String>,
    /// Exit once standard input reaches its end: how `mesh --launch ssh` stops the servers it
    /// started (its end of the ssh connection closes them, even when the mesh is killed).
    #[arg(long)]
    pub until_stdin_closes: bool,
    #[command(flatten)]
    pub health: super::health::HealthArgs,
    #[command(flatten)]
    pub security: super::security::SecurityArgs,
    #[command(flatten)]
    pub log: super::log_format::LogFormatArgs,
}

/// `bytepath mesh`: which hosts, which pairs, which points, how often.
#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
#[command(group(ArgGroup::new("host_list").required(true).args(["hosts", "hosts_file", "hosts_from_dns"])))]
pub struct MeshArgs {
    /// The hosts, comma-separated, each HOST or HOST:PORT as --remote takes it (default port 5301);
    /// several servers may share one address on different ports.
    #[arg(long)]
    pub hosts: Option<String>,
    /// A file of hosts, one HOST or HOST:PORT per line (blank lines and # comments ignored).
    #[arg(long)]
    pub hosts_file: Option<std::path::PathBuf>,
    /// NAME or NAME:PORT: every address NAME resolves to is a host (a Kubernetes headless Service
    /// name resolves to its ready pods).
    #[arg(long)]
    pub hosts_from_dns: Option<String>,
    /// Which ordered pairs: all (every host to every other), ring (each host with its
    /// neighbours in list order, both ways), or star:HOST (HOST with every other, both ways).
    #[arg(long, default_value = "all")]
    pub pairs: String,
    /// Mechanisms, comma-separated (see `run --mechanism`); the source host's server sends.
    #[arg(long, default_value = "send")]
    pub mechanisms: String,
    /// Message sizes, comma-separated (4K, 64K …).
    #[arg(long, default_value = "64K")]
    pub sizes: String,
    /// Patterns, comma-separated: stream (Gbit/s, source to destination) and rr (round trips
    /// asked by the source, answered by the destination).
    #[arg(long, default_value = "stream,rr")]
    pub patterns: String,
    /// Flow counts, comma-separated.
    #[arg(long, default_value = "1")]
    pub threads: String,
    /// Measured time of one visit of a (pair, point).
    #[arg(long, default_value = "1s")]
    pub duration: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub warmup: WarmupArgs,
    // How many times the whole schedule is repeated: each (pair, point) is measured in this
    // many short visits spread over the mesh.
    #[command(flatten)]
    #[serde(flatten)]
    pub visits: VisitsArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub margin: super::MarginArgs,
    /// Pairs of one round measured at once (they never share a host): 1 measures one pair at
    /// a time; more loads the network with several pairs deliberately, and records say so.
    #[arg(long, default_value = "1")]
    pub concurrent: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub token: TokenArgs,
    /// ssh: start `bytepath server` on every host through OpenSSH for the mesh and stop it
    /// afterwards (each server allows exactly the mesh's hosts as peers).
    #[arg(long)]
    pub launch: Option<String>,
    /// With --launch ssh: the command that reaches a host, run as `COMMAND HOST REMOTE-COMMAND`
    /// (default: ssh -o BatchMode=yes).
    #[arg(long)]
    pub ssh_command: Option<String>,
    /// With --launch ssh: the bytepath executable on the hosts (default: bytepath on their
    /// PATH).
    #[arg(long)]
    pub launch_binary: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub folder: ResumableFolderArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub stream: StreamArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub percentiles: super::PercentilesArgs,
}
