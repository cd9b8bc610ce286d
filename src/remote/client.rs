//! `bytepath run --remote HOST[:PORT]`: the client side of the control protocol. It asks the
//! server to run the side of every flow the statistics do not follow (stream sender, rr
//! server), opens the data connections tagged with the session cookie, releases the server's
//! side with `Go`, and reads the server's samples back at the end.
use super::channel::ControlStream;
use super::protocol::{self, ErrorCode, FrameError, Message, RunRequest, DATA_TAG_BYTES};
use super::{apply_options, local_role, remote_role, BUFFERS, PROFILE, TCP_INFO, UDP};
use crate::config::remote::DriverIdentity;
use crate::config::{Pattern, RunSpec, Target};
use crate::engine::control::Control;
use crate::engine::peer::{LocalEnd, Peer, PeerWatch};
use crate::engine::worker::Role;
use crate::error::Error;
use crate::transport::buffers::SocketBuffers;
use crate::transport::datagram::{send_buffer, RECEIVE_TIMEOUT};
use crate::transport::tcp::max_send_buffer;
use crate::transport::{Endpoint, SocketOptions, Transport};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod canary;
mod files;
mod hello;
mod peer;
pub mod raw;
mod servers;
mod watch;
pub use files::RemoteFiles;
pub use peer::MeshClient;
pub use servers::RemoteServers;

/// How long the client waits for the server at each step of the set-up.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);
/// The watching thread's read timeout: how often it looks whether the run is over.
const WATCH_POLL: Duration = Duration::from_millis(200);
pub use crate::file::transfer::FILE_DATA_IDLE;

/// The client's half of a remote run.
pub struct RemotePeer {
    target: Target,
    token: Option<Vec<u8>>,
    /// `--identity` with `--trusted-servers`: the handshake is then Noise IK (`identity`).
    identity: Option<DriverIdentity>,
    /// `--reverse`: the server runs the measured side (stream receiver).
    reverse: bool,
    control: Option<ControlStream>,
    /// The server's version and kernel, from its `system` frame (escaped).
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
    /// TCP_INFO asked of a server that cannot sample (an older release): why its sides have
    /// no series.
    no_tcp_info: Option<String>,
    /// Run by a server for a mesh driver: an address that is no bytepath server is refused
    /// without detail (`unanswered`), the detail kept here for the server's log.
    peer_run: Option<Arc<Mutex<Option<String>>>>,
}

impl RemotePeer {
    pub fn new(target: Target, token: Option<Vec<u8>>, reverse: bool) -> RemotePeer {
        RemotePeer {
            target,
            token,
            identity: None,
            reverse,
            control: None,
            server_system: String::new(),
            server_capabilities: Vec::new(),
            pattern: None,
            expected: Vec::new(),
            servers: false,
            no_profile: None,
            no_tcp_info: None,
            peer_run: None,
        }
    }

    /// A peer for a mesh peer run, run by a server on a driver's behalf: why an address did
    /// not answer a bytepath hello goes into `detail` (for the server's log), not the record.
    pub fn for_peer_run(
        target: Target,
        token: Option<Vec<u8>>,
        reverse: bool,
        detail: Arc<Mutex<Option<String>>>,
    ) -> RemotePeer {
        RemotePeer {
            peer_run: Some(detail),
            ..RemotePeer::new(target, token, reverse)
        }
    }

    /// A peer for `bytepath servers --remote`: the server forks each point's server model.
    pub fn for_servers(target: Target, token: Option<Vec<u8>>) -> RemotePeer {
        RemotePeer {
            servers: true,
            ..RemotePeer::new(target, token, false)
        }
    }

    /// The same peer proving `identity` (the driver's `--identity`, `--trusted-servers`) too.
    pub fn with_identity(self, identity: Option<DriverIdentity>) -> RemotePeer {
        RemotePeer { identity, ..self }
    }

