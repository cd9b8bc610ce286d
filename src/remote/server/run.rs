//! A run's side served from here: its data connections accepted (tcp: tagged connections on
//! a data port; udp: one joined socket per flow), its workers started and held at the barrier
//! until the client's `Go`, followed until it ends or is stopped, and its samples (and, when
//! it measured, its slices) sent back.
use super::{expect, out_of_order, refuse, send, Refusal, ServerConfig, State, RUN_POLL};
use crate::config::RunSpec;
use crate::engine::control::Control;
use crate::engine::profiling::{ProfileWindow, StoppedWindow};
use crate::engine::slices::SliceBoard;
use crate::engine::worker::{Role, ThreadSample};
use crate::engine::{self, Shared, STOP_GRACE};
use crate::measure::profile::Profile;
use crate::remote::protocol::{self, ErrorCode, FrameError, Message, COOKIE_BYTES, DATA_TAG_BYTES};
use crate::remote::{apply_options, remote_role};
use crate::transport::datagram::{send_buffer, Framing, RECEIVE_TIMEOUT};
use crate::transport::tcp::max_send_buffer;
use crate::transport::Endpoint;
use std::io::Read;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Accepts the run's data connections, runs this side, and sends its samples back.
/// With `reverse` this side is the measured one: its slices are kept and sent back too.
pub(super) fn run_side(
    stream: &mut TcpStream,
    spec: &RunSpec,
    reverse: bool,
    state: &State,
) -> Result<String, Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let flows = match spec.framing() {
        Some(framing) => udp_flows(stream, spec.threads, framing, &state.config)?,
        None => tcp_flows(stream, spec, reverse, &state.config)?,
    };
    let control = Arc::new(Control::new().map_err(|e| failed("mapping the schedule", e))?);
    let start = Arc::new(Barrier::new(spec.threads + 1));
    // Only the measured side publishes slices; the other needs a board it never writes.
    let slice_count = if reverse {
        engine::phases::div_duration(spec.duration, spec.stopping.slice).max(1)
    } else {
        1
    };
    let board = Arc::new(SliceBoard::new(slice_count));
    let shared = Shared {
        control: control.clone(),
        start: start.clone(),
        board: board.clone(),
    };
    let role = remote_role(spec.pattern, reverse);
    let workers = flows
        .into_iter()
        .enumerate()
        .map(|(flow, (endpoint, buffer))| {
            engine::side_worker(spec, flow, role, endpoint, buffer, &shared)
        })
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| failed("setting up the mechanism", e))?;
    let (handles, endpoints) = engine::spawn(workers).map_err(|e| failed("starting workers", e))?;
    // Workers reach the barrier once pinned with their counters open; before `Go` fixes the
    // schedule they are in warm-up.
    start.wait();
    let released = send(stream, &Message::Ready).and_then(|()| match expect(stream, "go")? {
        Message::Go => Ok(()),
        other => Err(out_of_order("go", &other)),
    });
    let mut sampling = None;
    let ended = match released {
        Ok(()) => {
            let (from, end) = control.schedule(Instant::now(), spec.warmup, spec.duration);
            if spec.profile {
                sampling = Some(Sampling::new(role, (from, end)));
            }
            let run = (&handles[..], &endpoints[..]);
            follow(stream, &control, run, end + STOP_GRACE, &mut sampling)
        }
        Err(refusal) => Err(refusal),
    };
    if ended.is_err() {
        control.stop();
        endpoints.iter().for_each(|ep| ep.abort());
    }
    let (samples, fired) = engine::collect(handles, &endpoints, Instant::now() + STOP_GRACE);
    // Free before the samples go back: a client (a sweep's next point) that asks again as soon
    // as it has them must not be told busy.
    state.busy.store(false, Ordering::Release);
    let ended = ended?;
    let profile = sampling.map(|s| Message::Profile {
        profile: Box::new(s.finish()),
    });
    let slices = reverse.then(|| {
        let (bytes, messages) = board.read(slice_count);
        Message::Slices {
            slice_ns: spec.stopping.slice.as_nanos() as u64,
            bytes,
            messages,
        }
    });
    report(stream, samples, [slices, profile], fired || ended)
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
    stream: &mut TcpStream,
    spec: &RunSpec,
    reverse: bool,
    config: &ServerConfig,
) -> Result<Vec<(Endpoint, usize)>, Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let data =
        TcpListener::bind((config.bind, 0)).map_err(|e| failed("binding the data port", e))?;
    let port = data
        .local_addr()
        .map_err(|e| failed("the data port", e))?
        .port();
    let cookie = new_cookie()?;
    send(
        stream,
        &Message::Accepted {
            data_port: port,
            cookie: protocol::to_hex(&cookie),
            udp_ports: Vec::new(),
        },
    )?;
    let flows = accept_flows(&data, &cookie, spec.threads, config.timeout)?;
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
    stream: &mut TcpStream,
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

fn new_cookie() -> Result<[u8; COOKIE_BYTES], Refusal> {
    protocol::random_bytes()
        .map_err(|e| refuse(ErrorCode::Failed, format!("making the session cookie: {e}")))
}

/// Waits for the run to end: a `Stop` stops this side, a vanished client aborts it, and past
/// `deadline` the watchdog shuts the flows down. Returns whether the watchdog fired.
fn follow(
    stream: &mut TcpStream,
    control: &Control,
    (handles, endpoints): (&[std::thread::JoinHandle<ThreadSample>], &[Arc<Endpoint>]),
    deadline: Instant,
    sampling: &mut Option<Sampling>,
) -> Result<bool, Refusal> {
    let mut fired = false;
    while handles.iter().any(|h| !h.is_finished()) {
        let next = sampling.as_mut().and_then(|s| s.tick(Instant::now()));
        let poll = next.map_or(RUN_POLL, |n| n.min(RUN_POLL));
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
        if Instant::now() > deadline && !fired {
            endpoints.iter().for_each(|ep| ep.abort());
            fired = true;
        }
    }
    Ok(fired)
}

/// Sends this side's samples, one frame each, its slices when it measured and its profile
/// when one was asked for, then `Done`.
fn report(
    stream: &mut TcpStream,
    samples: Vec<ThreadSample>,
    extra: [Option<Message>; 2],
    fired: bool,
) -> Result<String, Refusal> {
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
    let error = fired
        .then(|| "the server's side did not finish in time; its flows were shut down".to_string());
    send(
        stream,
        &Message::Done {
            samples: count as u32,
            error,
        },
    )?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = protocol::read_message(stream);
    Ok(format!(
        "done: {count} samples, {errors} with errors, {sent} bytes sent, {received} received"
    ))
}

/// Accepts data connections until every flow has one: each must present the cookie and a flow
/// index not yet taken within the timeout; anything else is dropped as a stray.
pub(in crate::remote) fn accept_flows(
    listener: &TcpListener,
    cookie: &[u8],
    threads: usize,
    timeout: Duration,
) -> Result<Vec<TcpStream>, Refusal> {
    let failed = |e: std::io::Error| refuse(ErrorCode::Failed, format!("data port: {e}"));
    listener.set_nonblocking(true).map_err(failed)?;
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
        match read_tag(&s, cookie, threads, timeout) {
            Some(flow) if flows[flow].is_none() => {
                flows[flow] = Some(s);
                joined += 1;
            }
            _ => eprintln!("bytepath server: dropped a stray data connection from {from}"),
        }
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
