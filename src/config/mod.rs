//! Command-line text -> a validated `RunSpec`. All input checking lives here, and every error
//! is one line that names the value and says what is allowed.
use crate::cli::RunArgs;
use crate::measure::counters::CounterSelection;
use crate::mechanism::recv_path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::transport::datagram::Framing;
use crate::transport::Transport;
use std::fmt;
use std::time::Duration;

pub mod network;
pub use network::Network;

pub const MAX_MESSAGE_SIZE: usize = 64 << 20;
pub const MAX_THREADS: usize = 1024;

/// A user-input error: printed as one line, exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

fn bad(msg: impl Into<String>) -> ConfigError {
    ConfigError(msg.into())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Stream,
    Rr,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Stream => "stream",
            Pattern::Rr => "rr",
        }
    }
}

impl std::str::FromStr for Pattern {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s {
            "stream" => Ok(Pattern::Stream),
            "rr" => Ok(Pattern::Rr),
            _ => Err(bad(format!(
                "--pattern {s:?}: unknown pattern; allowed: stream, rr"
            ))),
        }
    }
}

/// How threads are placed on CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pinning {
    Unpinned,
    Cross,
    Same,
    List(Vec<usize>),
}

/// The CPUs of one flow's two threads (sender/client, receiver/server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FlowPlacement {
    pub sender_cpu: Option<usize>,
    pub receiver_cpu: Option<usize>,
}

impl Pinning {
    pub fn name(&self) -> String {
        match self {
            Pinning::Unpinned => "unpinned".into(),
            Pinning::Cross => "cross".into(),
            Pinning::Same => "same".into(),
            Pinning::List(cpus) => cpus
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// Placement of flow `flow` given the CPUs this process may use.
    pub fn placement(&self, flow: usize, cpus: &[usize]) -> FlowPlacement {
        let pick = |list: &[usize], i: usize| Some(list[i % list.len()]);
        match self {
            Pinning::Unpinned => FlowPlacement {
                sender_cpu: None,
                receiver_cpu: None,
            },
            Pinning::Cross => FlowPlacement {
                sender_cpu: pick(cpus, 2 * flow),
                receiver_cpu: pick(cpus, 2 * flow + 1),
            },
            Pinning::Same => FlowPlacement {
                sender_cpu: pick(cpus, flow),
                receiver_cpu: pick(cpus, flow),
            },
            Pinning::List(list) => FlowPlacement {
                sender_cpu: pick(list, 2 * flow),
                receiver_cpu: pick(list, 2 * flow + 1),
            },
        }
    }
}

/// When a point's measured phase ends: at the run's `duration`, or once every flow's measured
/// side has completed its share of messages. The phase is cut into slices of `slice`, which the
/// record keeps as diagnostics of the run's steadiness. (A study's interval comes from several
/// visits of each point, never from stopping one stretch once its slices agree: re-testing an
/// interval after every slice narrows it, and the slices of one stretch do not see the regimes a
/// shared machine moves between.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stopping {
    pub slice: Duration,
    /// Stop once every flow's measured side has completed this many messages.
    pub messages_per_flow: Option<u64>,
}

impl Stopping {
    /// The whole duration, cut into (at most) 100 ms slices, at least five.
    pub fn fixed(duration: Duration) -> Stopping {
        let slice = Duration::from_millis(100)
            .min(duration / 5)
            .max(Duration::from_millis(1));
        Stopping {
            slice,
            messages_per_flow: None,
        }
    }
}

/// One validated experiment point.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub transport: Transport,
    /// Requested pipe buffer (`--pipe-size`); `None` keeps the kernel's default.
    pub pipe_size: Option<usize>,
    pub mechanism: MechanismKind,
    pub pattern: Pattern,
    pub message_size: usize,
    pub threads: usize,
    /// The longest the measured phase may last (`--duration`, or a sweep's `--max-time`).
    pub duration: Duration,
    pub stopping: Stopping,
    pub warmup: Duration,
    pub pinning: Pinning,
    /// CPUs available to this process when the spec was made (placement is computed on them).
    pub cpus: Vec<usize>,
    /// Bytes per recv() call; `None` means one message, read until whole.
    pub recv_size: Option<usize>,
    pub spin: bool,
    pub verify: bool,
    pub counters: CounterSelection,
    /// Datagram transports: send a message larger than one datagram as several.
    pub udp_split: bool,
    /// `--processes`: the two sides of every flow run in two processes (fork), not two threads.
    pub processes: bool,
    /// Where the sides run: loopback, or two network namespaces (`--netns`).
    pub network: Network,
    /// io_uring mechanisms: sends submitted together (`--queue-depth`).
    pub queue_depth: u32,
    /// How receiving sides take bytes from the kernel (`--recv`).
    pub recv_path: RecvPath,
}

