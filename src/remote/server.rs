//! `bytepath server`: serves one remote run at a time. Every control connection gets its own
//! thread and its own deadline; a client that sends garbage, too much, too little, or nothing
//! gets an error frame (when it can still take one) and a closed connection, and the server
//! goes on with the next. While a run is on, other clients are answered `busy`. A run's side
//! here follows the schedule the client's `Go` fixes, stops on `Stop`, on the client's
//! disappearance, or at the end of its schedule plus a grace, and sends its samples back.
//! Here: the sessions (listening, hello, authentication, which request goes where); what a
//! client may ask for is `limits`'s, a run's side `run`'s, a servers point's `servers`'s.
use super::capabilities;
use super::protocol::{self, ErrorCode, FrameError, Message, RunRequest, VERSION};
use super::session::{expect, out_of_order, refuse, send, Refusal};
use crate::error::Error;
use crate::remote::channel::ControlStream;
use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod admission;
mod audit;
mod budget;
mod canary;
mod claim;
mod file_run;
mod health;
mod limits;
mod memory;
mod peer_run;
mod pool;
mod quiet;
mod run;
mod sampling;
mod servers;
mod shutdown;
mod side;
mod watchdog;
pub(super) use audit::Served;
pub(super) use claim::RunClaim;
pub(super) use limits::spec_for;
pub use limits::Limits;
pub(super) use run::accept_flows;
pub(super) use shutdown::stopping;

/// While a run is on, how often the session looks at its workers and the control connection.
const RUN_POLL: Duration = Duration::from_millis(200);

/// A validated `bytepath server` command line.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub bind: IpAddr,
    pub port: u16,
    pub token: Option<Vec<u8>>,
    /// `--identity` with `--authorized-drivers`: this server's key pair and the driver keys
    /// it takes (the handshake is then Noise IK; `identity`).
    pub identity: Option<super::identity::ServerIdentity>,
    /// `--insecure`: no token, a plaintext control channel (loopback only, no peers).
    pub insecure: bool,
    /// `--log-format json`: the line per session is a JSON object (`audit`).
    pub audit_json: bool,
    pub limits: Limits,
    /// How long the server waits for a client's next frame or data connection.
    pub timeout: Duration,
    /// Where a mesh driver may have this server send test traffic (`--allow-peers`).
    pub allow_peers: super::allow::AllowPeers,
    /// The control ports a peer run may connect to there (`--peer-ports`).
    pub peer_ports: super::allow::PeerPorts,
    /// Where `GET /healthz` is answered (`--health-port`), apart from the control port.
    pub health_port: Option<u16>,
}

pub(super) struct State {
    pub(super) config: ServerConfig,
    /// A run holds this while it is on, through a `RunClaim`.
    pub(super) busy: AtomicBool,
    /// Authenticated sessions open, each counted by its `OpenSlot` (taken by `admission` once
    /// the token is proved; connections before that are bounded by its pool).
    open: Arc<AtomicUsize>,
    sessions: AtomicU64,
    system: String,
    admission: Arc<admission::Admission>,
    /// The log lines a flood could multiply, throttled.
    quiet: quiet::Quiet,
}

