//! `--pattern crr`: each transaction connects, sends the request, reads the response and
//! closes (netperf's TCP_CRR, neper's tcp_crr), over tcp or unix on this host. Each flow has
//! its own listener; the client closes first, so TIME_WAIT (RFC 9293 §3.6) lands on the
//! client's ports, and the client counts them at the end in /proc/net/tcp{,6}. Per
//! transaction the client reads the clock four times (start, connected, answered, closed) to
//! split it; nothing else is added to the syscalls: no allocation, no formatting.
use crate::sys::socket;
use crate::transport::{Endpoint, FlowEnds, Transport};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixListener, UnixStream};

/// What one side of a crr flow counted, over all phases (the split only over the window).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CrrStats {
    /// Client: transactions completed. Server: requests answered.
    pub transactions: u64,
    /// Server: connections accepted (one per request when nothing is reused).
    pub accepts: u64,
    /// Client: transactions inside the measured window, which the split sums cover.
    pub timed: u64,
    /// Client, over `timed`: from the transaction's start until connect(2) returned.
    pub connect_ns: u64,
    /// Client, over `timed`: from connected until the first bytes of the response were read
    /// (the request's way to the server, the server's work, the response's first bytes back).
    #[serde(default)]
    pub first_byte_ns: u64,
    /// Client, over `timed`: from connected until the whole response was read.
    pub response_ns: u64,
    /// Client, over `timed`: close(2), and the bookkeeping before the next transaction.
    pub close_ns: u64,
    /// Client (tcp): SO_LINGER 0 made each close a reset.
    pub linger_zero: bool,
    /// Client (tcp): sockets in TIME_WAIT towards this flow's listener when the run ended,
    /// less those there before it started (an earlier listener's on the same port number).
    pub time_wait_at_end: Option<u64>,
}

/// Where a crr client connects.
pub enum CrrTarget {
    Tcp(SocketAddr),
    Unix(UnixAddr),
}

/// A crr server's listening socket.
pub enum CrrListener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

/// One listener per flow: both ends of the returned flow hold it (the server accepts on it;
/// the client's copy is what it shuts down to end the server's accept, and what the watchdog
/// aborts).
pub fn listen(transport: Transport, flows: usize) -> io::Result<Vec<FlowEnds>> {
    (0..flows)
        .map(|flow| {
            let listener: std::os::fd::OwnedFd = match transport {
                Transport::Tcp => TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.into(),
                _ => {
                    // Unique per process, flow and moment, so runs side by side never collide.
                    let nanos = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos());
                    let name = format!("bytepath-crr-{}-{flow}-{nanos}", std::process::id());
                    UnixListener::bind_addr(&UnixAddr::from_abstract_name(name)?)?.into()
                }
            };
            Ok(FlowEnds {
                sender: Endpoint::socket(listener.try_clone()?),
                receiver: Endpoint::socket(listener),
                send_buffer: 64 << 10,
            })
        })
        .collect()
}

/// Where a crr run's sides are, as the output states it.
pub fn describe(transport: Transport) -> String {
    match transport {
        Transport::Tcp => "loopback (127.0.0.1), both sides in one process, a new TCP connection per transaction",
        _ => "an AF_UNIX stream listener (abstract name), both sides in one process, a new connection per transaction",
    }
    .into()
}

/// The client's target and the server's listener, from a flow end made by `listen`.
pub fn sides_of(transport: Transport, ep: &Endpoint) -> io::Result<(CrrTarget, CrrListener)> {
    let fd = ep
        .socket_fd()
        .ok_or_else(|| io::Error::other("a crr flow end is a listening socket"))?
        .try_clone_to_owned()?;
    Ok(match transport {
        Transport::Tcp => {
            let listener = TcpListener::from(fd);
            (
                CrrTarget::Tcp(listener.local_addr()?),
                CrrListener::Tcp(listener),
            )
        }
        _ => {
            let listener = UnixListener::from(fd);
            (
                CrrTarget::Unix(listener.local_addr()?),
                CrrListener::Unix(listener),
            )
        }
    })
}

impl CrrTarget {
    /// A new connection: socket(2) and connect(2), then the asked options.
    #[inline]
    pub(super) fn connect(&self, linger_zero: bool, nodelay: bool) -> io::Result<Endpoint> {
        match self {
            CrrTarget::Tcp(addr) => {
                let stream = TcpStream::connect(addr)?;
                if linger_zero {
                    socket::set_linger_zero(stream.as_fd())?;
                }
                if nodelay {
                    stream.set_nodelay(true)?;
                }
                Ok(Endpoint::socket(stream))
            }
            CrrTarget::Unix(addr) => Ok(Endpoint::socket(UnixStream::connect_addr(addr)?)),
        }
    }

    pub(super) fn port(&self) -> Option<u16> {
        match self {
            CrrTarget::Tcp(addr) => Some(addr.port()),
            CrrTarget::Unix(_) => None,
        }
    }
}

impl CrrListener {
    #[inline]
    pub(super) fn accept(&self, nodelay: bool) -> io::Result<Endpoint> {
        match self {
            CrrListener::Tcp(l) => {
                let (stream, _) = l.accept()?;
                if nodelay {
                    stream.set_nodelay(true)?;
                }
                Ok(Endpoint::socket(stream))
            }
            CrrListener::Unix(l) => Ok(Endpoint::socket(l.accept()?.0)),
        }
    }
}

/// How a crr client opens its connections.
pub struct CrrClient {
    pub target: CrrTarget,
    pub linger_zero: bool,
    pub nodelay: bool,
    /// Sockets in TIME_WAIT towards the target's port before the run (an earlier listener's
    /// on the same port number), which the count at the end leaves out.
    pub time_wait_before: Option<u64>,
}

/// net.ipv4.ip_local_port_range: the ports connect(2) may pick from.
pub fn port_range() -> Option<[u32; 2]> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut parts = text.split_whitespace().map(|p| p.parse::<u32>().ok());
    Some([parts.next()??, parts.next()??])
}

/// net.ipv4.tcp_tw_reuse: 0 never, 1 always, 2 loopback only (reuse of TIME_WAIT ports).
pub fn tw_reuse() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_tw_reuse")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Sockets in TIME_WAIT (state 06) whose remote port is `port`, in /proc/net/tcp and tcp6;
/// `None` when neither could be read.
pub fn time_wait_towards(port: u16) -> Option<u64> {
    let tables: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .collect();
    (!tables.is_empty()).then(|| tables.iter().map(|t| count_time_wait(t, port)).sum())
}

fn count_time_wait(table: &str, port: u16) -> u64 {
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let remote_port = fields
                .get(2)
                .and_then(|r| r.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            fields.get(3) == Some(&"06") && remote_port == Some(port)
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_wait_counts_only_state_06_towards_the_port() {
        let table = "  sl  local_address rem_address   st tx_queue\n\
   0: 0100007F:9C40 0100007F:1F90 06 00000000:00000000\n\
   1: 0100007F:9C41 0100007F:1F90 01 00000000:00000000\n\
   2: 0100007F:9C42 0100007F:1F91 06 00000000:00000000\n\
   3: 0100007F:9C43 0100007F:1F90 06 00000000:00000000\n";
        assert_eq!(count_time_wait(table, 0x1F90), 2);
        assert_eq!(count_time_wait(table, 0x1F92), 0);
    }
}