/// `--recv zc-recv`: pages of payload per full TCP segment, so every segment can be mapped
/// whole. TCP_MAXSEG takes at most 32767 (the kernel's MAX_TCP_WINDOW; 15 pages are refused
/// with EINVAL), so 7 pages (28672 B) is the most it can ask for.
pub const ZC_SEGMENT_PAGES: u32 = 7;

/// `--queue-depth` when not given.
pub const DEFAULT_QUEUE_DEPTH: u32 = 16;
/// The largest `--queue-depth`: sends submitted together share one submission queue.
pub const MAX_QUEUE_DEPTH: u32 = 4096;

/// Parses `--queue-depth`: submissions in flight at once.
pub fn parse_queue_depth(text: Option<&str>) -> Result<u32, ConfigError> {
    let Some(text) = text else {
        return Ok(DEFAULT_QUEUE_DEPTH);
    };
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_QUEUE_DEPTH).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "--queue-depth {text:?}: allowed: a whole number from 1 to {MAX_QUEUE_DEPTH}"
        ))),
    }
}

/// Refuses a receive path the transport cannot carry, and `--verify` with one that delivers
/// no bytes to check.
pub fn check_recv_path(
    path: RecvPath,
    transport: Transport,
    verify: bool,
) -> Result<(), ConfigError> {
    if let Some(allowed) = path.transports() {
        if !allowed.contains(&transport) {
            return Err(bad(format!(
                "--recv {} with --transport {}: allowed only with {}",
                path.name(),
                transport.name(),
                names(allowed)
            )));
        }
    }
    if verify && !path.delivers_data() {
        return Err(bad(format!(
            "--recv {} with --verify: MSG_TRUNC discards the bytes in the kernel, so there is nothing to check; leave out --verify",
            path.name()
        )));
    }
    Ok(())
}

/// Why a mechanism is bound to the transports it allows.
fn transport_rule(mechanism: MechanismKind) -> &'static str {
    match mechanism {
        MechanismKind::Zerocopy => "MSG_ZEROCOPY works on TCP sockets only",
        MechanismKind::UringZc => "io_uring SEND_ZC sends zero copy on TCP sockets only",
        MechanismKind::Splice | MechanismKind::Sendfile => {
            "splice and sendfile move pages into a stream socket"
        }
        _ => "io_uring sends here go to stream sockets",
    }
}

fn names(transports: &[Transport]) -> String {
    let list: Vec<&str> = transports.iter().map(|t| t.name()).collect();
    list.join(" and ")
}