/// Listens until SIGTERM or SIGINT (then stops the run in progress, tells its client, and
/// returns once the sessions have ended or a grace has passed); prints the bound address as
/// the first line of stdout.
pub fn serve(config: ServerConfig) -> Result<(), Error> {
    let listener = TcpListener::bind((config.bind, config.port)).map_err(|e| {
        Error::Failed(format!(
            "--bind {} --port {}: cannot listen: {e}",
            config.bind, config.port
        ))
    })?;
    let addr = listener.local_addr().map_err(Error::Setup)?;
    let listening = listening_line(&config, addr);
    if config.insecure {
        eprintln!("bytepath server: WARNING: --insecure: no token; anyone who reaches {addr} may run tests, and the control channel is neither authenticated nor encrypted");
    }
    // Before any session thread: their allocations then share one arena (sys::malloc).
    crate::sys::malloc::one_arena();
    shutdown::prepare(&listener)?;
    eprintln!("bytepath server: {}", memory::describe());
    for stale in file_run::remove_stale_folders(&std::env::temp_dir()) {
        eprintln!(
            "bytepath server: removed {}, left by a server that did not end",
            stale.display()
        );
    }
    let quiet = quiet::Quiet::new(config.audit_json);
    let open = Arc::new(AtomicUsize::new(0));
    let admission = admission::Admission::new(open.clone(), config.timeout);
    let state = Arc::new(State {
        quiet,
        config,
        busy: AtomicBool::new(false),
        open,
        sessions: AtomicU64::new(0),
        system: system(),
        admission: Arc::new(admission),
    });
    health::start(&state)?;
    // Last: whoever waits for this line may connect at once, to either port.
    println!("{listening}");
    let _ = std::io::stdout().flush();
    while let Some(accepted) = shutdown::next_connection(&listener, &|| state.quiet.flush()) {
        match accepted {
            Ok(stream) => admit(stream, &state),
            Err(e) => eprintln!("bytepath server: accept failed: {e}"),
        }
    }
    drop(listener);
    shutdown::drain(&state.open, state.config.timeout);
    Ok(())
}

/// A new control connection: its place among the connections not yet authenticated (which may
/// evict the oldest of them), then a session thread of its own; or `busy` when its source is
/// barred, and a throttled line in the log.
fn admit(mut stream: TcpStream, state: &Arc<State>) {
    let id = state.sessions.fetch_add(1, Ordering::Relaxed) + 1;
    let admitted = stream
        .peer_addr()
        .map_err(|e| e.to_string())
        .and_then(|peer| state.admission.admit(peer.ip(), &stream));
    let admitted = match admitted {
        Ok(admitted) => admitted,
        Err(message) => {
            turned_away(state, id, &message);
            let _ = protocol::write_message(&mut stream, &Message::Busy { message });
            return;
        }
    };
    let state = state.clone();
    // The admission moves into the thread: let go of when the session ends, panics included,
    // or with the closure when the thread cannot be spawned.
    let spawned = std::thread::Builder::new()
        .name(format!("bytepath-session-{id}"))
        .spawn(move || handle(id, stream, &state, admitted));
    if let Err(e) = spawned {
        eprintln!("session {id}: could not start a thread: {e}");
    }
}

/// Logs a connection turned away before a session (throttled: `quiet`).
fn turned_away(state: &State, id: u64, why: &str) {
    let line = || format!("session {id}: turned away: {}", super::escaped(why));
    state.quiet.log("connections turned away", line);
}

/// The first line of stdout: where the server listens, its protocol, token and peers.
fn listening_line(config: &ServerConfig, addr: std::net::SocketAddr) -> String {
    let identity = config.identity.as_ref().map(|i| {
        let key = super::identity::fingerprint(&i.keys.public);
        let drivers = i.authorized_drivers.len();
        format!("identity {key}, {drivers} authorized driver keys, ")
    });
    let auth = match (&identity, config.token.is_some()) {
        (Some(identity), true) => format!("{identity}token required, encrypted"),
        (Some(identity), false) => format!("{identity}encrypted"),
        (None, true) => "token required, encrypted".into(),
        (None, false) => "INSECURE: no token, not encrypted".into(),
    };
    let peers = if config.allow_peers.is_empty() {
        String::new()
    } else {
        format!(", peers {}", config.allow_peers)
    };
    format!("bytepath server listening on {addr} (protocol version {VERSION}, {auth}{peers})")
}

/// The server's bytepath version and kernel release, for the client's record.
fn system() -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    format!("bytepath {}, Linux {kernel}", env!("CARGO_PKG_VERSION"))
}

