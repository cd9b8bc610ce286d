//! `bytepath run --remote HOST[:PORT]`: the client side of the control protocol. It asks the
//! server to run the side of every flow the statistics do not follow (stream sender, rr
//! server), opens the data connections tagged with the session cookie, releases the server's
//! side with `Go`, and reads the server's samples back at the end.
use super::channel::{ControlStream, HandshakeError, Refusal};
use super::protocol::{self, ErrorCode, FrameError, Message, RunRequest, DATA_TAG_BYTES, VERSION};
use super::{apply_options, capabilities, local_role, remote_role, PROFILE, REVERSE, SERVERS, UDP};
use crate::config::{Pattern, RunSpec, Target};
use crate::engine::control::Control;
use crate::engine::peer::{LocalEnd, Peer, PeerEnd, PeerSlices, PeerWatch};
use crate::engine::worker::{Role, ThreadSample};
use crate::error::Error;
use crate::transport::datagram::{send_buffer, RECEIVE_TIMEOUT};
use crate::transport::tcp::max_send_buffer;
use crate::transport::{Endpoint, SocketOptions, Transport};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

mod canary;
mod files;
mod peer;
mod servers;
pub use files::RemoteFiles;
pub use peer::MeshClient;
pub use servers::RemoteServers;

/// How long the client waits for the server at each step of the set-up.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);
/// The watching thread's read timeout: how often it looks whether the run is over.
const WATCH_POLL: Duration = Duration::from_millis(200);
pub use crate::file::transfer::FILE_DATA_IDLE;

/// The version a hello of another protocol version names, if it is one.
fn other_version(hello: &[u8]) -> Option<u32> {
    let value: serde_json::Value = serde_json::from_slice(hello).ok()?;
    if value["type"] != "server_hello" {
        return None;
    }
    value["version"]
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .filter(|&v| v != VERSION)
}

/// Says once per process that a server runs `--insecure`.
fn warn_insecure(target: &Target) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        eprintln!("bytepath: WARNING: the server at {target} runs --insecure: the control channel is neither authenticated nor encrypted");
    });
}

/// The client's half of a remote run.
pub struct RemotePeer {
    target: Target,
    token: Option<Vec<u8>>,
    /// `--reverse`: the server runs the measured side (stream receiver).
    reverse: bool,
    control: Option<ControlStream>,
    /// The server's version and kernel, from its hello.
    server_system: String,
    /// What the server's hello says it can run.
    server_capabilities: Vec<String>,
    pattern: Option<Pattern>,
    /// Workers the server runs: (flow, role).
    expected: Vec<(u32, Role)>,
    /// `bytepath servers --remote`: the server must fork server models.
    servers: bool,
    /// `--profile` asked of a server that cannot sample (an older release): why its side has
    /// no profile.
    no_profile: Option<String>,
}

impl RemotePeer {
    pub fn new(target: Target, token: Option<Vec<u8>>, reverse: bool) -> RemotePeer {
        RemotePeer {
            target,
            token,
            reverse,
            control: None,
            server_system: String::new(),
            server_capabilities: Vec::new(),
            pattern: None,
            expected: Vec::new(),
            servers: false,
            no_profile: None,
        }
    }

    /// A peer for `bytepath servers --remote`: the server forks each point's server model.
    pub fn for_servers(target: Target, token: Option<Vec<u8>>) -> RemotePeer {
        RemotePeer {
            servers: true,
            ..RemotePeer::new(target, token, false)
        }
    }

    fn fail(&self, what: impl std::fmt::Display) -> Error {
        Error::Failed(format!("the server at {}: {what}", self.target))
    }

    fn stream(&mut self) -> &mut ControlStream {
        self.control
            .as_mut()
            .expect("the control connection is open")
    }

    fn send(&mut self, message: &Message) -> Result<(), Error> {
        let sent = protocol::write_message(self.stream(), message);
        sent.map_err(|e| self.fail(format_args!("sending {}: {e}", message.kind())))
    }

    /// Reads the next message, turning the server's Error and Busy frames into errors.
    fn receive(&mut self, expecting: &str) -> Result<Message, Error> {
        match protocol::read_message(self.stream()) {
            Ok(Message::Error { code, message }) => Err(self.refused(code, &message)),
            Ok(Message::Busy { message }) => Err(self.fail(format_args!("busy: {message}"))),
            Ok(m) => Ok(m),
            Err(FrameError::Idle) => Err(self.fail(format_args!(
                "no {expecting} within {} s",
                STEP_TIMEOUT.as_secs()
            ))),
            Err(e) => Err(self.fail(format_args!("waiting for {expecting}: {e}"))),
        }
    }

