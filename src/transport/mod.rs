//! What carries bytes between the two sides. The engine asks a `FlowConnector` for connected
//! flows and works on `Endpoint`s, whatever is behind them: a TCP or Unix socket (one
//! descriptor, send/recv with flags) or a pair of pipes (a read end and a write end,
//! read/write), a datagram socket (each message one or more numbered datagrams) or a pair of
//! shared-memory rings. `Link` is where the two sides run (loopback, two network namespaces
//! joined by a veth pair with `--netns`, or with `--sink` the sending side alone, its datagrams
//! dropped past a veth pair); every command gets its connectors from it: a `FlowConnector`
//! for flows with two ends, a `SinkConnector` for the sink's sending ends.
pub(crate) mod buffers;
pub(crate) mod datagram;
pub(crate) mod framing;
pub(crate) mod local;
pub(crate) mod netns;
pub(crate) mod network;
pub(crate) mod sink;
pub mod tcp;
pub(crate) mod veth;

use crate::sys::ring::Ring;
use crate::sys::{fdio, socket};
use std::io::{self, IoSlice};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

pub use network::Network;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TCP over loopback.
    Tcp,
    /// A connected AF_UNIX stream socket pair.
    Unix,
    /// Two pipes per flow: one each way.
    Pipe,
    /// Two shared-memory rings per flow (spin-then-futex): no kernel copy at all.
    Shm,
    /// Two connected UDP sockets over loopback: numbered datagrams, loss counted.
    Udp,
    /// A connected AF_UNIX datagram socket pair.
    UnixDgram,
}

impl Transport {
    pub const ALL: [Transport; 6] = [
        Transport::Tcp,
        Transport::Unix,
        Transport::Pipe,
        Transport::Shm,
        Transport::Udp,
        Transport::UnixDgram,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Unix => "unix",
            Transport::Pipe => "pipe",
            Transport::Shm => "shm",
            Transport::Udp => "udp",
            Transport::UnixDgram => "unix-dgram",
        }
    }

    /// Messages travel as datagrams: sequence-numbered, possibly lost or reordered.
    pub fn is_datagram(self) -> bool {
        matches!(self, Transport::Udp | Transport::UnixDgram)
    }
}

/// The connector for a transport (both sides in this process).
pub fn connector(transport: Transport) -> Box<dyn FlowConnector> {
    match transport {
        Transport::Tcp => Box::new(tcp::Loopback),
        Transport::Unix => Box::new(local::UnixPair),
        Transport::Pipe => Box::new(local::PipePair),
        Transport::Shm => Box::new(local::ShmRings),
        Transport::Udp => Box::new(datagram::UdpLoopback),
        Transport::UnixDgram => Box::new(datagram::UnixDgramPair),
    }
}

/// Why a `Link` or its connector could not be had: `Refused` is the input's fault (this
/// placement cannot carry what was asked; exit 2), `Failed` the machine's (exit 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkError {
    Refused(String),
    Failed(String),
}

/// Where the two sides of every flow run, for the whole of one command: nothing to hold for
/// loopback; for `--netns` the veth pair and for `--sink` the sink, whose namespaces are
/// deleted when the link drops (also after a failed run or Ctrl-C, which only sets a flag so
/// commands return normally).
pub enum Link {
    Loopback,
    Veth(Box<veth::VethPair>),
    Sink(Box<sink::SinkLink>),
}

/// The sink's set-up error as a `LinkError`, naming the flag.
fn link_error(flag: &str, e: veth::VethError) -> LinkError {
    match e {
        veth::VethError::Missing(why) => LinkError::Refused(why),
        veth::VethError::Failed(why) => LinkError::Failed(format!("setting up {flag}: {why}")),
    }
}

impl Link {
    /// Sets up the placement `network` asks for.
    pub fn open(network: &Network) -> Result<Link, LinkError> {
        if network.is_sink() {
            let mtu = network.mtu.unwrap_or(network::SINK_MTU);
            return sink::SinkLink::create(mtu)
                .map(|sink| Link::Sink(Box::new(sink)))
                .map_err(|e| link_error("--sink", e));
        }
        if !network.is_netns() {
            return Ok(Link::Loopback);
        }
        let mtu = network.mtu.unwrap_or(network::DEFAULT_MTU);
        veth::VethPair::create(mtu, network.netem.as_deref())
            .map(|pair| Link::Veth(Box::new(pair)))
            .map_err(|e| link_error("--netns", e))
    }

