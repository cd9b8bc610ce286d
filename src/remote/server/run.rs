//! A run's side served from here: its data connections accepted (tcp: tagged connections on
//! a data port; udp: one joined socket per flow), its workers started and held at the barrier
//! until the client's `Go`, followed until it ends or is stopped, and its samples (and, when
//! it measured, its slices) sent back.
use super::budget::{ByteBudget, BYTES_REACHED};
use super::{expect, out_of_order, refuse, send, Refusal, RunClaim, ServerConfig, State, RUN_POLL};
use crate::config::RunSpec;
use crate::engine::control::Control;
use crate::engine::profiling::{ProfileWindow, StoppedWindow};
use crate::engine::slices::SliceBoard;
use crate::engine::worker::{Role, ThreadSample};
use crate::engine::{self, Shared, STOP_GRACE};
use crate::measure::profile::Profile;
use crate::remote::channel::ControlStream;
use crate::remote::protocol::{self, ErrorCode, FrameError, Message, COOKIE_BYTES, DATA_TAG_BYTES};
use crate::remote::{apply_options, remote_role};
use crate::transport::datagram::{send_buffer, Framing, RECEIVE_TIMEOUT};
use crate::transport::tcp::max_send_buffer;
use crate::transport::Endpoint;
use std::io::Read;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsFd;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// How often a session with a byte budget reads what its run moved.
const BUDGET_POLL: Duration = Duration::from_millis(20);

/// How long a side the server stopped itself may take to wind down before its flows are shut.
const CUT_GRACE: Duration = Duration::from_millis(500);

/// Why the server cut a run short, told to its client in `Done`.
const WATCHDOG_FIRED: &str = "the server's side did not finish in time; its flows were shut down";
const SERVER_ENDING: &str =
    "the server was asked to end (SIGTERM or SIGINT) and stopped this run early";

/// Accepts the run's data connections, runs this side, and sends its samples back.
/// With `reverse` this side is the measured one: its slices are kept and sent back too.
pub(super) fn run_side(
    stream: &mut ControlStream,
    spec: &RunSpec,
    reverse: bool,
    state: &State,
    claim: &mut RunClaim<'_>,
) -> Result<(String, u64), Refusal> {
    let flows = match spec.framing() {
        Some(framing) => udp_flows(stream, spec.threads, framing, &state.config)?,
        None => tcp_flows(stream, spec, reverse, &state.config)?,
    };
    // What the flows' buffers hold in flight: this side's send buffers and as much again at
    // the peer (the margin of the byte budget).
    let in_flight: u64 = flows.iter().map(|(_, buffer)| 2 * *buffer as u64).sum();
    // Only the measured side publishes slices; the other needs a board it never writes.
    let slice_count = if reverse {
        engine::phases::div_duration(spec.duration, spec.stopping.slice).max(1)
    } else {
        1
    };
    let role = remote_role(spec.pattern, reverse);
    let side = start_side(spec, role, slice_count, flows)?;
    let mut sampling = None;
    let ended = released(stream).and_then(|()| {
        let (from, end) = side
            .control
            .schedule(Instant::now(), spec.warmup, spec.duration);
        sampling = spec.profile.then(|| Sampling::new(role, (from, end)));
        let max_bytes = state.config.limits.max_bytes;
        let budget = ByteBudget::new(max_bytes, spec.message_size, in_flight, from);
        let run = (&side.handles[..], &side.endpoints[..]);
        let deadline = end + STOP_GRACE;
        follow(stream, &side.control, run, deadline, &mut sampling, budget)
    });
    if ended.is_err() {
        side.control.stop();
        side.endpoints.iter().for_each(|ep| ep.abort());
    }
    let deadline = Instant::now() + STOP_GRACE;
    let (samples, fired) = engine::collect(side.handles, &side.endpoints, deadline);
    // Free before the samples go back: a client (a sweep's next point) that asks again as soon
    // as it has them must not be told busy. Released once: the session's end cannot free a
    // claim the next session took meanwhile.
    claim.release();
    let ended = ended?;
    let profile = sampling.map(|s| Message::Profile {
        profile: Box::new(s.finish()),
    });
    let slices = reverse.then(|| slices_message(&side.board, slice_count, spec));
    let cut = ended.or(fired.then_some(WATCHDOG_FIRED));
    let samples = mark_cut(samples, cut);
    report(stream, samples, [slices, profile], cut)
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

/// This side's workers, started and past the barrier (in warm-up until `Go` fixes the
/// schedule), with what the session follows them by.
struct Side {
    control: Arc<Control>,
    board: Arc<SliceBoard>,
    handles: Vec<std::thread::JoinHandle<ThreadSample>>,
    endpoints: Vec<Arc<Endpoint>>,
}

/// Starts one worker per flow in `role` and waits until each is pinned with its counters open.
fn start_side(
    spec: &RunSpec,
    role: Role,
    slice_count: usize,
    flows: Vec<(Endpoint, usize)>,
) -> Result<Side, Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let control = Arc::new(Control::new().map_err(|e| failed("mapping the schedule", e))?);
    let start = Arc::new(Barrier::new(spec.threads + 1));
    let board = Arc::new(SliceBoard::new(slice_count));
    let shared = Shared {
        control: control.clone(),
        start: start.clone(),
        board: board.clone(),
    };
    let workers = flows
        .into_iter()
        .enumerate()
        .map(|(flow, (endpoint, buffer))| {
            engine::side_worker(spec, flow, role, endpoint, buffer, &shared)
        })
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| failed("setting up the mechanism", e))?;
    let (handles, endpoints) = engine::spawn(workers).map_err(|e| failed("starting workers", e))?;
    start.wait();
    Ok(Side {
        control,
        board,
        handles,
        endpoints,
    })
}