/// One control connection, start to end; logs one line.
fn handle(id: u64, stream: TcpStream, state: &State, mut admitted: admission::Admitted) {
    let mut stream = ControlStream::plain(stream);
    let peer = stream
        .peer_addr()
        .map_or("an unknown address".into(), |a| a.to_string());
    if state.config.insecure {
        eprintln!("session {id} from {peer}: WARNING: --insecure: this session is neither authenticated nor encrypted");
    }
    let mut asked = None;
    let outcome = session(&mut stream, state, &mut admitted, &mut asked);
    // Authenticated once a request decrypted (`asked`), not when the handshake completed.
    let identity = match (stream.is_secure() && asked.is_some(), state.config.insecure) {
        (true, _) => Some(audit::identity(
            stream.peer_key(),
            state.config.identity.as_ref(),
            state.config.token.is_some(),
        )),
        (false, true) => Some("none (--insecure)".to_string()),
        (false, false) => None,
    };
    let (code, served) = match outcome {
        Ok(served) => (None, served),
        Err(refusal) => {
            let frame = Message::Error {
                code: refusal.code,
                message: refusal.message.clone(),
            };
            let _ = protocol::write_message(&mut stream, &frame);
            close_after_error(&stream);
            let logged = refusal.logged.unwrap_or(refusal.message);
            (Some(refusal.code), Served::from(logged))
        }
    };
    let line = audit::SessionLine {
        id,
        peer: &peer,
        identity: identity.as_deref(),
        asked: asked.as_deref(),
        ran: served.ran.as_deref(),
        bytes: served.bytes,
        code,
        detail: &served.detail,
    };
    let rendered = || line.render(state.config.audit_json);
    match (&identity, code) {
        // A flood of anonymous clients must not flood the log: these are throttled.
        (None, Some(code)) => {
            let kind = format!("sessions refused before authentication ({code:?})");
            state.quiet.log(&kind, rendered);
        }
        _ => eprintln!("{}", rendered()),
    }
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

/// Hello, authentication, the request (described into `asked`), and what it asks for.
fn session(
    stream: &mut ControlStream,
    state: &State,
    admitted: &mut admission::Admitted,
    asked: &mut Option<String>,
) -> Result<Served, Refusal> {
    let deadline = Instant::now() + admission::HANDSHAKE_DEADLINE;
    let bounded = stream.set_deadline(Some(deadline), state.config.timeout);
    bounded.map_err(|e| refuse(ErrorCode::Failed, e.to_string()))?;
    hello(stream, state)?;
    // Until its first request decrypts the session keeps its pre-authentication slot, and
    // every read, encrypted ones included, stays within the deadline in all.
    let request = expect(stream, "run")?;
    *asked = Some(audit::asked(&request));
    if let Err(message) = admitted.authenticated() {
        let detail = format!("busy: {message}");
        let _ = protocol::write_message(stream, &Message::Busy { message });
        return Ok(detail.into());
    }
    // From here on only each frame is bounded: begun, it must be whole within --timeout.
    let unbounded = stream.set_deadline(None, state.config.timeout);
    unbounded.map_err(|e| refuse(ErrorCode::Failed, e.to_string()))?;
    match request {
        Message::Run { request } => run(stream, &request, state),
        // A client checking, before its first point, that this server is there and takes it.
        Message::Bye => Ok("checked: hello only, no run".into()),
        // file study
        Message::FileRun { request } => file_run::serve(stream, &request, state),
        // mesh
        Message::PeerRun {
            peer,
            src,
            dst,
            request,
        } => peer_run::serve(stream, &peer, (&src, &dst), &request, state),
        Message::Canary => canary::serve(stream, state),
        Message::ServersRun {
            model,
            size,
            server_threads,
            clients,
            connections,
        } => {
            let point = (model.as_str(), size, server_threads, clients);
            servers::serve(stream, point, connections, state)
        }
        other => Err(out_of_order("run", &other)),
    }
}

/// The client's hello, this server's, then (with a token or an identity) the handshake:
/// every frame after it is encrypted and authenticated; then this server's system. Both hellos
/// are the handshake's prologue, so neither can be altered on the way unnoticed, and the
/// server's holds fresh random bytes, so a handshake message recorded on another connection
/// fails here as a wrong token.
fn hello(stream: &mut ControlStream, state: &State) -> Result<(), Refusal> {
    let timeout = state.config.timeout;
    let setup = stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .and_then(|()| stream.set_nodelay(true));
    setup.map_err(|e| refuse(ErrorCode::Failed, e.to_string()))?;
    let client_hello = match protocol::read_frame(stream) {
        Ok(body) => body,
        Err(FrameError::Idle) => {
            return Err(refuse(
                ErrorCode::Timeout,
                "no client_hello arrived within the server's timeout",
            ))
        }
        Err(e) => return Err(e.into()),
    };
    match protocol::parse(&client_hello)? {
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
    let random = protocol::random_bytes::<{ protocol::HELLO_RANDOM_BYTES }>().map_err(|e| {
        refuse(
            ErrorCode::Failed,
            format!("making server_hello's random: {e}"),
        )
    })?;
    let server_hello = Message::ServerHello {
        version: VERSION,
        capabilities: capabilities(),
        random: protocol::to_hex(&random),
        secure: state.config.token.is_some() || state.config.identity.is_some(),
        identity: (state.config.identity.as_ref())
            .map(|i| super::identity::key_hex(&i.keys.public)),
    };
    let server_hello = protocol::encode(&server_hello)
        .and_then(|body| protocol::write_frame(stream, &body).map(|()| body))
        .map_err(|e| refuse(ErrorCode::Failed, format!("sending server_hello: {e}")))?;
    handshake(stream, state, &client_hello, &server_hello)?;
    // Only now, encrypted for the token's or the key's holder: nothing before tells a
    // stranger which release or kernel answers here.
    let system = state.system.clone();
    send(stream, &Message::System { system })
}

/// The Noise handshake, when this server runs with a token or an identity (NNpsk0 with the
/// token alone; IK with `--identity`, the driver's key judged by `--authorized-drivers`).
fn handshake(
    stream: &mut ControlStream,
    state: &State,
    client_hello: &[u8],
    server_hello: &[u8],
) -> Result<(), Refusal> {
    use super::channel::{HandshakeError, Proof};
    let (token, identity) = (
        state.config.token.as_deref(),
        state.config.identity.as_ref(),
    );
    if token.is_none() && identity.is_none() {
        return Ok(());
    }
    let prologue = super::channel::prologue(client_hello, server_hello);
    let keys = identity.map(|i| &i.keys);
    let authorized = |key: &[u8; 32]| identity.is_some_and(|i| i.driver(key).is_some());
    let Err(e) = stream.respond(Proof { token, keys }, &prologue, &authorized) else {
        return Ok(());
    };
    // An unknown driver key counts as a wrong token: the same back-off holds both.
    if matches!(
        e,
        HandshakeError::WrongToken | HandshakeError::Unauthorized(_)
    ) {
        if let Ok(peer) = stream.peer_addr() {
            state.admission.failed(peer.ip());
        }
    }
    Err(refuse(ErrorCode::Auth, handshake_refusal(e)))
}

/// What the log and the client are told of a failed handshake.
fn handshake_refusal(e: super::channel::HandshakeError) -> String {
    match e {
        super::channel::HandshakeError::WrongToken => {
            "wrong token: the handshake does not match this server's --token-file".into()
        }
        e @ super::channel::HandshakeError::Unauthorized(_) => format!(
            "{e}; add the line of the driver's FILE.pub (`bytepath keygen --identity FILE`) there"
        ),
        other => other.to_string(),
    }
}

/// A run: its spec checked against the limits, then this side of it, one run at a time.
fn run(stream: &mut ControlStream, request: &RunRequest, state: &State) -> Result<Served, Refusal> {
    let spec = spec_for(request, &state.config.limits)?;
    let Some(mut claim) = take_turn(stream, state) else {
        return Ok("busy: another run is in progress".into());
    };
    let result = run::run_side(stream, &spec, request, state, &mut claim);
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
    result.map(|(done, bytes)| Served {
        detail: format!("{what}: {done}"),
        ran: Some(what),
        bytes: Some(bytes),
    })
}

/// Takes the server for one run, or answers `busy`: one test at a time.
pub(super) fn take_turn<'a>(stream: &mut ControlStream, state: &'a State) -> Option<RunClaim<'a>> {
    let claim = RunClaim::take(&state.busy);
    if claim.is_none() {
        let message = "another run is in progress; this server runs one at a time".to_string();
        let _ = protocol::write_message(stream, &Message::Busy { message });
    }
    claim
}
