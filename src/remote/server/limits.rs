//! What a client may ask this server for: a run's request checked, value by value, against
//! the server's limits (`--max-*`) and the engine's own bounds, becoming this side's
//! `RunSpec`; and a `servers_run` checked against the limits and the models' bounds.
use super::{refuse, Refusal, ServerConfig};
use crate::config::{self, Pattern, Pinning, RunSpec, Stopping};
use crate::error::ConfigError;
use crate::mechanism::receive::path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::remote::protocol::{ErrorCode, RunRequest};
use crate::servers::{model::ServerModel, process::ServerSetup};
use crate::transport::buffers::SocketBuffers;
use crate::transport::Transport;
use std::time::Duration;

/// What a client may ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub max_threads: usize,
    pub max_duration: Duration,
    pub max_message_size: usize,
    /// Total payload bytes a run may move; when set, only runs bounded by `--bytes` or
    /// `--messages` are accepted.
    pub max_bytes: Option<u64>,
    /// The largest test file `file --remote` may ask this server to write and send.
    pub max_file_size: u64,
    /// Client connections one `bytepath servers` point may ask for.
    pub max_clients: usize,
}

fn invalid(e: ConfigError) -> Refusal {
    refuse(ErrorCode::Refused, e.0)
}

fn limit(message: String) -> Refusal {
    refuse(ErrorCode::Limit, message)
}

/// The server's side of a run, from the request: every value checked against the server's
/// limits and the engine's own bounds.
/// The request's flow count, within the server's `--max-threads`.
fn check_threads(threads: u64, limits: &Limits) -> Result<u64, Refusal> {
    if threads == 0 || threads > limits.max_threads as u64 {
        return Err(limit(format!(
            "{threads} threads: this server allows 1 to {} (--max-threads)",
            limits.max_threads
        )));
    }
    Ok(threads)
}

pub(in crate::remote) fn spec_for(
    request: &RunRequest,
    limits: &Limits,
) -> Result<RunSpec, Refusal> {
    let (transport, mechanism) = transport_and_mechanism(request)?;
    let queue_depth = match request.queue_depth {
        Some(q) => config::parse_queue_depth(Some(&q.to_string())).map_err(invalid)?,
        None => config::DEFAULT_QUEUE_DEPTH,
    };
    let recv_path: RecvPath = match &request.recv {
        Some(text) => text.parse().map_err(invalid)?,
        None => Default::default(),
    };
    config::check_recv_path(recv_path, transport, request.verify).map_err(invalid)?;
    let pattern = pattern_of(request)?;
    let size = message_size(request, transport, limits)?;
    let threads = check_threads(request.threads, limits)?;
    let (duration, warmup) = times(request, limits)?;
    check_bytes(request, limits)?;
    let spec = RunSpec {
        transport,
        mechanism,
        pattern,
        message_size: size,
        threads: threads as usize,
        duration,
        stopping: Stopping::fixed(duration),
        warmup,
        // The client's --pin places its own side; this side runs where the scheduler puts it.
        pinning: Pinning::Unpinned,
        cpus: Vec::new(),
        recv_size: recv_size(request)?,
        spin: request.spin,
        verify: request.verify,
        counters: config::parse_counters(&request.counters, pattern).map_err(invalid)?,
        udp_split: request.udp_split,
        // Across hosts the network is whatever joins them; loopback is the record's default.
        network: config::Network::default(),
        queue_depth,
        recv_path,
        profile: request.profile,
        socket_buffers: buffers(request, transport)?,
        tcp_info: request.tcp_info,
        ..RunSpec::plain(size, duration)
    };
    // Within the container's cgroup limit where it has one, not only the host's memory.
    if let Some(available) = super::memory::available() {
        spec.check_memory(available)
            .map_err(|e| refuse(ErrorCode::Limit, e.0))?;
    }
    Ok(spec)
}

/// How many messages this server's tcp stream sender hands over per flow: the client's count
/// and the messages its receiver's first call takes, which open its window uncounted (one
/// whole message, or what one `--recv-size` chunk spans), when the client declared a count
/// and asked no warm-up. Without it the sender would run flat out until the client's stop
/// arrived, and past `--max-bytes` on a fast path. A warm-up's messages are not in the count,
/// and the sender cannot tell which of its messages the client's warm-up took; a udp receiver
/// may never count datagrams that were lost.
pub(super) fn sends_per_flow(request: &RunRequest, spec: &RunSpec) -> Option<u64> {
    let counted_here = !request.reverse
        && spec.pattern == Pattern::Stream
        && spec.transport == Transport::Tcp
        && request.warmup_ms == 0;
    let size = spec.message_size as u64;
    let opening = spec
        .recv_size
        .map_or(1, |chunk| (chunk as u64).div_ceil(size) + 1);
    request
        .total_bytes
        .filter(|_| counted_here)
        .map(|total| total.div_ceil(size * spec.threads as u64) + opening)
}