    /// Where the sides run, in words: the link alone, without a transport.
    pub fn describe(&self) -> String {
        match self {
            Link::Loopback => "loopback (127.0.0.1)".into(),
            Link::Veth(pair) => pair.describe(),
            Link::Sink(sink) => sink.describe(),
        }
    }

    /// The veth pair the sides' namespaces are joined by, where there is one.
    fn pair(&self) -> Option<&veth::VethPair> {
        match self {
            Link::Loopback => None,
            Link::Veth(pair) => Some(pair),
            Link::Sink(sink) => Some(&sink.pair),
        }
    }

    /// The address a server listens on: 127.0.0.1, or the receiving side's veth address (on
    /// a sink, the address past the veth that nobody owns).
    pub fn server_addr(&self) -> std::net::Ipv4Addr {
        self.pair()
            .map_or(std::net::Ipv4Addr::LOCALHOST, |p| p.names.receiver_addr)
    }

    /// Runs `f` where the receiving (server) side's sockets belong: here for loopback, on a
    /// short-lived thread inside the receiver's namespace for `--netns`. A sink has no
    /// receiving side: refused.
    pub fn on_receiving_side<T: Send>(
        &self,
        f: impl FnOnce() -> io::Result<T> + Send,
    ) -> io::Result<T> {
        match self {
            Link::Loopback => f(),
            Link::Veth(pair) => crate::sys::netns::in_netns(&pair.receiver_ns, f),
            Link::Sink(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a sink has no receiving side: nothing may listen in its peer namespace",
            )),
        }
    }

    /// As `on_receiving_side`, for the sending (client) side.
    pub fn on_sending_side<T: Send>(
        &self,
        f: impl FnOnce() -> io::Result<T> + Send,
    ) -> io::Result<T> {
        match self.pair() {
            None => f(),
            Some(pair) => crate::sys::netns::in_netns(&pair.sender_ns, f),
        }
    }

    /// For a dedicated client thread that enters the sending side's namespace itself and
    /// stays there (`servers`' load generator): `None` for loopback.
    pub fn sending_netns(&self) -> io::Result<Option<Arc<crate::sys::netns::NetnsHandle>>> {
        match self.pair() {
            None => Ok(None),
            Some(pair) => Ok(Some(Arc::new(crate::sys::netns::NetnsHandle::open(
                &pair.names.sender_netns,
            )?))),
        }
    }

    /// The connector for `transport` in this placement: the one place that picks it, for
    /// every command. A transport that cannot cross namespaces is refused with the reason; a
    /// sink has sending ends only (`sink::SinkFlows`).
    pub fn connector(
        &self,
        transport: Transport,
    ) -> Result<Box<dyn FlowConnector + '_>, LinkError> {
        let refused = |placement, mtu, netem| {
            let network = Network {
                placement,
                mtu,
                netem,
            };
            network.refusal(transport).map_or_else(
                || LinkError::Failed(format!("no connector for {} here", transport.name())),
                LinkError::Refused,
            )
        };
        match (self, transport) {
            (Link::Loopback, t) => Ok(connector(t)),
            (Link::Veth(pair), Transport::Tcp) => Ok(Box::new(netns::NetnsTcp(pair))),
            (Link::Veth(pair), Transport::Udp) => Ok(Box::new(netns::NetnsUdp(pair))),
            (Link::Veth(pair), _) => Err(refused(
                network::Placement::Netns,
                Some(pair.mtu),
                pair.netem.clone(),
            )),
            (Link::Sink(_), Transport::Udp) => Err(LinkError::Failed(
                "a sink has sending ends only, so no flow with two ends runs on it".into(),
            )),
            (Link::Sink(sink), _) => Err(refused(network::Placement::Sink, Some(sink.mtu()), None)),
        }
    }
}

