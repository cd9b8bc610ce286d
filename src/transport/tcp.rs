//! TCP flows over loopback (127.0.0.1), both sides in this process.
use super::{Endpoint, FlowConnector, FlowEnds, SocketOptions};
use crate::sys::socket;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;

pub struct Loopback;

/// One connected loopback TCP pair (client, server) with no options: what the run-time probes
/// try a kernel feature on.
pub fn probe_pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let client = TcpStream::connect(listener.local_addr()?)?;
    let (server, _) = listener.accept()?;
    Ok((client, server))
}

impl FlowConnector for Loopback {
    fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowEnds>> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        tcp_flows(flows, options, &listener, |addr| connect(addr, options))
    }

    fn describe(&self) -> String {
        "loopback (127.0.0.1), both sides in one process".into()
    }
}

/// Opens `flows` flows to `listener` (the receiving ends), each sender made by `connect`, with
/// the run's options on both ends. Every placement shares this; only where the listener and
/// the connecting sockets are created differs.
pub fn tcp_flows(
    flows: usize,
    options: SocketOptions,
    listener: &TcpListener,
    connect: impl Fn(SocketAddr) -> io::Result<TcpStream>,
) -> io::Result<Vec<FlowEnds>> {
    let addr = listener.local_addr()?;
    if let Some(mss) = options.tcp_maxseg {
        // Read from the listener when a SYN arrives: every flow accepted below announces it.
        set_maxseg(listener.as_fd(), mss)?;
    }
    // On the listener too before any SYN: each accepted end inherits it with its window.
    options.buffers.apply(listener.as_fd())?;
    (0..flows)
        .map(|_| {
            // Connect then accept, one at a time, so flow i's two ends pair up.
            let sender = connect(addr)?;
            let (receiver, _) = listener.accept()?;
            apply(&sender, options.nodelay, options.zerocopy_sender)?;
            apply(&receiver, options.nodelay, options.zerocopy_receiver)?;
            let send_buffer = max_send_buffer(&sender);
            Ok(FlowEnds {
                sender: Endpoint::socket(sender),
                receiver: Endpoint::socket(receiver),
                send_buffer,
            })
        })
        .collect()
}

/// A TCP connection to `addr` with the options that must precede the handshake.
pub fn connect(addr: SocketAddr, options: SocketOptions) -> io::Result<TcpStream> {
    if options.tcp_maxseg.is_none() && !options.buffers.is_set() {
        return TcpStream::connect(addr);
    }
    socket::connect_tcp(addr, |fd| {
        if let Some(mss) = options.tcp_maxseg {
            set_maxseg(fd, mss)?;
        }
        options.buffers.apply(fd)
    })
}

fn set_maxseg(fd: std::os::fd::BorrowedFd<'_>, mss: u32) -> io::Result<()> {
    socket::set_int_option(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, mss as i32)
        .map_err(|e| io::Error::new(e.kind(), format!("setting TCP_MAXSEG {mss}: {e}")))
}

/// The TCP_MAXSEG that makes every full segment carry `pages` whole 4096-byte pages of
/// payload: the option bounds the segment with its TCP options, and timestamps (when
/// net.ipv4.tcp_timestamps is on, as on both ends of a loopback flow) take 12 bytes of it.
pub fn page_multiple_maxseg(pages: u32) -> u32 {
    let timestamps = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_timestamps")
        .map(|t| t.trim() != "0")
        .unwrap_or(true);
    pages * 4096 + if timestamps { 12 } else { 0 }
}

/// The payload of a full segment on this connection (TCP_MAXSEG read back: the MSS in use).
pub fn segment_payload(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<u32> {
    socket::get_int_option(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG).map(|v| v.max(0) as u32)
}

/// TCP_NODELAY as asked, and SO_ZEROCOPY on an end that sends with MSG_ZEROCOPY.
pub fn apply(stream: &TcpStream, nodelay: bool, zerocopy: bool) -> io::Result<()> {
    stream.set_nodelay(nodelay)?;
    if zerocopy {
        socket::enable_zerocopy(stream.as_fd()).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("SO_ZEROCOPY not supported on this socket: {e}"),
            )
        })?;
    }
    Ok(())
}

/// The largest send buffer TCP autotuning may grow to (third field of tcp_wmem), which bounds
/// how many bytes of a flow the kernel can hold at once.
pub fn max_send_buffer(stream: &TcpStream) -> usize {
    let autotune_max = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem")
        .ok()
        .and_then(|t| t.split_whitespace().nth(2)?.parse::<usize>().ok());
    let current = socket::get_int_option(stream.as_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF)
        .map(|v| v.max(0) as usize)
        .unwrap_or(0);
    autotune_max.unwrap_or(0).max(current).max(64 << 10)
}
