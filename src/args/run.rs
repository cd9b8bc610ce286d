//! `bytepath run`'s flags -> a validated `RunSpec` and, with `--remote`, where the other side
//! runs. All of `run`'s input checking lives here, and every error is one line that names the
//! value and says what is allowed.
use super::network::placement;
use super::remote::remote_run;
use crate::cli::RunArgs;
use crate::config::remote::remote_carries;
use crate::config::{
    check_recv_path, check_transport, parse_bytes, parse_duration, parse_message_size,
    parse_pipe_size, parse_queue_depth, parse_threads, Count, Pattern, RemoteRun, RunSpec,
    Stopping, COUNTED_RUN_CAP,
};
use crate::engine::PointRunner;
use crate::environment::mem_available;
use crate::error::{bad, ConfigError, Error, Status};
use crate::mechanism::descriptor::{in_words, names};
use crate::mechanism::MechanismKind;
use crate::run::RunStudy;
use crate::sides::Sides;
use crate::transport::buffers::SocketBuffers;
use crate::transport::Transport;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// `bytepath run`'s flags -> the run's spec, every input checked.
/// `--transport`, or without it tcp, and on a sink (`--sink`) udp, the one a sink carries.
fn transport_named(args: &RunArgs) -> Result<Transport, ConfigError> {
    match (&args.transport, args.sink.sink) {
        (Some(text), _) => text.parse(),
        (None, true) => Ok(Transport::Udp),
        (None, false) => Ok(Transport::Tcp),
    }
}

pub fn run_spec(args: &RunArgs, cpus: &[usize]) -> Result<RunSpec, ConfigError> {
    let message_size = parse_message_size("--size", &args.size)?;
    let pattern: Pattern = args.pattern.parse()?;
    let recv_size = args.receive.size()?;
    let threads = parse_threads("--threads", &args.threads)?;
    let count = parse_count(args)?;
    let duration = run_duration(args, count.is_some())?;
    let transport: Transport = transport_named(args)?;
    let mechanism: MechanismKind = args.mechanism.parse()?;
    check_transport(transport, mechanism)?;
    let queue_depth = queue_depth(args, mechanism)?;
    let recv_path = args.receive.path()?;
    check_recv_path(recv_path, transport, args.verify.verify)?;
    // `--gso` sets the sink's default MTU (1500, so the kernel's segments are a NIC's frames).
    let network = placement(&args.network, &args.sink, args.gso.given())?;
    network.check_transport(transport)?;
    let split = args.udp_split.udp_split;
    let gso = super::gso::run_gso(&args.gso, transport, &network, message_size, split)?;
    check_recv_size(transport, recv_size)?;
    let spec = RunSpec {
        transport,
        pipe_size: pipe_size(args.pipe_size.pipe_size.as_deref(), transport)?,
        mechanism,
        pattern,
        message_size,
        threads,
        duration,
        stopping: Stopping {
            messages_per_flow: count.map(|c| c.per_flow(threads, message_size)),
            ..Stopping::fixed(duration)
        },
        warmup: args
            .warmup
            .or(run_warmup(args.under_load.under_load.is_some()))?,
        pinning: args.pin.or_unpinned(cpus)?,
        cpus: cpus.to_vec(),
        recv_size,
        spin: args.spin,
        verify: args.verify.verify,
        counters: args.counters.selection(pattern)?,
        udp_split: args.udp_split.udp_split,
        gso,
        processes: args.processes.processes,
        network,
        queue_depth,
        recv_path,
        profile: false,
        crr: crate::cli::crr::crr_options(&args.crr),
        bidir: args.bidir.bidir,
        under_load: args.under_load.flows()?,
        socket_buffers: buffers(args, transport)?,
        tcp_info: args.tcp_info.sampled()?,
    };
    check_combinations(&spec)?;
    Ok(spec)
}

/// `--recv-size` only where a receive can take part of a message.
fn check_recv_size(transport: Transport, recv_size: Option<usize>) -> Result<(), ConfigError> {
    if transport.is_datagram() && recv_size.is_some() {
        return Err(bad(format!(
            "--recv-size with --transport {}: a datagram is received whole, one per call; allowed only with tcp, unix, pipe and shm",
            transport.name()
        )));
    }
    Ok(())
}

/// What the flags refuse together (a sink's, crr's, datagram sends', --bidir's and
/// --under-load's), each in one line.
fn check_combinations(spec: &RunSpec) -> Result<(), ConfigError> {
    crate::config::network::check_sink(spec)?;
    crate::config::crr::check(spec, MechanismKind::ALL)?;
    super::gso::check_datagram_sends(spec)?;
    crate::config::bidir::check(spec, MechanismKind::ALL)?;
    crate::config::under_load::check(spec)
}

/// `--rcvbuf` / `--sndbuf`, refused off tcp (with `--remote` the server sets them too).
fn buffers(args: &RunArgs, transport: Transport) -> Result<SocketBuffers, ConfigError> {
    super::socket_buffers::socket_buffers(&args.socket_buffers, transport)
}