impl RunSpec {
    pub fn from_args(args: &RunArgs, cpus: &[usize]) -> Result<RunSpec, ConfigError> {
        let message_size = parse_message_size(&args.size)?;
        let pattern: Pattern = args.pattern.parse()?;
        let recv_size = match &args.recv_size {
            Some(text) => Some(parse_recv_size(text)?),
            None => None,
        };
        let threads = parse_threads(&args.threads)?;
        let count = parse_count(args)?;
        let duration = match (&args.duration, count) {
            (Some(text), _) => parse_duration("--duration", text, false)?,
            (None, Some(_)) => COUNTED_RUN_CAP,
            (None, None) => Duration::from_secs(5),
        };
        let transport: Transport = args.transport.parse()?;
        let mechanism: MechanismKind = args.mechanism.parse()?;
        check_transport(transport, mechanism)?;
        if args.queue_depth.is_some() && !mechanism.uses_queue_depth() {
            return Err(bad(format!(
                "--queue-depth with --mechanism {}: applies to uring, uring-gather and uring-zc only",
                mechanism.name()
            )));
        }
        let queue_depth = parse_queue_depth(args.queue_depth.as_deref())?;
        let recv_path: RecvPath = args.recv.parse()?;
        check_recv_path(recv_path, transport, args.verify)?;
        let network = Network::from_args(&args.network)?;
        network.check_transport(transport)?;
        check_datagram_size(transport, message_size, args.udp_split)?;
        if transport.is_datagram() && recv_size.is_some() {
            return Err(bad(format!(
                "--recv-size with --transport {}: a datagram is received whole, one per call; allowed only with tcp, unix, pipe and shm",
                transport.name()
            )));
        }
        let pipe_size = match &args.pipe_size {
            Some(text) if matches!(transport, Transport::Pipe | Transport::Shm) => {
                Some(parse_pipe_size(text)?)
            }
            Some(text) => {
                return Err(bad(format!(
                    "--pipe-size {text:?}: applies to --transport pipe and shm only (got --transport {})",
                    transport.name()
                )))
            }
            None => None,
        };
        Ok(RunSpec {
            transport,
            pipe_size,
            mechanism,
            pattern,
            message_size,
            threads,
            duration,
            stopping: Stopping {
                messages_per_flow: count.map(|c| c.per_flow(threads, message_size)),
                ..Stopping::fixed(duration)
            },
            warmup: parse_duration("--warmup", &args.warmup, true)?,
            pinning: parse_pinning(args.pin.as_deref(), cpus)?,
            cpus: cpus.to_vec(),
            recv_size,
            spin: args.spin,
            verify: args.verify,
            counters: parse_counters(&args.counters, pattern)?,
            udp_split: args.udp_split,
            processes: args.processes,
            network,
            queue_depth,
            recv_path,
        })
    }

    /// How messages map onto datagrams (datagram transports; the size was checked at parse).
    pub fn framing(&self) -> Option<Framing> {
        self.transport.is_datagram().then(|| {
            Framing::for_transport(self.transport, self.message_size, self.udp_split)
                .expect("the message size was checked against the datagram limit")
        })
    }

    /// The options every flow of this run needs, on whichever side opens it.
    pub fn socket_options(&self) -> crate::transport::SocketOptions {
        let zerocopy = self.mechanism.needs_zerocopy_socket();
        crate::transport::SocketOptions {
            nodelay: self.tcp_nodelay() || self.mechanism.needs_nodelay(),
            zerocopy_sender: zerocopy,
            zerocopy_receiver: zerocopy && self.pattern == Pattern::Rr,
            nonblocking_reads: self.spin,
            pipe_size: self.pipe_size,
            framing: self.framing(),
            tcp_maxseg: (self.recv_path == RecvPath::ZcRecv && self.transport == Transport::Tcp)
                .then(|| crate::transport::tcp::page_multiple_maxseg(ZC_SEGMENT_PAGES)),
        }
    }

    /// TCP_NODELAY: request/response must not wait for Nagle (meaningless off TCP).
    pub fn tcp_nodelay(&self) -> bool {
        self.transport == Transport::Tcp && self.pattern == Pattern::Rr
    }

    /// Bytes one recv() call asks for, as the output states it.
    pub fn recv_call_size(&self) -> usize {
        self.recv_size.unwrap_or(self.message_size)
    }