/// What this side measured stays, marked when the server stopped the run itself (it is ending,
/// or the run passed --max-bytes): the record says why the run ended early.
fn mark_cut(mut samples: Vec<ThreadSample>, cut: Option<&'static str>) -> Vec<ThreadSample> {
    if let Some(why @ (SERVER_ENDING | BYTES_REACHED)) = cut {
        samples
            .iter_mut()
            .filter(|s| s.error.is_none())
            .for_each(|s| s.error = Some(why.into()));
    }
    samples
}

/// `profile`: this side's sampling, opened when the measured phase begins and stopped when it
/// ends (the session wakes for both).
struct Sampling {
    role: Role,
    from: Instant,
    until: Instant,
    open: Option<ProfileWindow>,
    stopped: Option<StoppedWindow>,
}

impl Sampling {
    fn new(role: Role, (from, until): (Instant, Instant)) -> Sampling {
        Sampling {
            role,
            from,
            until,
            open: None,
            stopped: None,
        }
    }

    /// Opens or stops the sampling as the schedule says; returns how long until it next must.
    fn tick(&mut self, now: Instant) -> Option<Duration> {
        if self.open.is_none() && self.stopped.is_none() && now >= self.from && now < self.until {
            let duration = self.until.saturating_duration_since(self.from);
            self.open = Some(ProfileWindow::open(&[self.role], duration));
        }
        if now >= self.until {
            if let Some(window) = self.open.take() {
                self.stopped = Some(window.stop());
            }
            return None;
        }
        let next = if self.open.is_none() {
            self.from
        } else {
            self.until
        };
        Some(
            next.saturating_duration_since(now)
                .max(Duration::from_millis(1)),
        )
    }

    fn finish(mut self) -> Profile {
        if let Some(window) = self.open.take() {
            self.stopped = Some(window.stop());
        }
        let built = self.stopped.map(StoppedWindow::build).unwrap_or_default();
        built.into_iter().next().map_or_else(
            || Profile::Unavailable {
                reason: "the run ended before its measured phase began".into(),
            },
            |(_, p)| p,
        )
    }
}

/// The run's tcp flows: a data listener, `Accepted`, and one tagged connection per flow, each
/// with the run's socket options; with what each one's send buffer holds.
fn tcp_flows(
    stream: &mut ControlStream,
    spec: &RunSpec,
    reverse: bool,
    config: &ServerConfig,
) -> Result<Vec<(Endpoint, usize)>, Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let (data, port) = data_port(config)?;
    let cookie = new_cookie()?;
    send(
        stream,
        &Message::Accepted {
            data_port: port,
            cookie: protocol::to_hex(&cookie),
            udp_ports: Vec::new(),
        },
    )?;
    let flows = accept_flows(stream, &data, &cookie, spec.threads, config.timeout)?;
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
/// by the client's hello (`udp`), then set up as `UdpLoopback` sets up its sockets.
fn udp_flows(
    stream: &mut ControlStream,
    threads: usize,
    framing: Framing,
    config: &ServerConfig,
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
    let sockets = crate::remote::udp::join_at_server(stream, sockets, &cookie, config.timeout)?;
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

/// Waits for the run to end: a `Stop` stops this side, a vanished client aborts it, and past
/// `deadline` the watchdog shuts the flows down, and a termination signal to the server stops
/// the run (its client hears why in `Done`). Returns why the server cut the run short, if it
/// did.
fn follow(
    stream: &mut ControlStream,
    control: &Control,
    (handles, endpoints): (&[std::thread::JoinHandle<ThreadSample>], &[Arc<Endpoint>]),
    deadline: Instant,
    sampling: &mut Option<Sampling>,
    mut budget: Option<ByteBudget>,
) -> Result<Option<&'static str>, Refusal> {
    let mut cut = None;
    let mut cut_at: Option<Instant> = None;
    // With a byte budget the session looks more often: what a run moves past its limit
    // before it is stopped is at most what its flows carry in one such poll.
    let most = if budget.is_some() {
        BUDGET_POLL
    } else {
        RUN_POLL
    };
    while handles.iter().any(|h| !h.is_finished()) {
        let next = sampling.as_mut().and_then(|s| s.tick(Instant::now()));
        let poll = next.map_or(most, |n| n.min(most));
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
        let spent = budget
            .as_mut()
            .is_some_and(|b| b.exceeded(endpoints, Instant::now()));
        if spent && cut.is_none() {
            control.stop();
            cut = Some(BYTES_REACHED);
            cut_at = Some(Instant::now());
        }
        if super::stopping() && cut.is_none() {
            control.stop();
            cut = Some(SERVER_ENDING);
            cut_at = Some(Instant::now());
        }
        // A side that only answers (an rr server) follows its client, not the schedule: one
        // a client keeps flooding would answer on until the watchdog; its flows are shut.
        if cut_at.is_some_and(|at| at.elapsed() > CUT_GRACE) {
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

/// Sends this side's samples, one frame each, its slices when it measured and its profile
/// when one was asked for, then `Done`.
fn report(
    stream: &mut ControlStream,
    samples: Vec<ThreadSample>,
    extra: [Option<Message>; 2],
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