/// `--duration`, or when a count (`--messages`, `--bytes`) stops the run, its cap.
/// run's warm-up when `--warmup` is not given: 1 s before its one measured phase, or 200 ms
/// before each of the 16 visits of an `--under-load` run (a second each would spend 16 s
/// warming).
fn run_warmup(paired: bool) -> Duration {
    if paired {
        crate::cli::WarmupArgs::STUDY
    } else {
        crate::cli::WarmupArgs::RUN
    }
}

fn run_duration(args: &RunArgs, counted: bool) -> Result<Duration, ConfigError> {
    match (&args.duration, counted) {
        (Some(text), _) => parse_duration("--duration", text, false),
        (None, true) => Ok(COUNTED_RUN_CAP),
        (None, false) => Ok(Duration::from_secs(5)),
    }
}

/// `--queue-depth`: only the io_uring mechanisms keep a queue.
fn queue_depth(args: &RunArgs, mechanism: MechanismKind) -> Result<u32, ConfigError> {
    let depth = args.queue_depth.queue_depth.as_deref();
    if depth.is_some() && !mechanism.uses_queue_depth {
        let batched = names(MechanismKind::ALL, |d| d.uses_queue_depth);
        return Err(bad(format!(
            "--queue-depth with --mechanism {}: applies to {} only",
            mechanism.name(),
            in_words(&batched)
        )));
    }
    parse_queue_depth(depth)
}

/// `--pipe-size`: only pipe and shm have a pipe to size.
fn pipe_size(text: Option<&str>, transport: Transport) -> Result<Option<usize>, ConfigError> {
    match text {
        Some(text) if matches!(transport, Transport::Pipe | Transport::Shm) => {
            Ok(Some(parse_pipe_size("--pipe-size", text)?))
        }
        Some(text) => Err(bad(format!(
            "--pipe-size {text:?}: applies to --transport pipe and shm only (got --transport {})",
            transport.name()
        ))),
        None => Ok(None),
    }
}

/// `run --remote` and its companions, or `None` for a run on this host.
pub fn remote(args: &RunArgs, spec: &RunSpec) -> Result<Option<RemoteRun>, ConfigError> {
    let Some(remote) = remote_run(&args.remote, &spec.network)? else {
        return Ok(None);
    };
    if !matches!(spec.transport, Transport::Tcp | Transport::Udp) {
        return Err(bad(format!(
            "--transport {} with --remote: {}",
            spec.transport.name(),
            remote_carries(spec.transport).unwrap_err()
        )));
    }
    if spec.pattern == Pattern::Crr {
        return Err(bad(crate::config::crr::REMOTE_REFUSAL));
    }
    if spec.bidir {
        return Err(bad(crate::config::bidir::REMOTE_REFUSAL));
    }
    if spec.under_load.is_some() {
        return Err(bad(crate::config::under_load::REMOTE_REFUSAL));
    }
    if spec.transport == Transport::Udp && spec.mechanism.zerocopy_socket {
        return Err(bad(format!(
            "--mechanism {} {}",
            spec.mechanism.name(),
            crate::config::remote::ZEROCOPY_UDP_REFUSAL
        )));
    }
    if let Some(segment) = spec.gso {
        return Err(bad(format!(
            "--gso {segment} with --remote: the server's protocol does not carry a segment size, so its side would not cut datagrams alike; run --gso on this host"
        )));
    }
    if args.processes.processes {
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

/// `bytepath run`: measures one point and prints its record (the table, or `--json`). With
/// `--json-stream` stdout carries start, slice, point and end lines and the table goes to
/// stderr. The Ctrl-C handler is `main`'s.
pub fn command(args: &RunArgs, interrupt: &AtomicBool) -> Result<Status, Error> {
    let cpus = super::allowed_cpus()?;
    let spec = run_spec(args, &cpus)?;
    args.percentiles.choose()?;
    let remote = remote(args, &spec)?;
    if let Some(available) = mem_available() {
        spec.check_memory(available)?;
    }
    let stream = super::stream(&args.stream, args.json.json)?;
    // Best effort: if it fails, counters that cannot open say so with EMFILE as their reason.
    let _ = crate::sys::raise_open_file_limit();
    let result = (|| {
        // Dropped when this returns, whatever happened: `--netns` namespaces go with it.
        let sides = Sides::open(&spec.network, remote.as_ref())?;
        let spec = sides.place(spec);
        let study = RunStudy {
            cpus: &cpus,
            profile: args.profile.profile,
            count_copies: args.count_copies.count_copies,
            theirs: remote
                .as_ref()
                .map(|r| crate::remote::remote_role(spec.pattern, r.reverse)),
            stream: &stream,
        };
        let record = crate::run::measure_point(&spec, &sides, &study, interrupt)?;
        crate::run::report::show(&record, &stream, args.json.json);
        Ok(record.status_for_exit())
    })();
    super::streamed(&stream, result)
}
