//! A run's side served from here: its data connections accepted (tcp: tagged connections on
//! a data port; udp: one joined socket per flow), its workers started and held at the barrier
//! until the client's `Go` (before it they neither send nor read), followed until it ends or is
//! stopped, and its samples (and, when it measured, its slices) sent back. One hard cap holds
//! the whole session from the request's acceptance: `--max-duration`, which the wait for the
//! data connections and for `Go`, the warm-up and the measured phase all count toward. The
//! session stops its side there itself, and a watchdog thread ends the session a moment later
//! whatever the client does (the session may be blocked reading a frame trickled byte by byte).
use super::budget::{self, ByteBudget, BYTES_REACHED};
use super::sampling::Sampling;
use super::side::start_side;
use super::watchdog::{Watchdog, CUT_GRACE};
use super::{expect, out_of_order, refuse, send, Refusal, RunClaim, ServerConfig, State, RUN_POLL};
use crate::config::{Pattern, RunSpec};
use crate::engine::control::Control;
use crate::engine::slices::SliceBoard;
use crate::engine::worker::ThreadSample;
use crate::engine::{self, STOP_GRACE};
use crate::remote::channel::ControlStream;
use crate::remote::protocol::{
    self, ErrorCode, FrameError, Message, RunRequest, COOKIE_BYTES, DATA_TAG_BYTES,
};
use crate::remote::{apply_options, remote_role};
use crate::transport::datagram::{send_buffer, Framing, RECEIVE_TIMEOUT};
use crate::transport::tcp::max_send_buffer;
use crate::transport::Endpoint;
use std::io::Read;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Past the hard cap, how long the session has to stop its side (`CUT_GRACE`), collect and
/// report before the watchdog ends it.
const WATCHDOG_GRACE: Duration = Duration::from_millis(700);

/// Why the server cut a run short, told to its client in `Done`.
const WATCHDOG_FIRED: &str = "the server's side did not finish in time; its flows were shut down";
const SERVER_ENDING: &str =
    "the server was asked to end (SIGTERM or SIGINT) and stopped this run early";
pub(super) const TIME_REACHED: &str = "the run reached this server's --max-duration, counted from its request (the wait for go and the warm-up included); the server stopped its side";
/// What the log says of a session the watchdog ended (its client is gone from the channel).
const SESSION_CAPPED: &str = "the session passed this server's --max-duration, counted from its request (the wait for go and the warm-up included), and was ended";

/// Accepts the run's data connections, runs this side, and sends its samples back.
/// With `reverse` asked this side is the measured one: its slices are kept and sent back too.
pub(super) fn run_side(
    stream: &mut ControlStream,
    spec: &RunSpec,
    request: &RunRequest,
    state: &State,
    claim: &mut RunClaim<'_>,
) -> Result<(String, u64), Refusal> {
    let reverse = request.reverse;
    // The session's one hard cap: everything from the request's acceptance counts toward it.
    let cap = Instant::now() + state.config.limits.max_duration;
    let flows = flows(stream, spec, reverse, &state.config, cap)?;
    // What the flows' buffers hold in flight: this side's send buffers and as much again at
    // the peer (the margin of the byte budget).
    let in_flight: u64 = flows.iter().map(|(_, buffer)| 2 * *buffer as u64).sum();
    let slice_count = slice_count(spec, reverse);
    let role = remote_role(spec.pattern, reverse);
    let sends_per_flow = super::limits::sends_per_flow(request, spec);
    let mut side = start_side(spec, (role, sends_per_flow), slice_count, flows)?;
    let budget = ByteBudget::new(state.config.limits.max_bytes, spec.message_size, in_flight);
    let watchdog = side.guard(stream, cap + WATCHDOG_GRACE, budget)?;
    let mut sampling = None;
    let ended = released(stream).and_then(|()| {
        let (from, end) = side.go(spec);
        sampling = spec.profile.then(|| Sampling::new(role, (from, end)));
        let run = (&side.handles[..], &side.endpoints[..]);
        let deadlines = (end + STOP_GRACE, cap, cut_grace(spec));
        follow(
            stream,
            &side.control,
            run,
            deadlines,
            &mut sampling,
            &watchdog,
        )
    });
    let ended = ended.map_err(|refusal| match watchdog.fired() {
        true => refuse(ErrorCode::Limit, SESSION_CAPPED),
        false => refusal,
    });
    let (samples, fired) = side.end(ended.is_err());
    // Free before the samples go back: a client (a sweep's next point) that asks again as soon
    // as it has them must not be told busy. Released once: the session's end cannot free a
    // claim the next session took meanwhile.
    claim.release();
    let ended = ended?;
    let profile = sampling.map(|s| Message::Profile {
        profile: Box::new(s.finish()),
    });
    let slices = reverse.then(|| slices_message(&side.board, slice_count, spec));
    let tcp_info = request.tcp_info.then(|| side.tcp_info());
    let cut = ended.or(fired.then_some(WATCHDOG_FIRED));
    let samples = mark_cut(samples, cut);
    // The watchdog stays armed until the report is out: a client that stops reading or
    // trickles its last frame is ended at the cap all the same.
    report(stream, samples, [slices, profile, tcp_info], cut)
}