    /// Refuses a run whose message buffers would not fit in half the available memory.
    pub fn check_memory(&self, available: u64) -> Result<(), ConfigError> {
        let per_sender = match self.mechanism {
            MechanismKind::Zerocopy => {
                crate::mechanism::zerocopy_pool_size(self.message_size, 4 << 20)
            }
            // uring-zc's pool holds at least one buffer per queue-depth entry.
            MechanismKind::UringZc => {
                crate::mechanism::zerocopy_pool_size(self.message_size, 4 << 20)
                    .max(self.queue_depth as usize)
            }
            MechanismKind::Uring | MechanismKind::UringGather => self.queue_depth as usize,
            _ => 2,
        } * self.message_size;
        let per_receiver = self.recv_size.unwrap_or(0).max(self.message_size);
        let sides = if self.pattern == Pattern::Rr { 2 } else { 1 };
        let need = (self.threads * sides * (per_sender + per_receiver)) as u64;
        if need > available / 2 {
            return Err(bad(format!(
                "--size {} x --threads {}: needs about {} MiB of buffers, more than half of the {} MiB available; use fewer threads or smaller messages",
                self.message_size,
                self.threads,
                need >> 20,
                available >> 20
            )));
        }
        Ok(())
    }

    pub fn placement(&self, flow: usize) -> FlowPlacement {
        self.pinning.placement(flow, &self.cpus)
    }
}

/// `--remote HOST[:PORT]`: a host name, an IPv4 address, or an IPv6 address (in brackets
/// when a port follows).
pub fn parse_remote(text: &str) -> Result<crate::remote::client::Target, ConfigError> {
    let bad_target = || {
        bad(format!(
            "--remote {text:?}: allowed: HOST or HOST:PORT (IPv6 as [ADDR]:PORT), port 1-65535"
        ))
    };
    let text = text.trim();
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad_target)?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':').ok_or_else(bad_target)?)),
        }
    } else if text.matches(':').count() == 1 {
        let (host, port) = text.split_once(':').expect("one colon");
        (host, Some(port))
    } else {
        (text, None)
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(bad_target)?,
        None => crate::remote::DEFAULT_PORT,
    };
    if host.is_empty() || host.chars().any(char::is_whitespace) {
        return Err(bad_target());
    }
    Ok(crate::remote::client::Target {
        host: host.to_string(),
        port,
    })
}

/// Where `--remote` runs the other side, and the token to prove there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRun {
    pub target: crate::remote::client::Target,
    pub token: Option<Vec<u8>>,
    /// `--reverse`: this host sends and the server receives and measures (`run`, stream only).
    pub reverse: bool,
}

impl RemoteRun {
    /// `--remote` and its companions, parsed once per command (run, sweep, ipc); `None` when
    /// both sides run on this host. What only one command refuses is checked by that command.
    pub fn from_args(
        args: &crate::cli::RemoteArgs,
        network: &Network,
    ) -> Result<Option<RemoteRun>, ConfigError> {
        let Some(text) = &args.remote else {
            if args.token_file.is_some() || args.reverse {
                let flag = if args.reverse {
                    "--reverse"
                } else {
                    "--token-file"
                };
                return Err(bad(format!(
                    "{flag}: applies with --remote HOST[:PORT] only"
                )));
            }
            return Ok(None);
        };
        let target = parse_remote(text)?;
        if network.is_netns() {
            return Err(bad(
                "--netns with --remote: two placements at once; the sides are either in two namespaces on this host or on two hosts",
            ));
        }
        let token = match &args.token_file {
            Some(path) => Some(crate::remote::protocol::read_token(path).map_err(bad)?),
            None => None,
        };
        Ok(Some(RemoteRun {
            target,
            token,
            reverse: args.reverse,
        }))
    }
}