    fn refused(&self, code: ErrorCode, message: &str) -> Error {
        // The server's refusals of what the user asked for are input errors (exit 2).
        match code {
            ErrorCode::Limit
            | ErrorCode::Refused
            | ErrorCode::Version
            | ErrorCode::Auth
            | ErrorCode::Forbidden => {
                crate::error::ConfigError(format!("--remote {}: {message}", self.target)).into()
            }
            _ => self.fail(format_args!("error: {message}")),
        }
    }

    fn unexpected(&self, expecting: &str, got: &Message) -> Error {
        self.fail(format_args!(
            "expected {expecting}, got a {} message",
            got.kind()
        ))
    }

    fn handshake(&mut self) -> Result<(), Error> {
        let addr = resolve(&self.target)?;
        let stream = TcpStream::connect_timeout(&addr, STEP_TIMEOUT)
            .map_err(|e| self.fail(format_args!("connecting: {e}")))?;
        let setup = stream
            .set_read_timeout(Some(STEP_TIMEOUT))
            .and_then(|()| stream.set_write_timeout(Some(STEP_TIMEOUT)))
            .and_then(|()| stream.set_nodelay(true));
        setup.map_err(|e| self.fail(e))?;
        self.control = Some(ControlStream::plain(stream));
        let client_hello = protocol::encode(&Message::ClientHello {
            version: VERSION,
            capabilities: capabilities(),
        })
        .map_err(|e| self.fail(e))?;
        let sent = protocol::write_frame(self.stream(), &client_hello);
        sent.map_err(|e| self.fail(format_args!("sending client_hello: {e}")))?;
        let server_hello = match protocol::read_frame(self.stream()) {
            Ok(body) => body,
            Err(e) => return Err(self.fail(format_args!("waiting for its hello: {e}"))),
        };
        let (version, secure) = match protocol::parse(&server_hello) {
            Ok(Message::ServerHello {
                version,
                system,
                secure,
                capabilities,
            }) => {
                self.server_capabilities = capabilities;
                self.server_system = system;
                (version, secure)
            }
            Ok(Message::Error { code, message }) => return Err(self.refused(code, &message)),
            Ok(other) => return Err(self.unexpected("its hello", &other)),
            // An older server's hello has other fields: still name its version.
            Err(e) => match other_version(&server_hello) {
                Some(version) => (version, false),
                None => return Err(self.fail(format_args!("its hello: {e}"))),
            },
        };
        if version != VERSION {
            return Err(crate::error::ConfigError(format!(
                "--remote {}: protocol version mismatch: this client speaks version {VERSION}, the server speaks version {version}; use the same bytepath release on both hosts",
                self.target
            ))
            .into());
        }
        self.check_capabilities()?;
        self.secure_channel(secure, &client_hello, &server_hello)
    }

    /// The Noise handshake keyed by the token, when the server runs with one; a server
    /// without one (`--insecure`) is taken only by a client without one, with a warning.
    fn secure_channel(
        &mut self,
        secure: bool,
        client_hello: &[u8],
        server_hello: &[u8],
    ) -> Result<(), Error> {
        let token = self.token.clone();
        match (secure, token) {
            (true, Some(token)) => {
                let prologue = super::channel::prologue(client_hello, server_hello);
                match self.stream().client_handshake(&token, &prologue) {
                    Ok(()) => Ok(()),
                    Err(HandshakeError::Answered(Refusal(code, message))) => {
                        Err(self.refused(code, &message))
                    }
                    Err(HandshakeError::WrongToken) => Err(crate::error::ConfigError(format!(
                        "--remote {}: the server could not prove it holds this --token-file (a different token, or the connection was altered on the way)",
                        self.target
                    ))
                    .into()),
                    Err(e) => Err(self.fail(e)),
                }
            }
            (true, None) => Err(crate::error::ConfigError(format!(
                "--remote {}: the server requires a token; give the same one with --token-file",
                self.target
            ))
            .into()),
            (false, Some(_)) => Err(crate::error::ConfigError(format!(
                "--remote {}: the server runs --insecure (no token), so it cannot prove it holds this --token-file; refused",
                self.target
            ))
            .into()),
            (false, None) => {
                warn_insecure(&self.target);
                Ok(())
            }
        }
    }