/// The slices this side's board holds: only the measured side publishes slices; the other
/// needs a board it never writes.
fn slice_count(spec: &RunSpec, reverse: bool) -> usize {
    if reverse {
        engine::phases::div_duration(spec.duration, spec.stopping.slice).max(1)
    } else {
        1
    }
}

/// How long a side the server cut may wind down before its flows are shut. A stream sender
/// stops at the schedule's stop; a side that only answers (an rr server) follows its client,
/// and one a client keeps flooding would answer on: its flows are shut at once.
fn cut_grace(spec: &RunSpec) -> Duration {
    match spec.pattern {
        Pattern::Stream => CUT_GRACE,
        _ => Duration::ZERO,
    }
}

/// The run's flows, tcp or udp, waited for within the `--timeout` and what is left of `cap`.
fn flows(
    stream: &mut ControlStream,
    spec: &RunSpec,
    reverse: bool,
    config: &ServerConfig,
    cap: Instant,
) -> Result<Vec<(Endpoint, usize)>, Refusal> {
    let wait = config
        .timeout
        .min(cap.saturating_duration_since(Instant::now()));
    match spec.framing() {
        Some(framing) => udp_flows(stream, spec.threads, framing, config, wait),
        None => tcp_flows(stream, spec, reverse, config, wait),
    }
}

/// The measured side's slices, as they travel back.
fn slices_message(board: &SliceBoard, slice_count: usize, spec: &RunSpec) -> Message {
    let (bytes, messages) = board.read(slice_count);
    Message::Slices {
        slice_ns: spec.stopping.slice.as_nanos() as u64,
        bytes,
        messages,
    }
}

/// `Ready` to the client, then its `Go`.
fn released(stream: &mut ControlStream) -> Result<(), Refusal> {
    send(stream, &Message::Ready)?;
    match expect(stream, "go")? {
        Message::Go => Ok(()),
        other => Err(out_of_order("go", &other)),
    }
}

/// What this side measured stays, marked when the server stopped the run itself (it is ending,
/// or the run passed --max-bytes or --max-duration): the record says why the run ended early.
fn mark_cut(mut samples: Vec<ThreadSample>, cut: Option<&'static str>) -> Vec<ThreadSample> {
    if let Some(why @ (SERVER_ENDING | BYTES_REACHED | TIME_REACHED)) = cut {
        samples
            .iter_mut()
            .filter(|s| s.error.is_none())
            .for_each(|s| s.error = Some(why.into()));
    }
    samples
}

/// The run's tcp flows: a data listener, `Accepted`, and one tagged connection per flow
/// within `wait`, each with the run's socket options; with what each one's send buffer holds.
fn tcp_flows(
    stream: &mut ControlStream,
    spec: &RunSpec,
    reverse: bool,
    config: &ServerConfig,
    wait: Duration,
) -> Result<Vec<(Endpoint, usize)>, Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let (data, port) = data_port(config)?;
    // Before the client can know the port, so before any flow's SYN: each accepted end
    // inherits the buffers and sizes its window from them.
    spec.socket_buffers
        .apply(data.as_fd())
        .map_err(|e| failed("setting the data port's socket buffers", e))?;
    let cookie = new_cookie()?;
    send(
        stream,
        &Message::Accepted {
            data_port: port,
            cookie: protocol::to_hex(&cookie),
            udp_ports: Vec::new(),
        },
    )?;
    let flows = accept_flows(stream, &data, &cookie, spec.threads, wait)?;
    let options = spec.socket_options();
    let role = remote_role(spec.pattern, reverse);
    flows
        .into_iter()
        .map(|s| {
            apply_options(&s, options, role).map_err(|e| failed("setting socket options", e))?;
            let buffer = max_send_buffer(&s);
            Ok((Endpoint::socket(s), buffer))
        })
        .collect()
}