/// `run --remote` and its companions, or `None` for a run on this host.
pub fn remote_from_args(args: &RunArgs, spec: &RunSpec) -> Result<Option<RemoteRun>, ConfigError> {
    let Some(remote) = RemoteRun::from_args(&args.remote, &spec.network)? else {
        return Ok(None);
    };
    if !matches!(spec.transport, Transport::Tcp | Transport::Udp) {
        return Err(bad(format!(
            "--transport {} with --remote: {}",
            args.transport,
            crate::sides::remote_carries(spec.transport).unwrap_err()
        )));
    }
    if args.processes {
        return Err(bad(
            "--processes with --remote: the server already runs the other side in its own process; drop --processes",
        ));
    }
    if remote.reverse && spec.pattern == Pattern::Rr {
        return Err(bad(
            "--reverse with --pattern rr: in a round trip this host always asks and the server answers; --reverse applies to stream only",
        ));
    }
    if remote.reverse && spec.stopping.messages_per_flow.is_some() {
        return Err(bad(
            "--reverse with --messages/--bytes: not supported yet (the count would be kept on the server); give --duration instead",
        ));
    }
    Ok(Some(remote))
}

/// A `bytepath server` command line, checked.
pub fn server_config(
    args: &crate::cli::ServerArgs,
) -> Result<crate::remote::server::ServerConfig, ConfigError> {
    let bind = args.bind.trim().parse().map_err(|_| {
        bad(format!(
            "--bind {:?}: allowed: an IPv4 or IPv6 address such as 127.0.0.1 or 0.0.0.0",
            args.bind
        ))
    })?;
    let port = args.port.trim().parse::<u16>().map_err(|_| {
        bad(format!(
            "--port {:?}: allowed: 0 (pick a free port) to 65535",
            args.port
        ))
    })?;
    let max_threads = parse_threads(&args.max_threads)
        .map_err(|e| bad(e.0.replacen("--threads", "--max-threads", 1)))?;
    let max_message_size = parse_message_size(&args.max_message_size)
        .map_err(|e| bad(e.0.replacen("--size", "--max-message-size", 1)))?;
    let max_bytes = match &args.max_bytes {
        Some(text) => Some(parse_bytes(text).filter(|&b| b > 0).ok_or_else(|| {
            bad(format!(
                "--max-bytes {text:?}: allowed: a size above 0 such as 64M or 10G"
            ))
        })?),
        None => None,
    };
    let token = match &args.token_file {
        Some(path) => Some(crate::remote::protocol::read_token(path).map_err(bad)?),
        None => None,
    };
    Ok(crate::remote::server::ServerConfig {
        bind,
        port,
        token,
        limits: crate::remote::server::Limits {
            max_threads,
            max_duration: parse_duration("--max-duration", &args.max_duration, false)?,
            max_message_size,
            max_bytes,
            max_file_size: parse_bytes(&args.max_file_size)
                .filter(|&b| b > 0)
                .ok_or_else(|| {
                    bad(format!(
                        "--max-file-size {:?}: allowed: a size above 0 such as 64M or 4G",
                        args.max_file_size
                    ))
                })?,
            max_clients: match args.max_clients.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(bad(format!(
                        "--max-clients {:?}: allowed: a whole number above 0",
                        args.max_clients
                    )))
                }
            },
        },
        timeout: parse_duration("--timeout", &args.timeout, false)?,
        allow_peers: crate::remote::allow::AllowPeers::parse(args.allow_peers.as_deref())
            .map_err(bad)?,
    })
}

/// How long a run with `--messages` or `--bytes` may take when `--duration` does not say.
pub const COUNTED_RUN_CAP: Duration = Duration::from_secs(600);

/// What `--messages` / `--bytes` asked for, over all flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Messages(u64),
    Bytes(u64),
}

impl Count {
    /// Each flow's share, in whole messages (rounded up, so the total is at least the request).
    pub fn per_flow(self, threads: usize, message_size: usize) -> u64 {
        let flows = threads as u64;
        match self {
            Count::Messages(n) => n.div_ceil(flows),
            Count::Bytes(b) => b.div_ceil(flows).div_ceil(message_size as u64),
        }
    }
}

