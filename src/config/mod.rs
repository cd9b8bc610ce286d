//! The validated, plain specifications every layer above shares: a run's `RunSpec` and the
//! values in it (pattern, pinning, stopping, network, limits), the checks that combine them,
//! and the parsers from text to each value (`parse`). No clap and no remote sessions: `args`
//! turns the command line into these, and every error is one line that names the value and
//! says what is allowed.
use crate::error::{bad, ConfigError};
use crate::measure::counters::CounterSelection;
use crate::mechanism::receive::path::RecvPath;
use crate::mechanism::{MechanismKind, Transports};
use crate::transport::datagram::Framing;
use crate::transport::Transport;
use std::fmt;
use std::time::Duration;

pub(crate) mod bidir;
pub(crate) mod crr;
mod names;
pub(crate) mod network;
pub(crate) mod parse;
pub(crate) mod point;
pub(crate) mod remote;
pub(crate) mod under_load;
pub(crate) mod watch;
pub use names::mechanism_among;
pub use network::Network;
pub use parse::*;
pub use point::Point;
pub use remote::{parse_remote, RemoteRun, Target};

pub const MAX_MESSAGE_SIZE: usize = 64 << 20;
pub const MAX_THREADS: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Stream,
    Rr,
    /// Connect, request, response, close: one connection per transaction (`crr`).
    Crr,
}

impl Pattern {
    pub const ALL: [Pattern; 3] = [Pattern::Stream, Pattern::Rr, Pattern::Crr];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::Stream => "stream",
            Pattern::Rr => "rr",
            Pattern::Crr => "crr",
        }
    }
}