/// `--rcvbuf` / `--sndbuf` as the client asked them: tcp only, each within the bounds the
/// client's own flags take.
fn buffers(request: &RunRequest, transport: Transport) -> Result<SocketBuffers, Refusal> {
    let asked = request.buffers;
    if asked.is_set() && transport != Transport::Tcp {
        return Err(refuse(
            ErrorCode::Refused,
            format!("socket buffers with {}: tcp only", request.transport),
        ));
    }
    let (lo, hi) = SocketBuffers::BOUNDS;
    for (name, bytes) in [("rcvbuf", asked.rcvbuf), ("sndbuf", asked.sndbuf)] {
        if let Some(bytes) = bytes.filter(|b| !(lo..=hi).contains(b)) {
            return Err(refuse(
                ErrorCode::Refused,
                format!("{name} {bytes}: this server sets socket buffers of {lo} to {hi} bytes"),
            ));
        }
    }
    Ok(asked)
}

/// tcp or udp, and a mechanism that sends on it.
fn transport_and_mechanism(request: &RunRequest) -> Result<(Transport, MechanismKind), Refusal> {
    let transport = match request.transport.as_str() {
        "tcp" => Transport::Tcp,
        "udp" => Transport::Udp,
        other => {
            return Err(refuse(
                ErrorCode::Refused,
                format!("transport {other:?}: this server carries tcp and udp only"),
            ))
        }
    };
    if request.udp_split && transport != Transport::Udp {
        return Err(refuse(
            ErrorCode::Refused,
            "udp_split with tcp: splitting applies to udp only",
        ));
    }
    let mechanism: MechanismKind = request.mechanism.parse().map_err(invalid)?;
    config::check_transport(transport, mechanism).map_err(invalid)?;
    if transport == Transport::Udp && mechanism.zerocopy_socket {
        return Err(refuse(
            ErrorCode::Refused,
            config::remote::ZEROCOPY_UDP_REFUSAL,
        ));
    }
    Ok((transport, mechanism))
}

/// The pattern, and `reverse` only where it applies (stream, by time).
fn pattern_of(request: &RunRequest) -> Result<Pattern, Refusal> {
    let pattern: Pattern = request.pattern.parse().map_err(invalid)?;
    if pattern == Pattern::Crr {
        // A client of this version never asks (it refuses crr with --remote first); an
        // older or hostile one is told why instead of reaching the engine's crr path.
        return Err(refuse(
            ErrorCode::Refused,
            "pattern crr: not served remotely yet; allowed: stream, rr",
        ));
    }
    if request.reverse && pattern != Pattern::Stream {
        return Err(refuse(
            ErrorCode::Refused,
            "reverse with rr: in a round trip the client always asks; reverse is for stream only",
        ));
    }
    if request.reverse && request.total_bytes.is_some() {
        return Err(refuse(
            ErrorCode::Refused,
            "reverse with a count (--bytes/--messages): not supported; give a duration",
        ));
    }
    Ok(pattern)
}

/// The message size, within `--max-message-size` and what the transport carries.
fn message_size(
    request: &RunRequest,
    transport: Transport,
    limits: &Limits,
) -> Result<usize, Refusal> {
    let size = request.message_size;
    if size == 0 || size > limits.max_message_size as u64 {
        return Err(limit(format!(
            "message size {size} bytes: this server allows 1 to {} (--max-message-size)",
            limits.max_message_size
        )));
    }
    // The spec's framing is taken as checked from here on.
    config::check_datagram_size(transport, size as usize, request.udp_split).map_err(invalid)?;
    if transport == Transport::Udp && request.recv_size.is_some() {
        return Err(refuse(
            ErrorCode::Refused,
            "recv size with udp: a datagram is received whole, one per call",
        ));
    }
    Ok(size as usize)
}

/// The measured phase and the warm-up, together within `--max-duration`: one hard cap holds
/// a session from its request on (`run`), so both must fit in it.
fn times(request: &RunRequest, limits: &Limits) -> Result<(Duration, Duration), Refusal> {
    let duration = Duration::from_millis(request.duration_ms);
    let warmup = Duration::from_millis(request.warmup_ms);
    let max = limits.max_duration;
    if duration.is_zero() || duration.saturating_add(warmup) > max {
        return Err(limit(format!(
            "duration {} ms with warm-up {} ms: this server allows up to {} ms for both together, counted from the request (--max-duration)",
            request.duration_ms,
            request.warmup_ms,
            max.as_millis()
        )));
    }
    Ok((duration, warmup))
}