fn parse_count(args: &RunArgs) -> Result<Option<Count>, ConfigError> {
    match (&args.messages, &args.bytes) {
        (Some(text), _) => match text.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(Some(Count::Messages(n))),
            _ => Err(bad(format!(
                "--messages {text:?}: allowed: a whole number above 0"
            ))),
        },
        (None, Some(text)) => match parse_bytes(text) {
            Some(n) if n > 0 => Ok(Some(Count::Bytes(n))),
            _ => Err(bad(format!(
                "--bytes {text:?}: allowed: a size above 0 such as 64M or 1G"
            ))),
        },
        (None, None) => Ok(None),
    }
}

/// Zero copy (MSG_ZEROCOPY) is a TCP socket feature.
/// Refuses a message size the datagram transport cannot carry (tcp, unix, pipe, shm carry any).
pub fn check_datagram_size(
    transport: Transport,
    message_size: usize,
    split: bool,
) -> Result<(), ConfigError> {
    if !transport.is_datagram() {
        return Ok(());
    }
    Framing::for_transport(transport, message_size, split)
        .map(|_| ())
        .map_err(|e| bad(format!("--size {e}")))
}

pub fn check_transport(transport: Transport, mechanism: MechanismKind) -> Result<(), ConfigError> {
    match mechanism.transports() {
        Some(allowed) if !allowed.contains(&transport) => Err(bad(format!(
            "--mechanism {} with --transport {}: {}; allowed only with {}; use another transport or mechanism",
            mechanism.name(),
            transport.name(),
            transport_rule(mechanism),
            names(allowed)
        ))),
        _ => Ok(()),
    }
}

/// Parses a byte count: plain digits, or with K/KB/KiB, M/MB/MiB, G/GB/GiB (all binary, any case).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    if digits.is_empty() {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

pub fn parse_message_size(text: &str) -> Result<usize, ConfigError> {
    let allowed = "a multiple of 8 from 8 B to 64 MiB (e.g. 256, 1K, 4KiB, 512k)";
    let n = parse_bytes(text)
        .ok_or_else(|| bad(format!("--size {text:?}: not a size; allowed: {allowed}")))?;
    if n == 0 || n % 8 != 0 || n > MAX_MESSAGE_SIZE as u64 {
        return Err(bad(format!("--size {text:?} ({n} B): allowed: {allowed}")));
    }
    Ok(n as usize)
}

pub fn parse_recv_size(text: &str) -> Result<usize, ConfigError> {
    let allowed = "1 B to 64 MiB (e.g. 128K)";
    match parse_bytes(text) {
        Some(n) if n >= 1 && n <= MAX_MESSAGE_SIZE as u64 => Ok(n as usize),
        _ => Err(bad(format!("--recv-size {text:?}: allowed: {allowed}"))),
    }
}

/// `auto` counts everything in stream and nothing in rr, where per-thread counters would add
/// their context-switch cost to every round trip.
pub fn parse_counters(text: &str, pattern: Pattern) -> Result<CounterSelection, ConfigError> {
    match text {
        "auto" if pattern == Pattern::Rr => Ok(CounterSelection::None),
        "auto" | "all" => Ok(CounterSelection::All),
        "software" => Ok(CounterSelection::Software),
        "hardware" => Ok(CounterSelection::Hardware),
        "none" => Ok(CounterSelection::None),
        _ => Err(bad(format!(
            "--counters {text:?}: allowed: auto, all, software, hardware, none"
        ))),
    }
}