    /// A failure that names the server. `what` may quote the server (its busy or error text,
    /// a frame it sent that did not parse): escaped, so no control character or escape
    /// sequence it chose reaches the terminal.
    fn fail(&self, what: impl std::fmt::Display) -> Error {
        let what = super::escaped(&what.to_string());
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

    /// The server's error frame as this side's error; its text escaped.
    fn refused(&self, code: ErrorCode, message: &str) -> Error {
        // The server's refusals of what the user asked for are input errors (exit 2).
        match code {
            ErrorCode::Limit
            | ErrorCode::Refused
            | ErrorCode::Version
            | ErrorCode::Auth
            | ErrorCode::Forbidden => {
                let message = super::escaped(message);
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

    /// Whether the server's hello announced `capability`.
    fn can(&self, capability: &str) -> bool {
        self.server_capabilities.iter().any(|c| c == capability)
    }

    /// The run request for `spec`, as this server can take it: what it cannot run refused
    /// (udp, socket buffers), what it cannot add left out with the reason kept for the record
    /// (its profile, its TCP_INFO).
    fn request_for_this_server(&mut self, spec: &RunSpec) -> Result<RunRequest, Error> {
        let refuse = |what: &str, capability: &str| -> Error {
            crate::error::ConfigError(format!(
                "--remote {} {what}: the server ({}) cannot (an older release without the \"{capability}\" capability); use the same bytepath release on both hosts",
                self.target, self.server_system
            ))
            .into()
        };
        if spec.transport == Transport::Udp && !self.can(UDP) {
            return Err(refuse("--transport udp", UDP));
        }
        let mut request = request_for(spec, self.reverse);
        if request.buffers.is_set() && !self.can(BUFFERS) {
            return Err(refuse("with --rcvbuf or --sndbuf", BUFFERS));
        }
        if spec.profile && !self.can(PROFILE) {
            // The run goes on; only the server's side is left without a profile.
            request.profile = false;
            self.no_profile = Some(format!(
                "the server ({}) cannot sample its side (an older release without the \"{PROFILE}\" capability)",
                self.server_system
            ));
        }
        if request.tcp_info && !self.can(TCP_INFO) {
            request.tcp_info = false;
            self.no_tcp_info = Some(format!(
                "the server ({}) cannot sample its TCP_INFO (an older release without the \"{TCP_INFO}\" capability)",
                self.server_system
            ));
        }
        Ok(request)
    }

    /// Asks for the run; returns the data port, the cookie, and (udp) every flow's port.
    fn request(&mut self, spec: &RunSpec) -> Result<(u16, Vec<u8>, Vec<u16>), Error> {
        let request = self.request_for_this_server(spec)?;
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
                let mut stream = connect_data(addr, spec.socket_buffers)?;
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
        let server = watch::Server {
            target: self.target.clone(),
            expected: self.expected,
            no_profile: self.no_profile,
            no_tcp_info: self.no_tcp_info,
        };
        watch::start(stream, server, endpoints, control)
    }
}

/// A data connection to `addr` within `STEP_TIMEOUT`; with `--rcvbuf` / `--sndbuf`, set before
/// connect(2), so the handshake announces the window they give.
fn connect_data(addr: SocketAddr, buffers: SocketBuffers) -> io::Result<TcpStream> {
    if !buffers.is_set() {
        return TcpStream::connect_timeout(&addr, STEP_TIMEOUT);
    }
    let stream = crate::sys::socket::connect_tcp(addr, |fd| {
        buffers.apply(fd)?;
        // A blocking connect(2) waits as long as SO_SNDTIMEO allows (socket(7)), so it is
        // bounded as the plain path's is; set through a duplicate of the descriptor.
        TcpStream::from(fd.try_clone_to_owned()?).set_write_timeout(Some(STEP_TIMEOUT))
    })
    .map_err(|e| match e.raw_os_error() {
        // What connect(2) says when SO_SNDTIMEO ran out.
        Some(libc::EINPROGRESS) => io::Error::new(io::ErrorKind::TimedOut, "connect timed out"),
        _ => e,
    })?;
    stream.set_write_timeout(None)?;
    Ok(stream)
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
        queue_depth: spec.mechanism.uses_queue_depth.then_some(spec.queue_depth),
        recv: (spec.recv_path != Default::default()).then(|| spec.recv_path.name().into()),
        profile: spec.profile,
        buffers: spec.socket_buffers,
        tcp_info: crate::engine::tcp_sampler::why_not_sampled(spec).is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer() -> RemotePeer {
        let target = Target {
            host: "192.0.2.1".into(),
            port: 7000,
        };
        RemotePeer::new(target, None, false)
    }

    /// What a hostile server might put in its text: an escape sequence that recolours the
    /// terminal, one that retitles it, and a newline that forges a line of output.
    const HOSTILE: &str = "no\x1b[31m red\x1b]0;owned\x07\nbytepath: all good";

    #[test]
    fn a_servers_refusal_and_busy_text_are_printed_escaped() {
        let peer = peer();
        for error in [
            peer.refused(ErrorCode::Auth, HOSTILE),
            peer.refused(ErrorCode::Failed, HOSTILE),
            peer.fail(format_args!("busy: {HOSTILE}")),
        ] {
            let shown = error.to_string();
            assert!(
                !shown.chars().any(|c| c.is_control()),
                "a control character reaches the terminal: {shown:?}"
            );
            assert!(
                shown.contains(r"no\u{1b}[31m red\u{1b}]0;owned\u{7}\nbytepath: all good"),
                "{shown}"
            );
            assert!(shown.contains("192.0.2.1:7000"), "{shown}");
        }
        // A refusal of what the user asked for stays an input error (exit 2).
        assert!(matches!(
            peer.refused(ErrorCode::Auth, HOSTILE),
            Error::Config(_)
        ));
    }
}