/// The run's udp flows: one socket per flow on `--bind`, their ports in `Accepted`, each joined
/// by the client's hello (`udp`) within `wait`, then set up as `UdpLoopback` sets up its
/// sockets.
fn udp_flows(
    stream: &mut ControlStream,
    threads: usize,
    framing: Framing,
    config: &ServerConfig,
    wait: Duration,
) -> Result<Vec<(Endpoint, usize)>, Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let sockets = (0..threads)
        .map(|_| UdpSocket::bind((config.bind, 0)))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| failed("binding the udp data ports", e))?;
    let ports = sockets
        .iter()
        .map(|s| s.local_addr().map(|a| a.port()))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| failed("the udp data ports", e))?;
    let cookie = new_cookie()?;
    send(
        stream,
        &Message::Accepted {
            data_port: ports[0],
            cookie: protocol::to_hex(&cookie),
            udp_ports: ports,
        },
    )?;
    let sockets = crate::remote::udp::join_at_server(stream, sockets, &cookie, wait)?;
    sockets
        .into_iter()
        .map(|s| {
            s.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
            let buffer = send_buffer(s.as_fd())?;
            Ok((Endpoint::datagram(s, framing), buffer))
        })
        .collect::<std::io::Result<_>>()
        .map_err(|e| failed("setting up the udp flows", e))
}

/// A data port for a session's tcp flows, on `--bind`: its listener and port.
pub(super) fn data_port(config: &ServerConfig) -> Result<(TcpListener, u16), Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let data =
        TcpListener::bind((config.bind, 0)).map_err(|e| failed("binding the data port", e))?;
    let port = data.local_addr().map_err(|e| failed("the data port", e))?;
    Ok((data, port.port()))
}

pub(super) fn new_cookie() -> Result<[u8; COOKIE_BYTES], Refusal> {
    protocol::random_bytes()
        .map_err(|e| refuse(ErrorCode::Failed, format!("making the session cookie: {e}")))
}

/// Waits for the run to end: a `Stop` stops this side, a vanished client aborts it; the server
/// stops the run itself when it moved past `--max-bytes` (the `watchdog` saw it), at the
/// session's hard cap, or when a termination signal asks the server to end (its client hears
/// why in `Done`); and past the schedule's end and its grace the flows are shut down.
/// `deadlines`: (that end and grace, the hard cap, how long a side it cut may wind down before
/// its flows are shut). Returns why the server cut the run short, if it did.
fn follow(
    stream: &mut ControlStream,
    control: &Control,
    (handles, endpoints): (&[std::thread::JoinHandle<ThreadSample>], &[Arc<Endpoint>]),
    (deadline, cap, grace): (Instant, Instant, Duration),
    sampling: &mut Option<Sampling>,
    watchdog: &Watchdog,
) -> Result<Option<&'static str>, Refusal> {
    let mut cut = None;
    let mut cut_at: Option<Instant> = None;
    // Under a byte budget the session looks as often as the watchdog counts.
    let most = match watchdog.counts_bytes() {
        true => budget::POLL,
        false => RUN_POLL,
    };
    while handles.iter().any(|h| !h.is_finished()) {
        let now = Instant::now();
        let next = sampling.as_mut().and_then(|s| s.tick(now));
        let to_cap = cap
            .saturating_duration_since(now)
            .max(Duration::from_millis(1));
        let poll = next.map_or(most, |n| n.min(most)).min(to_cap);
        let _ = stream.set_read_timeout(Some(poll));
        match protocol::read_message(stream) {
            Ok(Message::Stop) => control.stop(),
            Ok(other) => return Err(out_of_order("stop", &other)),
            Err(FrameError::Idle) => {}
            Err(FrameError::Closed) => {
                return Err(refuse(
                    ErrorCode::Truncated,
                    "the client closed the control connection during the run; its side was stopped",
                ))
            }
            Err(e) => return Err(e.into()),
        }
        let own = match cut {
            None => own_cut(watchdog, cap),
            Some(_) => None,
        };
        if let Some(why) = own {
            control.stop();
            cut = Some(why);
            cut_at = Some(Instant::now());
        }
        if cut_at.is_some_and(|at| at.elapsed() >= grace) {
            endpoints.iter().for_each(|ep| ep.abort());
            cut_at = None;
        }
        if Instant::now() > deadline && cut != Some(WATCHDOG_FIRED) {
            endpoints.iter().for_each(|ep| ep.abort());
            cut = Some(WATCHDOG_FIRED);
        }
    }
    Ok(cut)
}