/// With `--max-bytes`, only runs bounded by a count within it, and without a warm-up: the
/// server counts every byte its flows move, and a warm-up moves bytes for a time, not a count.
fn check_bytes(request: &RunRequest, limits: &Limits) -> Result<(), Refusal> {
    let Some(max_bytes) = limits.max_bytes else {
        return Ok(());
    };
    if request.warmup_ms > 0 {
        return Err(limit(format!(
            "warm-up {} ms with --max-bytes: this server counts the warm-up toward its {max_bytes} bytes per run, and a warm-up lasts a time, not a count; allowed: no warm-up (--warmup 0s)",
            request.warmup_ms
        )));
    }
    match request.total_bytes {
        Some(b) if b <= max_bytes => Ok(()),
        Some(b) => Err(limit(format!(
            "{b} bytes: this server allows up to {max_bytes} bytes per run (--max-bytes)"
        ))),
        None => Err(limit(format!(
            "a run bounded by time only: this server allows up to {max_bytes} bytes per run (--max-bytes); ask with --bytes or --messages"
        ))),
    }
}

fn recv_size(request: &RunRequest) -> Result<Option<usize>, Refusal> {
    match request.recv_size {
        Some(r) if r == 0 || r > config::MAX_MESSAGE_SIZE as u64 => Err(refuse(
            ErrorCode::Refused,
            format!(
                "recv size {r}: allowed 1 to {} bytes",
                config::MAX_MESSAGE_SIZE
            ),
        )),
        r => Ok(r.map(|r| r as usize)),
    }
}

