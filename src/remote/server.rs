//! `bytepath server`: serves one remote run at a time. Every control connection gets its own
//! thread and its own deadline; a client that sends garbage, too much, too little, or nothing
//! gets an error frame (when it can still take one) and a closed connection, and the server
//! goes on with the next. While a run is on, other clients are answered `busy`. A run's side
//! here follows the schedule the client's `Go` fixes, stops on `Stop`, on the client's
//! disappearance, or at the end of its schedule plus a grace, and sends its samples back.
use super::protocol::{
    self, ErrorCode, FrameError, Message, RunRequest, COOKIE_BYTES, DATA_TAG_BYTES, VERSION,
};
use super::{apply_options, capabilities, remote_role};
use crate::engine::control::Control;
use crate::engine::slices::SliceBoard;
use crate::engine::worker::ThreadSample;
use crate::engine::{self, Shared, STOP_GRACE};
use crate::error::ConfigError;
use crate::error::Error;
use crate::servers::{self, model::ServerModel, process::ServerSetup};
use crate::spec::{self, Pattern, Pinning, RunSpec, Stopping};
use crate::transport::datagram::{send_buffer, Framing, RECEIVE_TIMEOUT};
use crate::transport::tcp::max_send_buffer;
use crate::transport::{Endpoint, Transport};
use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Control connections open at once; more are answered `busy` (a flood of idle connections
/// cannot exhaust threads).
const MAX_OPEN: usize = 16;
/// While a run is on, how often the session looks at its workers and the control connection.
const RUN_POLL: Duration = Duration::from_millis(200);

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

/// A validated `bytepath server` command line.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub bind: IpAddr,
    pub port: u16,
    pub token: Option<Vec<u8>>,
    pub limits: Limits,
    /// How long the server waits for a client's next frame or data connection.
    pub timeout: Duration,
    /// Where a mesh driver may have this server send test traffic (`--allow-peers`).
    pub allow_peers: super::allow::AllowPeers,
}

/// A refusal: sent to the client as an error frame, logged, and the connection closed.
pub(super) struct Refusal {
    pub(super) code: ErrorCode,
    pub(super) message: String,
}

pub(super) fn refuse(code: ErrorCode, message: impl Into<String>) -> Refusal {
    Refusal {
        code,
        message: message.into(),
    }
}

impl From<FrameError> for Refusal {
    fn from(e: FrameError) -> Refusal {
        refuse(e.code(), e.to_string())
    }
}

pub(super) struct State {
    pub(super) config: ServerConfig,
    /// A run holds this while it is on.
    pub(super) busy: AtomicBool,
    open: AtomicUsize,
    sessions: AtomicU64,
    system: String,
}

/// Listens until the process is ended; prints the bound address as the first line of stdout.
pub fn serve(config: ServerConfig) -> Result<(), Error> {
    let listener = TcpListener::bind((config.bind, config.port)).map_err(|e| {
        Error::Failed(format!(
            "--bind {} --port {}: cannot listen: {e}",
            config.bind, config.port
        ))
    })?;
    let addr = listener.local_addr().map_err(Error::Setup)?;
    let auth = if config.token.is_some() {
        "token required"
    } else {
        "no token"
    };
    let peers = if config.allow_peers.is_empty() {
        String::new()
    } else {
        format!(", peers {}", config.allow_peers)
    };
    println!("bytepath server listening on {addr} (protocol version {VERSION}, {auth}{peers})");
    let _ = std::io::stdout().flush();
    let state = Arc::new(State {
        config,
        busy: AtomicBool::new(false),
        open: AtomicUsize::new(0),
        sessions: AtomicU64::new(0),
        system: system(),
    });
    for stream in listener.incoming() {
        let mut stream = match stream {
            Ok(s) => s,
            Err(e) => {
                eprintln!("bytepath server: accept failed: {e}");
                continue;
            }
        };
        let id = state.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        if state.open.fetch_add(1, Ordering::AcqRel) >= MAX_OPEN {
            state.open.fetch_sub(1, Ordering::AcqRel);
            let message = format!("{MAX_OPEN} control connections are open; try again later");
            let _ = protocol::write_message(&mut stream, &Message::Busy { message });
            eprintln!("session {id}: busy (too many open control connections)");
            continue;
        }
        let state = state.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("bytepath-session-{id}"))
            .spawn(move || {
                handle(id, stream, &state);
                state.open.fetch_sub(1, Ordering::AcqRel);
            });
        if let Err(e) = spawned {
            eprintln!("session {id}: could not start a thread: {e}");
        }
    }
    Ok(())
}