    fn check_capabilities(&self) -> Result<(), Error> {
        if self.reverse && !self.server_capabilities.iter().any(|c| c == REVERSE) {
            return Err(crate::error::ConfigError(format!(
                "--remote {} --reverse: the server ({}) cannot run the measured side; use the same bytepath release on both hosts",
                self.target, self.server_system
            ))
            .into());
        }
        if self.servers && !self.server_capabilities.iter().any(|c| c == SERVERS) {
            return Err(crate::error::ConfigError(format!(
                "--remote {} with servers: the server ({}) cannot run server models; use the same bytepath release on both hosts",
                self.target, self.server_system
            ))
            .into());
        }
        Ok(())
    }

    /// Refuses a server whose hello does not announce `capability` (an older release).
    fn require(&self, capability: &str, what: &str) -> Result<(), Error> {
        if self.server_capabilities.iter().any(|c| c == capability) {
            return Ok(());
        }
        Err(crate::error::ConfigError(format!(
            "--remote {}: the server ({}) cannot {what}; use the same bytepath release on both hosts",
            self.target, self.server_system
        ))
        .into())
    }

    /// Says hello (and proves the token) without asking for a run, then says goodbye: whether
    /// the server is there and would take this client, before a command's first point.
    pub fn check(mut self) -> Result<(), Error> {
        self.handshake()?;
        self.send(&Message::Bye)
    }

    /// Like `check`, and returns the server's version and kernel for the record.
    pub fn check_system(mut self) -> Result<String, Error> {
        self.handshake()?;
        self.send(&Message::Bye)?;
        Ok(self.server_system)
    }

    /// Asks for the run; returns the data port, the cookie, and (udp) every flow's port.
    fn request(&mut self, spec: &RunSpec) -> Result<(u16, Vec<u8>, Vec<u16>), Error> {
        if spec.transport == Transport::Udp && !self.server_capabilities.iter().any(|c| c == UDP) {
            return Err(crate::error::ConfigError(format!(
                "--remote {} --transport udp: the server ({}) carries tcp only; use the same bytepath release on both hosts",
                self.target, self.server_system
            ))
            .into());
        }
        let mut request = request_for(spec, self.reverse);
        if spec.profile && !self.server_capabilities.iter().any(|c| c == PROFILE) {
            // The run goes on; only the server's side is left without a profile.
            request.profile = false;
            self.no_profile = Some(format!(
                "the server ({}) cannot sample its side (an older release without the \"{PROFILE}\" capability)",
                self.server_system
            ));
        }
        self.send(&Message::Run { request })?;
        match self.receive("its answer to the run request")? {
            Message::Accepted {
                data_port,
                cookie,
                udp_ports,
            } => {
                let cookie = protocol::from_hex(&cookie)
                    .filter(|c| c.len() == protocol::COOKIE_BYTES)
                    .ok_or_else(|| self.fail("its session cookie is not 16 bytes of hex"))?;
                if spec.transport == Transport::Udp && udp_ports.len() != spec.threads {
                    return Err(self.fail(format_args!(
                        "it named {} udp ports for {} flows",
                        udp_ports.len(),
                        spec.threads
                    )));
                }
                Ok((data_port, cookie, udp_ports))
            }
            other => Err(self.unexpected("accepted", &other)),
        }
    }

    /// Joins one udp flow to each of the server's `ports` (`udp`), then tells it `Joined`.
    fn open_udp_flows(
        &mut self,
        options: SocketOptions,
        ports: &[u16],
        cookie: &[u8],
    ) -> Result<Vec<LocalEnd>, Error> {
        let framing = options
            .framing
            .ok_or_else(|| Error::Setup(io::Error::other("a udp flow needs the run's framing")))?;
        let server = resolve(&self.target)?;
        let sockets = super::udp::join_at_client(server, ports, cookie, STEP_TIMEOUT)
            .map_err(|e| self.fail(format_args!("joining the udp flows: {e}")))?;
        self.send(&Message::Joined)?;
        sockets
            .into_iter()
            .map(|s| {
                s.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
                let send_buffer = send_buffer(s.as_fd())?;
                Ok(LocalEnd {
                    endpoint: Endpoint::datagram(s, framing),
                    send_buffer,
                })
            })
            .collect::<io::Result<_>>()
            .map_err(|e| self.fail(format_args!("setting up the udp flows: {e}")))
    }