/// What a `servers_run` request asks for, once checked.
pub(super) enum ServersPoint {
    Run(ServerSetup<'static>),
    /// The model cannot run on this host; not the client's mistake, so a skipped point.
    Skipped(String),
}

/// Whether this host can hold `clients` connections to `model`: the forked server holds one
/// descriptor per client, under this process's limit, and select(2) only so many.
fn fits_this_host(model: ServerModel, clients: usize) -> Result<(), Refusal> {
    if let Ok(open_files) = crate::sys::raise_open_file_limit() {
        let allowed = crate::servers::clients_allowed(open_files);
        if clients > allowed {
            return Err(limit(format!(
                "{clients} clients: RLIMIT_NOFILE on the server is {open_files}, room for {allowed} clients"
            )));
        }
    }
    if model == ServerModel::Select {
        if let Some(reason) = crate::servers::select_refusal(clients) {
            return Err(limit(reason));
        }
    }
    Ok(())
}

/// Checks a `servers_run` request against the server's limits and the models' own bounds.
pub(super) fn servers_point(
    model: &str,
    size: u64,
    threads: u64,
    clients: u64,
    config: &ServerConfig,
) -> Result<ServersPoint, Refusal> {
    let limits = &config.limits;
    let model = ServerModel::parse(model).map_err(|e| refuse(ErrorCode::Refused, e.0))?;
    if size == 0 || size > limits.max_message_size as u64 {
        return Err(limit(format!(
            "request size {size} bytes: this server allows 1 to {} (--max-message-size)",
            limits.max_message_size
        )));
    }
    if threads == 0 || threads > limits.max_threads as u64 {
        return Err(limit(format!(
            "{threads} server threads: this server allows 1 to {} (--max-threads)",
            limits.max_threads
        )));
    }
    if threads > 1 && model != ServerModel::Epoll {
        return Err(refuse(
            ErrorCode::Refused,
            format!("{threads} server threads: only the epoll model has worker threads"),
        ));
    }
    if clients == 0 || clients > limits.max_clients as u64 {
        return Err(limit(format!(
            "{clients} clients: this server allows 1 to {} (--max-clients)",
            limits.max_clients
        )));
    }
    fits_this_host(model, clients as usize)?;
    if model == ServerModel::Uring {
        if let Err(reason) = crate::sys::echo_ring::supported() {
            return Ok(ServersPoint::Skipped(format!("on the server: {reason}")));
        }
    }
    Ok(ServersPoint::Run(ServerSetup {
        model,
        size: size as usize,
        threads: threads as usize,
        // The client's --pin places its load generator only; this side runs where the
        // scheduler puts it.
        cpus: None,
        // Set once the point's driver is known (`servers`).
        door: crate::servers::door::Door::ANYONE,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_bytes: Option<u64>) -> Limits {
        Limits {
            max_threads: 4,
            max_duration: Duration::from_secs(1),
            max_message_size: 1 << 20,
            max_bytes,
            max_file_size: 1 << 20,
            max_clients: 10,
        }
    }

    fn request(duration_ms: u64, warmup_ms: u64) -> RunRequest {
        RunRequest {
            warmup_ms,
            ..RunRequest::plain(("tcp", "send", "stream"), 4096, duration_ms)
        }
    }

    #[test]
    fn asked_buffers_and_tcp_info_reach_the_spec_within_bounds_and_on_tcp_only() {
        let mut asked = request(500, 0);
        asked.tcp_info = true;
        asked.buffers = SocketBuffers {
            rcvbuf: Some(16 << 10),
            sndbuf: None,
        };
        let spec = spec_for(&asked, &limits(None)).ok().unwrap();
        assert_eq!(spec.socket_buffers, asked.buffers);
        assert!(spec.tcp_info);
        assert!(
            !spec_for(&request(500, 0), &limits(None))
                .ok()
                .unwrap()
                .tcp_info
        );
        asked.buffers.rcvbuf = Some(100);
        let refused = spec_for(&asked, &limits(None)).err().unwrap();
        assert_eq!(refused.code, ErrorCode::Refused);
        assert!(
            refused.message.starts_with("rcvbuf 100: "),
            "{}",
            refused.message
        );
        asked.buffers.rcvbuf = Some(16 << 10);
        asked.transport = "udp".into();
        let refused = spec_for(&asked, &limits(None)).err().unwrap();
        assert!(refused.message.contains("tcp only"), "{}", refused.message);
    }

    #[test]
    fn the_warm_up_and_the_duration_together_fit_in_max_duration() {
        let fits = times(&request(600, 400), &limits(None));
        assert!(fits.is_ok(), "600 + 400 ms is 1 s");
        let refused = times(&request(700, 400), &limits(None)).err().unwrap();
        assert_eq!(refused.code, ErrorCode::Limit);
        assert!(
            refused
                .message
                .contains("duration 700 ms with warm-up 400 ms")
                && refused.message.contains("up to 1000 ms for both together")
                && refused.message.contains("--max-duration"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn under_max_bytes_a_warm_up_is_refused_naming_what_is_allowed() {
        let counted = |warmup_ms| RunRequest {
            total_bytes: Some(1000),
            ..request(500, warmup_ms)
        };
        assert!(check_bytes(&counted(0), &limits(Some(1 << 20))).is_ok());
        let refused = check_bytes(&counted(100), &limits(Some(1 << 20)))
            .err()
            .unwrap();
        assert_eq!(refused.code, ErrorCode::Limit);
        assert!(
            refused.message.contains("warm-up 100 ms with --max-bytes")
                && refused.message.contains("--warmup 0s"),
            "{}",
            refused.message
        );
        // Without --max-bytes the warm-up is the client's to choose.
        assert!(check_bytes(&counted(100), &limits(None)).is_ok());
    }

    #[test]
    fn the_stream_sender_hands_over_the_clients_count_only_when_that_is_all_the_run_moves() {
        let limits = limits(None);
        let asked = |transport, pattern, warmup_ms, recv_size| {
            let request = RunRequest {
                total_bytes: Some(3 * 2 * 4096),
                threads: 2,
                warmup_ms,
                recv_size,
                ..RunRequest::plain((transport, "send", pattern), 4096, 500)
            };
            let spec = spec_for(&request, &limits).ok().unwrap();
            sends_per_flow(&request, &spec)
        };
        let counted = |transport, pattern, warmup_ms| asked(transport, pattern, warmup_ms, None);
        // 3 messages per flow and the one whose arrival opens the receiver's window.
        assert_eq!(counted("tcp", "stream", 0), Some(3 + 1));
        // A 10000-byte chunk spans 3 messages and a part of a fourth.
        assert_eq!(asked("tcp", "stream", 0, Some(10_000)), Some(3 + 4));
        assert_eq!(
            counted("tcp", "stream", 100),
            None,
            "a warm-up is not in the count"
        );
        assert_eq!(
            counted("udp", "stream", 0),
            None,
            "lost datagrams are not counted"
        );
        assert_eq!(
            counted("tcp", "rr", 0),
            None,
            "an rr server answers what comes"
        );
        let timed = request(500, 0);
        let spec = spec_for(&timed, &limits).ok().unwrap();
        assert_eq!(sends_per_flow(&timed, &spec), None);
    }
}