/// Options a run needs on its flows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketOptions {
    /// TCP_NODELAY on both ends (request/response must not wait for Nagle).
    pub nodelay: bool,
    /// SO_ZEROCOPY on the sender (client) end.
    pub zerocopy_sender: bool,
    /// SO_ZEROCOPY on the receiver (server) end, which answers in `rr`.
    pub zerocopy_receiver: bool,
    /// Reads must not block (`--spin`): pipes need O_NONBLOCK, sockets use MSG_DONTWAIT.
    pub nonblocking_reads: bool,
    /// Pipe buffer to ask for (F_SETPIPE_SZ), pipes only.
    pub pipe_size: Option<usize>,
    /// How messages map onto datagrams, datagram transports only.
    pub framing: Option<datagram::Framing>,
    /// TCP_MAXSEG on both ends, set before the handshake (`--recv zc-recv`: segments whose
    /// payload is whole pages, which TCP_ZEROCOPY_RECEIVE can map).
    pub tcp_maxseg: Option<u32>,
    /// `--rcvbuf` / `--sndbuf` on both ends of a tcp flow, set before the handshake.
    pub buffers: buffers::SocketBuffers,
}

/// One side's end of a flow.
pub struct Endpoint {
    inner: Inner,
}

enum Inner {
    /// One socket descriptor, read and written (send/recv with flags).
    Socket(OwnedFd),
    /// The pipe this side reads from and the pipe it writes into.
    Pipe { read: OwnedFd, write: OwnedFd },
    /// Shared-memory rings: one this side reads, one it writes.
    Shm { rx: Arc<Ring>, tx: Arc<Ring> },
    /// A connected datagram socket that numbers what it sends.
    Datagram(datagram::DatagramSocket),
}

impl Endpoint {
    pub fn socket(fd: impl Into<OwnedFd>) -> Endpoint {
        Endpoint {
            inner: Inner::Socket(fd.into()),
        }
    }

    pub fn pipes(read: OwnedFd, write: OwnedFd) -> Endpoint {
        Endpoint {
            inner: Inner::Pipe { read, write },
        }
    }

    pub fn rings(rx: Arc<Ring>, tx: Arc<Ring>) -> Endpoint {
        Endpoint {
            inner: Inner::Shm { rx, tx },
        }
    }

    pub fn datagram(fd: impl Into<OwnedFd>, framing: datagram::Framing) -> Endpoint {
        Endpoint {
            inner: Inner::Datagram(datagram::DatagramSocket::new(fd.into(), framing)),
        }
    }