    /// Opens the data connections, each tagged with the cookie and its flow index.
    fn open_flows(
        &self,
        spec: &RunSpec,
        options: SocketOptions,
        port: u16,
        cookie: &[u8],
    ) -> Result<Vec<LocalEnd>, Error> {
        let mut addr = resolve(&self.target)?;
        addr.set_port(port);
        let role = local_role(spec.pattern, self.reverse);
        (0..spec.threads)
            .map(|flow| {
                let mut stream = TcpStream::connect_timeout(&addr, STEP_TIMEOUT)?;
                let mut tag = [0u8; DATA_TAG_BYTES];
                tag[..cookie.len()].copy_from_slice(cookie);
                tag[cookie.len()..].copy_from_slice(&(flow as u32).to_be_bytes());
                stream.write_all(&tag)?;
                apply_options(&stream, options, role)?;
                let send_buffer = max_send_buffer(&stream);
                Ok(LocalEnd {
                    endpoint: Endpoint::socket(stream),
                    send_buffer,
                })
            })
            .collect::<io::Result<_>>()
            .map_err(|e| self.fail(format_args!("opening data connections to port {port}: {e}")))
    }
}

impl Peer for RemotePeer {
    fn connect(&mut self, spec: &RunSpec, options: SocketOptions) -> Result<Vec<LocalEnd>, Error> {
        self.handshake()?;
        let (port, cookie, udp_ports) = self.request(spec)?;
        let ends = if spec.transport == Transport::Udp {
            self.open_udp_flows(options, &udp_ports, &cookie)?
        } else {
            self.open_flows(spec, options, port, &cookie)?
        };
        match self.receive("ready")? {
            Message::Ready => {}
            other => return Err(self.unexpected("ready", &other)),
        }
        let role = remote_role(spec.pattern, self.reverse);
        self.expected = (0..spec.threads as u32).map(|f| (f, role)).collect();
        self.pattern = Some(spec.pattern);
        Ok(ends)
    }

    fn local_role(&self, pattern: Pattern) -> Role {
        local_role(pattern, self.reverse)
    }

    fn describe(&self) -> String {
        let side = match self.pattern {
            Some(Pattern::Stream) if self.reverse => {
                "receiver and measured; this host sent (like iperf3 without -R)"
            }
            Some(Pattern::Stream) | None => {
                "sender; this host received and measured (like iperf3 -R)"
            }
            Some(Pattern::Rr | Pattern::Crr) => {
                "server (answering); this host ran the client and measured"
            }
        };
        format!(
            "remote: the server at {} ({}) ran the {side}",
            self.target, self.server_system
        )
    }

    fn start(&mut self) -> Result<(), Error> {
        self.send(&Message::Go)
    }

    fn watch(
        mut self: Box<Self>,
        endpoints: &[Arc<Endpoint>],
        control: &Arc<Control>,
    ) -> Result<Box<dyn PeerWatch>, Error> {
        let stream = self.control.take().expect("the control connection is open");
        let writer = stream.try_clone().map_err(Error::Setup)?;
        stream
            .set_read_timeout(Some(WATCH_POLL))
            .map_err(Error::Setup)?;
        let (tx, rx) = mpsc::channel();
        let endpoints = endpoints.to_vec();
        let control = control.clone();
        let target = self.target.clone();
        thread::Builder::new()
            .name("bytepath-remote-watch".into())
            .spawn(move || {
                let report = read_results(stream, &control);
                if report.is_err() {
                    control.stop();
                    endpoints.iter().for_each(|ep| ep.abort());
                } else if report.as_ref().is_ok_and(|r| r.error.is_some()) {
                    // The server cut its side short (it is ending, or its watchdog fired):
                    // this side stops too instead of waiting out the schedule alone.
                    control.stop();
                }
                let _ = tx.send(report);
            })
            .map_err(Error::Setup)?;
        Ok(Box::new(RemoteWatch {
            target,
            writer,
            results: rx,
            expected: self.expected,
            no_profile: self.no_profile,
        }))
    }
}

/// What the server sent back: its samples, its slices when it measured, and why its side
/// failed, if it did.
#[derive(Default)]
struct Report {
    samples: Vec<ThreadSample>,
    slices: Option<PeerSlices>,
    profile: Option<Box<crate::measure::profile::Profile>>,
    error: Option<String>,
}