/// Parses a share given as `2%` or `2` (percent), returning 0.02; allowed: above 0, at most `max_percent`.
pub fn parse_percent(flag: &str, text: &str, max_percent: f64) -> Result<f64, ConfigError> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= max_percent && p.is_finite() => Ok(p / 100.0),
        _ => Err(bad(format!(
            "{flag} {text:?}: allowed: a percentage above 0 and at most {max_percent}, such as 2%"
        ))),
    }
}

pub fn parse_pipe_size(text: &str) -> Result<usize, ConfigError> {
    let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or(1 << 20);
    match parse_bytes(text) {
        Some(n) if n >= 4096 && n <= max => Ok(n as usize),
        _ => Err(bad(format!(
            "--pipe-size {text:?}: allowed: 4 KiB to {} (pipe-max-size)",
            max
        ))),
    }
}

pub fn parse_threads(text: &str) -> Result<usize, ConfigError> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "--threads {text:?}: allowed: a whole number from 1 to {MAX_THREADS}"
        ))),
    }
}

/// Parses `5s`, `1.5s`, `200ms`, `2m`, `500us`; a bare number means seconds.
pub fn parse_duration(flag: &str, text: &str, zero_ok: bool) -> Result<Duration, ConfigError> {
    let allowed = if zero_ok {
        "a duration such as 1s, 1.5s, 200ms, 2m, or 0s"
    } else {
        "a duration above zero such as 5s, 1.5s, 200ms, 2m"
    };
    let err = || bad(format!("{flag} {text:?}: allowed: {allowed}"));
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| err())?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(err()),
    };
    if !seconds.is_finite() || seconds > 86_400.0 || (seconds == 0.0 && !zero_ok) {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses `cross`, `same`, or a CPU list (`0,1`, `0-3,6`) checked against `cpus`.
pub fn parse_pinning(text: Option<&str>, cpus: &[usize]) -> Result<Pinning, ConfigError> {
    let online = format_cpu_list(cpus);
    match text.map(str::trim) {
        None | Some("none") => Ok(Pinning::Unpinned),
        Some("cross") if cpus.len() < 2 => Err(bad(format!(
            "--pin cross: needs two CPUs, this process may use only {online}; use --pin same"
        ))),
        Some("cross") => Ok(Pinning::Cross),
        Some("same") => Ok(Pinning::Same),
        Some(list) => {
            let parsed = parse_cpu_list(list).ok_or_else(|| {
                bad(format!(
                    "--pin {list:?}: allowed: cross, same, or a CPU list such as 0,1 or 0-3"
                ))
            })?;
            if let Some(missing) = parsed.iter().find(|c| !cpus.contains(c)) {
                return Err(bad(format!(
                    "--pin {list:?}: CPU {missing} does not exist or is not available; available CPUs: {online}"
                )));
            }
            Ok(Pinning::List(parsed))
        }
    }
}

fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b || b - a > 4096 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// `[0,1,2,5]` -> `0-2,5`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_accept_the_documented_spellings() {
        assert_eq!(parse_message_size("256").unwrap(), 256);
        assert_eq!(parse_message_size("1K").unwrap(), 1024);
        assert_eq!(parse_message_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_message_size("512k").unwrap(), 512 * 1024);
        assert_eq!(parse_message_size("64M").unwrap(), 64 << 20);
    }

    #[test]
    fn sizes_outside_the_rules_are_refused_with_the_rule() {
        for text in ["0", "12", "65M", "abc", "4X", "", "-8"] {
            let err = parse_message_size(text).unwrap_err().0;
            assert!(err.starts_with("--size"), "{err}");
            assert!(err.contains("multiple of 8"), "{err}");
        }
    }

    #[test]
    fn durations_accept_seconds_milliseconds_and_minutes() {
        assert_eq!(
            parse_duration("-d", "5s", false).unwrap(),
            Duration::from_secs(5)
        );
        assert_eq!(
            parse_duration("-d", "1.5s", false).unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(
            parse_duration("-d", "200ms", false).unwrap(),
            Duration::from_millis(200)
        );
        assert_eq!(
            parse_duration("-d", "2m", false).unwrap(),
            Duration::from_secs(120)
        );
        assert_eq!(parse_duration("-w", "0s", true).unwrap(), Duration::ZERO);
    }

    #[test]
    fn zero_or_unparsable_duration_is_refused() {
        for text in ["0s", "0", "fast", "5x", "1.2.3s", ""] {
            let err = parse_duration("--duration", text, false).unwrap_err().0;
            assert!(err.starts_with("--duration"), "{err}");
        }
    }

    #[test]
    fn auto_counters_stay_off_the_round_trip() {
        assert_eq!(
            parse_counters("auto", Pattern::Rr).unwrap(),
            CounterSelection::None
        );
        assert_eq!(
            parse_counters("auto", Pattern::Stream).unwrap(),
            CounterSelection::All
        );
        assert_eq!(
            parse_counters("all", Pattern::Rr).unwrap(),
            CounterSelection::All
        );
        assert!(parse_counters("some", Pattern::Rr)
            .unwrap_err()
            .0
            .contains("auto, all"));
    }

    #[test]
    fn percentages_parse_with_or_without_the_sign() {
        assert_eq!(parse_percent("--ci", "2%", 50.0).unwrap(), 0.02);
        assert_eq!(parse_percent("--ci", "0.5", 50.0).unwrap(), 0.005);
        for text in ["0", "-1%", "51%", "two", ""] {
            assert!(parse_percent("--ci", text, 50.0)
                .unwrap_err()
                .0
                .starts_with("--ci"));
        }
    }

    #[test]
    fn threads_must_be_between_one_and_1024() {
        assert_eq!(parse_threads("4").unwrap(), 4);
        for text in ["0", "1025", "-1", "two"] {
            assert!(parse_threads(text).unwrap_err().0.contains("1 to 1024"));
        }
    }

    #[test]
    fn cpu_lists_must_name_available_cpus() {
        let cpus = [0, 1];
        assert_eq!(
            parse_pinning(Some("0,1"), &cpus).unwrap(),
            Pinning::List(vec![0, 1])
        );
        assert_eq!(
            parse_pinning(Some("0-1"), &cpus).unwrap(),
            Pinning::List(vec![0, 1])
        );
        let err = parse_pinning(Some("0,7"), &cpus).unwrap_err().0;
        assert!(
            err.contains("CPU 7 does not exist") && err.contains("0-1"),
            "{err}"
        );
        assert!(parse_pinning(Some("cross"), &[0]).is_err());
        assert!(parse_pinning(Some("x"), &cpus).is_err());
    }

    #[test]
    fn cross_placement_puts_a_flows_sides_on_different_cpus() {
        let p = Pinning::Cross.placement(0, &[0, 1]);
        assert_eq!((p.sender_cpu, p.receiver_cpu), (Some(0), Some(1)));
        let p = Pinning::Same.placement(3, &[0, 1]);
        assert_eq!(p.sender_cpu, p.receiver_cpu);
    }

    #[test]
    fn cpu_lists_format_as_ranges() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 5]), "0-2,5");
        assert_eq!(format_cpu_list(&[3]), "3");
    }

    proptest! {
        #[test]
        fn any_multiple_of_eight_in_range_parses_back(n in 1usize..=(MAX_MESSAGE_SIZE / 8)) {
            prop_assert_eq!(parse_message_size(&(n * 8).to_string()).unwrap(), n * 8);
        }

        #[test]
        fn suffixes_multiply_by_powers_of_1024(n in 1u64..=64, s in prop::sample::select(vec![("K", 10), ("KiB", 10), ("m", 20), ("MB", 20)])) {
            prop_assert_eq!(parse_bytes(&format!("{n}{}", s.0)), Some(n << s.1));
        }

        #[test]
        fn size_parser_never_panics(text in ".{0,12}") {
            let _ = parse_message_size(&text);
        }
    }
}