/// Why the server stops the run itself now, if it does: the flows moved past `--max-bytes`,
/// the session reached its hard cap, or the server is asked to end.
fn own_cut(watchdog: &Watchdog, cap: Instant) -> Option<&'static str> {
    if watchdog.spent() {
        Some(BYTES_REACHED)
    } else if Instant::now() >= cap {
        Some(TIME_REACHED)
    } else {
        super::stopping().then_some(SERVER_ENDING)
    }
}

/// Sends this side's samples, one frame each, its slices when it measured, its profile and
/// its TCP_INFO when they were asked for, then `Done`.
fn report(
    stream: &mut ControlStream,
    samples: Vec<ThreadSample>,
    extra: [Option<Message>; 3],
    cut: Option<&str>,
) -> Result<(String, u64), Refusal> {
    let count = samples.len();
    let errors = samples.iter().filter(|s| s.error.is_some()).count();
    let sent: u64 = samples.iter().map(|s| s.sent_bytes).sum();
    let received: u64 = samples.iter().map(|s| s.received_bytes).sum();
    for sample in samples {
        send(
            stream,
            &Message::Sample {
                sample: Box::new(sample),
            },
        )?;
    }
    for message in extra.into_iter().flatten() {
        send(stream, &message)?;
    }
    let error = cut.map(str::to_string);
    send(
        stream,
        &Message::Done {
            samples: count as u32,
            error,
        },
    )?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = protocol::read_message(stream);
    let done = format!(
        "done: {count} samples, {errors} with errors, {sent} bytes sent, {received} received"
    );
    Ok((done, sent + received))
}

/// Accepts data connections until every flow has one: each must come from the control
/// connection's peer address and present the cookie and a flow index not yet taken, all within
/// one deadline; anything else is dropped as a stray (the first logged, the rest counted).
pub(in crate::remote) fn accept_flows(
    control: &TcpStream,
    listener: &TcpListener,
    cookie: &[u8],
    threads: usize,
    timeout: Duration,
) -> Result<Vec<TcpStream>, Refusal> {
    let failed = |e: std::io::Error| refuse(ErrorCode::Failed, format!("data port: {e}"));
    let peer = control.peer_addr().map_err(failed)?.ip().to_canonical();
    listener.set_nonblocking(true).map_err(failed)?;
    let mut strays = 0u64;
    let deadline = Instant::now() + timeout;
    let mut flows: Vec<Option<TcpStream>> = (0..threads).map(|_| None).collect();
    let mut joined = 0;
    while joined < threads {
        if Instant::now() > deadline {
            return Err(refuse(
                ErrorCode::Timeout,
                format!(
                    "{joined} of {threads} data connections arrived within {} ms",
                    timeout.as_millis()
                ),
            ));
        }
        let (s, from) = match listener.accept() {
            Ok(pair) => pair,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            Err(e) => return Err(failed(e)),
        };
        let left = deadline.saturating_duration_since(Instant::now());
        let tag = match from.ip().to_canonical() == peer {
            true => read_tag(&s, cookie, threads, left.max(Duration::from_millis(1))),
            false => None,
        };
        match tag {
            Some(flow) if flows[flow].is_none() => {
                flows[flow] = Some(s);
                joined += 1;
            }
            _ => {
                strays += 1;
                if strays == 1 {
                    eprintln!("bytepath server: dropped a stray data connection from {from}");
                }
            }
        }
    }
    if strays > 1 {
        eprintln!("bytepath server: dropped {strays} stray data connections in all");
    }
    Ok(flows.into_iter().flatten().collect())
}

/// The flow index a data connection claims, if it presents the session's cookie.
fn read_tag(s: &TcpStream, cookie: &[u8], threads: usize, timeout: Duration) -> Option<usize> {
    s.set_nonblocking(false).ok()?;
    s.set_read_timeout(Some(timeout)).ok()?;
    let mut tag = [0u8; DATA_TAG_BYTES];
    (&*s).read_exact(&mut tag).ok()?;
    s.set_read_timeout(None).ok()?;
    crate::remote::tag_flow(&tag, cookie, threads)
}