/// The server's bytepath version and kernel release, for the client's record.
fn system() -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    format!("bytepath {}, Linux {kernel}", env!("CARGO_PKG_VERSION"))
}

/// One control connection, start to end; logs one line.
fn handle(id: u64, mut stream: TcpStream, state: &State) {
    let peer = stream
        .peer_addr()
        .map_or("an unknown address".into(), |a| a.to_string());
    let outcome = session(&mut stream, state);
    let line = match outcome {
        Ok(summary) => summary,
        Err(refusal) => {
            let frame = Message::Error {
                code: refusal.code,
                message: refusal.message.clone(),
            };
            let _ = protocol::write_message(&mut stream, &frame);
            close_after_error(&stream);
            format!("refused ({:?}): {}", refusal.code, refusal.message)
        }
    };
    eprintln!("session {id} from {peer}: {line}");
}

/// Closes without a reset: whatever the client still sends is read and dropped for a moment,
/// so the error frame is not thrown away by an RST before the client reads it.
fn close_after_error(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let mut sink = [0u8; 4096];
    let mut reader = stream;
    for _ in 0..16 {
        match reader.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

pub(super) fn send(stream: &mut TcpStream, message: &Message) -> Result<(), Refusal> {
    protocol::write_message(stream, message).map_err(|e| {
        refuse(
            ErrorCode::Failed,
            format!("sending {}: {e}", message.kind()),
        )
    })
}

pub(super) fn expect(stream: &mut TcpStream, expecting: &str) -> Result<Message, Refusal> {
    match protocol::read_message(stream) {
        Ok(m) => Ok(m),
        Err(FrameError::Idle) => Err(refuse(
            ErrorCode::Timeout,
            format!("no {expecting} arrived within the server's timeout"),
        )),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn out_of_order(expecting: &str, got: &Message) -> Refusal {
    refuse(
        ErrorCode::OutOfOrder,
        format!(
            "expected a {expecting} message, got a {} message",
            got.kind()
        ),
    )
}

/// Hello, authentication, the run request, and the run itself.
fn session(stream: &mut TcpStream, state: &State) -> Result<String, Refusal> {
    let timeout = state.config.timeout;
    let setup = stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .and_then(|()| stream.set_nodelay(true));
    setup.map_err(|e| refuse(ErrorCode::Failed, e.to_string()))?;
    match expect(stream, "client_hello")? {
        Message::ClientHello { version, .. } if version != VERSION => {
            return Err(refuse(
                ErrorCode::Version,
                format!(
                    "protocol version mismatch: the client speaks version {version}, this server speaks version {VERSION}"
                ),
            ))
        }
        Message::ClientHello { .. } => {}
        other => return Err(out_of_order("client_hello", &other)),
    }
    let nonce = match &state.config.token {
        Some(_) => {
            Some(protocol::new_nonce().map_err(|e| refuse(ErrorCode::Failed, e.to_string()))?)
        }
        None => None,
    };
    send(
        stream,
        &Message::ServerHello {
            version: VERSION,
            capabilities: capabilities(),
            system: state.system.clone(),
            challenge: nonce.map(|n| protocol::to_hex(&n)),
        },
    )?;
    if let (Some(token), Some(nonce)) = (&state.config.token, nonce) {
        authenticate(stream, token, &nonce)?;
    }
    let request = match expect(stream, "run")? {
        Message::Run { request } => request,
        // A client checking, before its first point, that this server is there and takes it.
        Message::Bye => return Ok("checked: hello only, no run".into()),
        // file study
        Message::FileRun { request } => return super::file_server::serve(stream, &request, state),
        // mesh
        Message::PeerRun {
            peer,
            src,
            dst,
            request,
        } => return super::peer_server::serve(stream, &peer, (&src, &dst), &request, state),
        Message::ServersRun {
            model,
            size,
            server_threads,
            clients,
        } => {
            let setup = match servers_point(&model, size, server_threads, clients, &state.config)? {
                ServersPoint::Run(setup) => setup,
                ServersPoint::Skipped(reason) => {
                    send(
                        stream,
                        &Message::ServersSkipped {
                            reason: reason.clone(),
                        },
                    )?;
                    return Ok(format!("servers {model}: skipped: {reason}"));
                }
            };
            if !take_turn(stream, state) {
                return Ok("busy: another run is in progress".into());
            }
            let result = servers_side(stream, setup, clients as usize, state);
            state.busy.store(false, Ordering::Release);
            return result.map(|done| format!("servers {model} x{clients} clients: {done}"));
        }
        other => return Err(out_of_order("run", &other)),
    };
    let spec = spec_for(&request, &state.config.limits)?;
    if !take_turn(stream, state) {
        return Ok("busy: another run is in progress".into());
    }
    let result = run_side(stream, &spec, request.reverse, state);
    state.busy.store(false, Ordering::Release);
    let what = format!(
        "{} {}{} {} B x{} {} for {} ms",
        spec.transport.name(),
        spec.pattern.name(),
        if request.reverse { " reverse" } else { "" },
        spec.message_size,
        spec.threads,
        spec.mechanism.name(),
        spec.duration.as_millis()
    );
    result.map(|done| format!("{what}: {done}"))
}

/// Takes the server for one run, or answers `busy`: one test at a time.
pub(super) fn take_turn(stream: &mut TcpStream, state: &State) -> bool {
    let taken = state
        .busy
        .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if !taken {
        let message = "another run is in progress; this server runs one at a time".to_string();
        let _ = protocol::write_message(stream, &Message::Busy { message });
    }
    taken
}

/// What a `servers_run` request asks for, once checked.
enum ServersPoint {
    Run(ServerSetup<'static>),
    /// The model cannot run on this host; not the client's mistake, so a skipped point.
    Skipped(String),
}

/// Checks a `servers_run` request against the server's limits and the models' own bounds.
fn servers_point(
    model: &str,
    size: u64,
    threads: u64,
    clients: u64,
    config: &ServerConfig,
) -> Result<ServersPoint, Refusal> {
    let limits = &config.limits;
    let limit = |message: String| refuse(ErrorCode::Limit, message);
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
    let clients = clients as usize;
    // The forked server holds one descriptor per client, under this process's limit.
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
    if model == ServerModel::Uring {
        if let Err(reason) = crate::sys::uring::probe() {
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
    }))
}

/// One `bytepath servers` point: forks the model on a listener of its own (the same fork as a
/// point on one host), lets the client's clients at it, measures it over the client's window,
/// and keeps it serving until the client says its clients are gone.
fn servers_side(
    stream: &mut TcpStream,
    setup: ServerSetup<'static>,
    clients: usize,
    state: &State,
) -> Result<String, Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let listener = TcpListener::bind((state.config.bind, 0))
        .map_err(|e| failed("binding the servers listener", e))?;
    let backlog = clients.min(i32::MAX as usize) as i32;
    crate::sys::events::set_backlog(listener.as_fd(), backlog).map_err(|e| failed("listen", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| failed("the servers listener", e))?
        .port();
    let mut server =
        servers::process::spawn(setup, listener).map_err(|e| failed("forking the server", e))?;
    let result = follow_point(stream, &mut server, port, clients, state);
    // Stopped before the client hears `bye`, so its next point does not find this one busy.
    server.close();
    state.busy.store(false, Ordering::Release);
    if result.is_ok() {
        let _ = protocol::write_message(stream, &Message::Bye);
    }
    result
}

fn follow_point(
    stream: &mut TcpStream,
    server: &mut servers::process::ServerProcess,
    port: u16,
    clients: usize,
    state: &State,
) -> Result<String, Refusal> {
    send(stream, &Message::ServersAccepted { port })?;
    // Setting up the clients (up to 10 s and a millisecond per client on the client's side)
    // and a warm-up come before the window; the window is at most --max-duration.
    let config = &state.config;
    let patience = config.limits.max_duration
        + config.timeout
        + Duration::from_secs(10)
        + Duration::from_millis(clients as u64);
    wait_for(stream, server, "servers_window", patience)?;
    server
        .start_window()
        .map_err(|e| refuse(ErrorCode::Failed, format!("starting the window: {e}")))?;
    wait_for(stream, server, "servers_stop", patience)?;
    let report = server
        .end_window(Duration::from_secs(10))
        .map_err(|e| refuse(ErrorCode::Failed, e))?;
    let summary = format!(
        "{} accepted, {} server threads, {} errors",
        report.accepted,
        report.threads,
        report.errors.len()
    );
    send(
        stream,
        &Message::ServersReport {
            report: Box::new(report),
        },
    )?;
    // The server keeps serving until the client's clients are closed and it says `bye`.
    // Whatever ends that wait, the report is already with the client.
    let _ = wait_for(stream, server, "bye", patience);
    Ok(summary)
}

/// Waits for the client's next step; a server process that ended meanwhile, a client gone,
/// or `patience` run out ends the point.
fn wait_for(
    stream: &mut TcpStream,
    server: &mut servers::process::ServerProcess,
    expecting: &str,
    patience: Duration,
) -> Result<(), Refusal> {
    let until = Instant::now() + patience;
    let _ = stream.set_read_timeout(Some(RUN_POLL));
    loop {
        let got = protocol::read_message(stream);
        match got {
            Ok(Message::ServersWindow) if expecting == "servers_window" => return Ok(()),
            Ok(Message::ServersStop) if expecting == "servers_stop" => return Ok(()),
            Ok(Message::Bye) if expecting == "bye" => return Ok(()),
            Ok(other) => return Err(out_of_order(expecting, &other)),
            Err(FrameError::Idle) => {}
            Err(FrameError::Closed) => return Err(refuse(
                ErrorCode::Truncated,
                "the client closed the control connection during the point; its server was stopped",
            )),
            Err(e) => return Err(e.into()),
        }
        if let Some(reason) = server.ended() {
            return Err(refuse(ErrorCode::Failed, reason));
        }
        if Instant::now() > until {
            return Err(refuse(
                ErrorCode::Timeout,
                format!(
                    "no {expecting} within {} ms; the point's server was stopped",
                    patience.as_millis()
                ),
            ));
        }
    }
}

fn authenticate(stream: &mut TcpStream, token: &[u8], nonce: &[u8]) -> Result<(), Refusal> {
    let proof = match expect(stream, "auth")? {
        Message::Auth { proof } => proof,
        other => return Err(out_of_order("auth", &other)),
    };
    let valid =
        protocol::from_hex(&proof).is_some_and(|p| protocol::proof_is_valid(token, nonce, &p));
    if valid {
        Ok(())
    } else {
        Err(refuse(
            ErrorCode::Auth,
            "wrong token: the proof does not match this server's --token-file",
        ))
    }
}

/// The server's side of a run, from the request: every value checked against the server's
/// limits and the engine's own bounds.
pub(super) fn spec_for(request: &RunRequest, limits: &Limits) -> Result<RunSpec, Refusal> {
    let invalid = |e: ConfigError| refuse(ErrorCode::Refused, e.0);
    let limit = |message: String| refuse(ErrorCode::Limit, message);
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
    let mechanism: crate::mechanism::MechanismKind = request.mechanism.parse().map_err(invalid)?;
    spec::check_transport(transport, mechanism).map_err(invalid)?;
    let queue_depth = match request.queue_depth {
        Some(q) => spec::parse_queue_depth(Some(&q.to_string())).map_err(invalid)?,
        None => spec::DEFAULT_QUEUE_DEPTH,
    };
    let recv_path: crate::mechanism::recv_path::RecvPath = match &request.recv {
        Some(text) => text.parse().map_err(invalid)?,
        None => Default::default(),
    };
    spec::check_recv_path(recv_path, transport, request.verify).map_err(invalid)?;
    let pattern: Pattern = request.pattern.parse().map_err(invalid)?;
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
    let size = request.message_size;
    if size == 0 || size > limits.max_message_size as u64 {
        return Err(limit(format!(
            "message size {size} bytes: this server allows 1 to {} (--max-message-size)",
            limits.max_message_size
        )));
    }
    // The spec's framing is taken as checked from here on.
    spec::check_datagram_size(transport, size as usize, request.udp_split).map_err(invalid)?;
    if transport == Transport::Udp && request.recv_size.is_some() {
        return Err(refuse(
            ErrorCode::Refused,
            "recv size with udp: a datagram is received whole, one per call",
        ));
    }
    let threads = request.threads;
    if threads == 0 || threads > limits.max_threads as u64 {
        return Err(limit(format!(
            "{threads} threads: this server allows 1 to {} (--max-threads)",
            limits.max_threads
        )));
    }
    let duration = Duration::from_millis(request.duration_ms);
    let warmup = Duration::from_millis(request.warmup_ms);
    let max = limits.max_duration;
    if duration.is_zero() || duration > max || warmup > max {
        return Err(limit(format!(
            "duration {} ms with warm-up {} ms: this server allows up to {} ms each (--max-duration)",
            request.duration_ms,
            request.warmup_ms,
            max.as_millis()
        )));
    }
    if let Some(max_bytes) = limits.max_bytes {
        match request.total_bytes {
            Some(b) if b <= max_bytes => {}
            Some(b) => {
                return Err(limit(format!(
                    "{b} bytes: this server allows up to {max_bytes} bytes per run (--max-bytes)"
                )))
            }
            None => {
                return Err(limit(format!(
                    "a run bounded by time only: this server allows up to {max_bytes} bytes per run (--max-bytes); ask with --bytes or --messages"
                )))
            }
        }
    }
    let recv_size = match request.recv_size {
        Some(r) if r == 0 || r > spec::MAX_MESSAGE_SIZE as u64 => {
            return Err(refuse(
                ErrorCode::Refused,
                format!(
                    "recv size {r}: allowed 1 to {} bytes",
                    spec::MAX_MESSAGE_SIZE
                ),
            ))
        }
        r => r.map(|r| r as usize),
    };
    let spec = RunSpec {
        transport,
        pipe_size: None,
        mechanism,
        pattern,
        message_size: size as usize,
        threads: threads as usize,
        duration,
        stopping: Stopping::fixed(duration),
        warmup,
        // The client's --pin places its own side; this side runs where the scheduler puts it.
        pinning: Pinning::Unpinned,
        cpus: Vec::new(),
        recv_size,
        spin: request.spin,
        verify: request.verify,
        counters: spec::parse_counters(&request.counters, pattern).map_err(invalid)?,
        udp_split: request.udp_split,
        processes: false,
        // Across hosts the network is whatever joins them; loopback is the record's default.
        network: spec::Network::default(),
        queue_depth,
        recv_path,
    };
    if let Some(available) = crate::environment::mem_available() {
        spec.check_memory(available)
            .map_err(|e| refuse(ErrorCode::Limit, e.0))?;
    }
    Ok(spec)
}

/// Accepts the run's data connections, runs this side, and sends its samples back.
/// With `reverse` this side is the measured one: its slices are kept and sent back too.
fn run_side(
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
    let ended = match released {
        Ok(()) => {
            let end = control
                .schedule(Instant::now(), spec.warmup, spec.duration)
                .1;
            follow(stream, &control, &handles, &endpoints, end + STOP_GRACE)
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
    let slices = reverse.then(|| {
        let (bytes, messages) = board.read(slice_count);
        Message::Slices {
            slice_ns: spec.stopping.slice.as_nanos() as u64,
            bytes,
            messages,
        }
    });
    report(stream, samples, slices, fired || ended)
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
    let sockets = super::udp::join_at_server(stream, sockets, &cookie, config.timeout)?;
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
    handles: &[std::thread::JoinHandle<ThreadSample>],
    endpoints: &[Arc<Endpoint>],
    deadline: Instant,
) -> Result<bool, Refusal> {
    let _ = stream.set_read_timeout(Some(RUN_POLL));
    let mut fired = false;
    while handles.iter().any(|h| !h.is_finished()) {
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

/// Sends this side's samples, one frame each, its slices when it measured, then `Done`.
fn report(
    stream: &mut TcpStream,
    samples: Vec<ThreadSample>,
    slices: Option<Message>,
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
    if let Some(slices) = slices {
        send(stream, &slices)?;
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
pub(super) fn accept_flows(
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
    super::tag_flow(&tag, cookie, threads)
}