/// Reads `Sample` (and `Slices`) frames until `Done`. Before the local run ends, silence is
/// expected; a closed or broken control connection is the server gone (`Err`: the flows must
/// be aborted).
fn read_results(mut stream: ControlStream, control: &Control) -> Result<Report, Report> {
    let mut report = Report::default();
    let mut quiet_since: Option<Instant> = None;
    let failed = |mut report: Report, why: String| {
        report.error = Some(why);
        Err(report)
    };
    loop {
        match protocol::read_message(&mut stream) {
            Ok(Message::Sample { sample }) => report.samples.push(*sample),
            Ok(Message::Profile { profile }) => report.profile = Some(profile),
            Ok(Message::Slices {
                slice_ns,
                bytes,
                messages,
            }) => {
                report.slices = Some(PeerSlices {
                    length: Duration::from_nanos(slice_ns),
                    bytes,
                    messages,
                })
            }
            Ok(Message::Done { error, .. }) => {
                let _ = protocol::write_message(&mut stream, &Message::Bye);
                report.error = error;
                return Ok(report);
            }
            Ok(Message::Error { message, .. }) => return failed(report, message),
            Ok(other) => {
                let why = format!("sent an unexpected {} message", other.kind());
                return failed(report, why);
            }
            Err(FrameError::Idle) => {
                // After the local side stopped, the server has STOP_GRACE plus a step to report.
                if control.is_stopped() {
                    let since = *quiet_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > crate::engine::STOP_GRACE + STEP_TIMEOUT {
                        return failed(report, "sent no results after the run".into());
                    }
                }
            }
            Err(e) => return failed(report, format!("the control connection failed: {e}")),
        }
    }
}

struct RemoteWatch {
    target: Target,
    writer: ControlStream,
    results: Receiver<Result<Report, Report>>,
    expected: Vec<(u32, Role)>,
    no_profile: Option<String>,
}

impl PeerWatch for RemoteWatch {
    fn stop(&mut self) {
        // The server may already be gone; the watching thread reports that.
        let _ = protocol::write_message(&mut self.writer, &Message::Stop);
    }

    fn finish(
        self: Box<Self>,
        deadline: Instant,
        endpoints: &[Arc<Endpoint>],
        samples: &mut Vec<ThreadSample>,
    ) -> PeerEnd {
        let wait = deadline.saturating_duration_since(Instant::now()) + STEP_TIMEOUT;
        let (report, fired) = match self.results.recv_timeout(wait) {
            Ok(Ok(report) | Err(report)) => (report, false),
            Err(_) => {
                endpoints.iter().for_each(|ep| ep.abort());
                let error = Some("sent no results in time".into());
                (
                    Report {
                        error,
                        ..Report::default()
                    },
                    true,
                )
            }
        };
        samples.extend(report.samples);
        let why = report
            .error
            .unwrap_or_else(|| "its worker thread panicked".into());
        let error = format!("no result from the server at {}: {why}", self.target);
        crate::engine::worker::fill_missing(samples, &self.expected, 0, &error);
        let profile = match (report.profile, self.no_profile) {
            (Some(p), _) => Some(*p),
            (None, Some(reason)) => Some(crate::measure::profile::Profile::Unavailable { reason }),
            (None, None) => None,
        };
        PeerEnd {
            fired,
            slices: report.slices,
            profile,
        }
    }
}

pub fn resolve(target: &Target) -> Result<SocketAddr, Error> {
    (target.host.as_str(), target.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| {
            crate::error::ConfigError(format!(
                "--remote {target}: the host name does not resolve to an address"
            ))
            .into()
        })
}

/// The run request for `spec`: the fields the server's side needs.
pub fn request_for(spec: &RunSpec, reverse: bool) -> RunRequest {
    RunRequest {
        transport: spec.transport.name().into(),
        mechanism: spec.mechanism.name().into(),
        pattern: spec.pattern.name().into(),
        message_size: spec.message_size as u64,
        threads: spec.threads as u64,
        duration_ms: spec.duration.as_millis() as u64,
        warmup_ms: spec.warmup.as_millis() as u64,
        total_bytes: spec
            .stopping
            .messages_per_flow
            .map(|n| n * spec.threads as u64 * spec.message_size as u64),
        recv_size: spec.recv_size.map(|r| r as u64),
        spin: spec.spin,
        verify: spec.verify,
        counters: spec.counters.name().into(),
        reverse,
        udp_split: spec.udp_split && spec.transport == Transport::Udp,
        queue_depth: spec
            .mechanism
            .uses_queue_depth()
            .then_some(spec.queue_depth),
        recv: (spec.recv_path != Default::default()).then(|| spec.recv_path.name().into()),
        profile: spec.profile,
    }
}