impl std::str::FromStr for Pattern {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s {
            "stream" => Ok(Pattern::Stream),
            "rr" => Ok(Pattern::Rr),
            "crr" => Ok(Pattern::Crr),
            _ => Err(bad(format!(
                "--pattern {s:?}: unknown pattern; allowed: stream, rr, crr"
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

/// Recorded as its name, as `--pin` takes it.
impl serde::Serialize for Pinning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// A duration as seconds: the unit of every `_s` key of records and markers (for
/// `#[serde(serialize_with)]` on a spec's `Duration`).
pub fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
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
    /// UDP GSO (`--gso`): the segment size the kernel cuts every send into.
    pub gso: Option<usize>,
    /// `--processes`: the two sides of every flow run in two processes (fork), not two threads.
    pub processes: bool,
    /// Where the sides run: loopback, or two network namespaces (`--netns`).
    pub network: Network,
    /// io_uring mechanisms: sends submitted together (`--queue-depth`).
    pub queue_depth: u32,
    /// How receiving sides take bytes from the kernel (`--recv`).
    pub recv_path: RecvPath,
    /// `--profile`: sample each side's threads over the measured phase (a visit of its own).
    pub profile: bool,
    /// `--pattern crr`: how each transaction's connection is closed.
    pub crr: crr::CrrOptions,
    /// `--bidir`: every stream flow carries data both ways at once.
    pub bidir: bool,
    /// `--under-load N` (rr): N bulk stream flows of the same mechanism run beside the
    /// measured flows (`under_load`); `None` without a load.
    pub under_load: Option<usize>,
    /// `--rcvbuf` / `--sndbuf`: the socket buffers a tcp flow asks for (other transports
    /// refuse them at parse).
    pub socket_buffers: crate::transport::buffers::SocketBuffers,
    /// `--tcp-info`: sample each tcp flow's TCP_INFO per slice (on unless `--tcp-info off`).
    pub tcp_info: bool,
}

/// `--recv zc-recv`: pages of payload per full TCP segment, so every segment can be mapped
/// whole. TCP_MAXSEG takes at most 32767 (the kernel's MAX_TCP_WINDOW; 15 pages are refused
/// with EINVAL), so 7 pages (28672 B) is the most it can ask for.
pub const ZC_SEGMENT_PAGES: u32 = 7;

/// `--queue-depth` when not given.
pub const DEFAULT_QUEUE_DEPTH: u32 = 16;
/// The largest `--queue-depth`: sends submitted together share one submission queue.
pub const MAX_QUEUE_DEPTH: u32 = 4096;

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

fn names(transports: &[Transport]) -> String {
    let list: Vec<&str> = transports.iter().map(|t| t.name()).collect();
    list.join(" and ")
}

impl RunSpec {
    /// The plainest run of `message_size` bytes for `duration`: send/stream over TCP, one
    /// flow, no warm-up, unpinned, nothing open (no counters, profile or verification). The
    /// places that vary a few fields (the mesh's visit, tests) start from it with `..`, so a
    /// new field gets its plain value in one place.
    pub fn plain(message_size: usize, duration: Duration) -> RunSpec {
        RunSpec {
            transport: Transport::Tcp,
            pipe_size: None,
            mechanism: MechanismKind::SEND,
            pattern: Pattern::Stream,
            message_size,
            threads: 1,
            duration,
            stopping: Stopping::fixed(duration),
            warmup: Duration::ZERO,
            pinning: Pinning::Unpinned,
            cpus: vec![0],
            recv_size: None,
            spin: false,
            verify: false,
            counters: CounterSelection::None,
            udp_split: false,
            gso: None,
            processes: false,
            network: Default::default(),
            queue_depth: DEFAULT_QUEUE_DEPTH,
            recv_path: Default::default(),
            profile: false,
            crr: Default::default(),
            bidir: false,
            under_load: None,
            socket_buffers: Default::default(),
            tcp_info: true,
        }
    }

    /// How messages map onto datagrams (datagram transports; the size was checked at parse).
    pub fn framing(&self) -> Option<Framing> {
        self.transport.is_datagram().then(|| {
            Framing::for_run(self.transport, self.message_size, self.udp_split, self.gso)
                .expect("the message size was checked against the datagram limit and --gso")
        })
    }

    /// The options every flow of this run needs, on whichever side opens it.
    pub fn socket_options(&self) -> crate::transport::SocketOptions {
        let zerocopy = self.mechanism.zerocopy_socket;
        crate::transport::SocketOptions {
            nodelay: self.tcp_nodelay() || self.mechanism.nodelay,
            zerocopy_sender: zerocopy,
            zerocopy_receiver: zerocopy && (self.pattern != Pattern::Stream || self.bidir),
            nonblocking_reads: self.spin,
            pipe_size: self.pipe_size,
            framing: self.framing(),
            tcp_maxseg: (self.recv_path == RecvPath::ZcRecv && self.transport == Transport::Tcp)
                .then(|| crate::transport::tcp::page_multiple_maxseg(ZC_SEGMENT_PAGES)),
            buffers: self.socket_buffers,
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
        let per_sender =
            (self.mechanism.buffers)(self.message_size, self.queue_depth) * self.message_size;
        let per_receiver = self.recv_size.unwrap_or(0).max(self.message_size);
        let sides = if self.pattern == Pattern::Stream {
            1
        } else {
            2
        };
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

/// Refuses a mechanism on a transport it cannot send on, with the descriptor's reason.
pub fn check_transport(transport: Transport, mechanism: MechanismKind) -> Result<(), ConfigError> {
    match mechanism.transports {
        Transports::Only {
            transports,
            because,
        } if !transports.contains(&transport) => Err(bad(format!(
            "--mechanism {} with --transport {}: {because}; allowed only with {}; use another transport or mechanism",
            mechanism.name(),
            transport.name(),
            names(transports)
        ))),
        _ => Ok(()),
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_placement_puts_a_flows_sides_on_different_cpus() {
        let p = Pinning::Cross.placement(0, &[0, 1]);
        assert_eq!((p.sender_cpu, p.receiver_cpu), (Some(0), Some(1)));
        let p = Pinning::Same.placement(3, &[0, 1]);
        assert_eq!(p.sender_cpu, p.receiver_cpu);
    }
}