    /// The socket behind this endpoint, for socket-only features (MSG_ZEROCOPY).
    pub fn socket_fd(&self) -> Option<BorrowedFd<'_>> {
        match &self.inner {
            Inner::Socket(fd) => Some(fd.as_fd()),
            Inner::Datagram(d) => Some(d.fd()),
            _ => None,
        }
    }

    /// The datagram socket behind this endpoint, for senders that number datagrams in their
    /// own memory or hand several to the kernel at once (datagram transports only).
    pub fn datagram_socket(&self) -> Option<&datagram::DatagramSocket> {
        match &self.inner {
            Inner::Datagram(d) => Some(d),
            _ => None,
        }
    }

    /// Numbers the next datagrams from `first` on: an rr server's answer carries its request's
    /// numbers, so the client can tell it from a late answer to an earlier request.
    #[inline]
    pub fn answer_to(&self, first: u32) {
        if let Inner::Datagram(d) = &self.inner {
            d.number_from(first);
        }
    }

    /// Datagrams sent so far (datagram transports only).
    pub fn datagrams_sent(&self) -> Option<u64> {
        match &self.inner {
            Inner::Datagram(d) => Some(d.sent()),
            _ => None,
        }
    }

    /// One send(2) (no SIGPIPE), write(2), or copy into the ring.
    #[inline]
    pub fn write(&self, buf: &[u8]) -> io::Result<usize> {
        match &self.inner {
            Inner::Socket(fd) => socket::send(fd.as_fd(), buf, 0),
            Inner::Pipe { write, .. } => fdio::write(write.as_fd(), buf),
            Inner::Shm { tx, .. } => tx.write(buf),
            Inner::Datagram(d) => d.send(&[IoSlice::new(buf)]),
        }
    }

    /// One sendmsg(2), writev(2), or one gather copy into the ring (published once).
    #[inline]
    pub fn write_vectored(&self, iov: &[IoSlice<'_>]) -> io::Result<usize> {
        match &self.inner {
            Inner::Socket(fd) => socket::sendmsg(fd.as_fd(), iov, 0),
            Inner::Pipe { write, .. } => fdio::writev(write.as_fd(), iov),
            Inner::Shm { tx, .. } => tx.write_vectored(iov),
            Inner::Datagram(d) => d.send(iov),
        }
    }

    /// One recv(2), read(2) or copy out of the ring; `nonblocking` asks MSG_DONTWAIT of a
    /// socket and WouldBlock of an empty ring (pipes were opened O_NONBLOCK by the connector).
    /// A datagram socket returns one datagram, or WouldBlock after its receive timeout.
    #[inline]
    pub fn read(&self, buf: &mut [u8], nonblocking: bool) -> io::Result<usize> {
        let flags = if nonblocking { socket::MSG_DONTWAIT } else { 0 };
        match &self.inner {
            Inner::Socket(fd) => socket::recv(fd.as_fd(), buf, flags),
            Inner::Datagram(d) => socket::recv(d.fd(), buf, flags),
            Inner::Pipe { read, .. } => fdio::read(read.as_fd(), buf),
            Inner::Shm { rx, .. } => rx.read(buf, nonblocking),
        }
    }

    /// No more data from this side: the peer's reads end with EOF.
    pub fn finish_writing(&self) -> io::Result<()> {
        match &self.inner {
            Inner::Socket(fd) => socket::shutdown(fd.as_fd(), socket::SHUT_WR),
            Inner::Pipe { write, .. } => fdio::retire(write.as_fd()),
            Inner::Shm { tx, .. } => {
                tx.close();
                Ok(())
            }
            Inner::Datagram(d) => d.send_end_marker(),
        }
    }

    /// Ends the flow from outside (a failed side, the watchdog): blocked calls on either side
    /// return.
    pub fn abort(&self) {
        match &self.inner {
            Inner::Socket(fd) => {
                let _ = socket::shutdown(fd.as_fd(), socket::SHUT_RDWR);
            }
            Inner::Pipe { read, write } => {
                let _ = fdio::retire(write.as_fd());
                let _ = fdio::retire(read.as_fd());
            }
            Inner::Shm { rx, tx } => {
                tx.close();
                rx.close();
            }
            Inner::Datagram(d) => {
                let _ = socket::shutdown(d.fd(), socket::SHUT_RDWR);
            }
        }
    }
}

/// One flow: the sender (client) end, the receiver (server) end, and how many bytes the
/// sender's kernel side can hold (which bounds zero-copy buffers in flight).
pub struct FlowEnds {
    pub sender: Endpoint,
    pub receiver: Endpoint,
    pub send_buffer: usize,
}

pub trait FlowConnector {
    /// Opens `flows` connected flows with `options` applied.
    fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowEnds>>;
    /// Where the flows run, as the output states it.
    fn describe(&self) -> String;
}

/// One flow of a placement with no receiving side (`--sink`): its sending end, and how many
/// bytes that end can hold in the kernel.
pub struct SendingEnd {
    pub sender: Endpoint,
    pub send_buffer: usize,
}

/// What a `FlowConnector` is for flows without a receiving end: the sink's.
pub trait SinkConnector {
    /// Opens the sending ends of `flows` flows with `options` applied.
    fn connect_senders(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<SendingEnd>>;
    /// Where the flows run, as the output states it.
    fn describe(&self) -> String;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_names_round_trip_and_unknown_ones_are_refused() {
        for t in Transport::ALL {
            assert_eq!(t.name().parse::<Transport>().unwrap(), t);
        }
        let err = "sctp".parse::<Transport>().unwrap_err().0;
        assert!(
            err.contains("tcp, unix, pipe, shm, udp, unix-dgram"),
            "{err}"
        );
    }
}
