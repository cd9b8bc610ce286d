//! What carries bytes between the two sides. The engine asks a `FlowConnector` for connected
//! flows and works on `Endpoint`s, whatever is behind them: a TCP or Unix socket (one
//! descriptor, send/recv with flags) or a pair of pipes (a read end and a write end,
//! read/write). Namespaces and remote hosts plug in here later.
pub mod local;
pub mod tcp;

use crate::config::ConfigError;
use crate::sys::{fdio, socket};
use std::io::{self, IoSlice};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TCP over loopback.
    Tcp,
    /// A connected AF_UNIX stream socket pair.
    Unix,
    /// Two pipes per flow: one each way.
    Pipe,
}

impl Transport {
    pub const ALL: [Transport; 3] = [Transport::Tcp, Transport::Unix, Transport::Pipe];

    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Unix => "unix",
            Transport::Pipe => "pipe",
        }
    }
}

impl std::str::FromStr for Transport {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Transport::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                ConfigError(format!(
                    "--transport {s:?}: unknown transport; allowed: tcp, unix, pipe"
                ))
            })
    }
}

/// The connector for a transport (both sides in this process).
pub fn connector(transport: Transport) -> Box<dyn FlowConnector> {
    match transport {
        Transport::Tcp => Box::new(tcp::Loopback),
        Transport::Unix => Box::new(local::UnixPair),
        Transport::Pipe => Box::new(local::PipePair),
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
}

/// One side's end of a flow.
pub struct Endpoint {
    read: OwnedFd,
    /// The pipe this side writes into; `None` for a socket, which reads and writes one fd.
    write: Option<OwnedFd>,
}

impl Endpoint {
    pub fn socket(fd: impl Into<OwnedFd>) -> Endpoint {
        Endpoint {
            read: fd.into(),
            write: None,
        }
    }

    pub fn pipes(read: OwnedFd, write: OwnedFd) -> Endpoint {
        Endpoint {
            read,
            write: Some(write),
        }
    }

    pub fn is_socket(&self) -> bool {
        self.write.is_none()
    }

    pub fn read_fd(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }

    pub fn write_fd(&self) -> BorrowedFd<'_> {
        self.write.as_ref().unwrap_or(&self.read).as_fd()
    }

    /// One send(2) (no SIGPIPE) or write(2).
    #[inline]
    pub fn write(&self, buf: &[u8]) -> io::Result<usize> {
        match &self.write {
            None => socket::send(self.read.as_fd(), buf, 0),
            Some(w) => fdio::write(w.as_fd(), buf),
        }
    }

    /// One sendmsg(2) or writev(2) of a gather list.
    #[inline]
    pub fn write_vectored(&self, iov: &[IoSlice<'_>]) -> io::Result<usize> {
        match &self.write {
            None => socket::sendmsg(self.read.as_fd(), iov, 0),
            Some(w) => fdio::writev(w.as_fd(), iov),
        }
    }

    /// One recv(2) or read(2); `nonblocking` for sockets asks MSG_DONTWAIT (pipes were opened
    /// O_NONBLOCK by the connector when the run spins).
    #[inline]
    pub fn read(&self, buf: &mut [u8], nonblocking: bool) -> io::Result<usize> {
        match &self.write {
            None => socket::recv(
                self.read.as_fd(),
                buf,
                if nonblocking { socket::MSG_DONTWAIT } else { 0 },
            ),
            Some(_) => fdio::read(self.read.as_fd(), buf),
        }
    }

    /// No more data from this side: the peer's reads end with EOF.
    pub fn finish_writing(&self) -> io::Result<()> {
        match &self.write {
            None => socket::shutdown(self.read.as_fd(), socket::SHUT_WR),
            Some(w) => fdio::retire(w.as_fd()),
        }
    }

    /// Ends the flow from outside (a failed side, the watchdog): blocked calls on either side
    /// return.
    pub fn abort(&self) {
        match &self.write {
            None => {
                let _ = socket::shutdown(self.read.as_fd(), socket::SHUT_RDWR);
            }
            Some(w) => {
                let _ = fdio::retire(w.as_fd());
                let _ = fdio::retire(self.read.as_fd());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_names_round_trip_and_unknown_ones_are_refused() {
        for t in Transport::ALL {
            assert_eq!(t.name().parse::<Transport>().unwrap(), t);
        }
        assert!("shm"
            .parse::<Transport>()
            .unwrap_err()
            .0
            .contains("tcp, unix, pipe"));
    }

    #[test]
    fn every_connector_carries_bytes_both_ways_and_ends_with_eof() {
        for t in Transport::ALL {
            let flows = connector(t).connect(1, SocketOptions::default()).unwrap();
            let f = &flows[0];
            assert_eq!(f.sender.write(b"ping").unwrap(), 4, "{t:?}");
            let mut buf = [0u8; 8];
            assert_eq!(f.receiver.read(&mut buf, false).unwrap(), 4);
            assert_eq!(
                f.receiver
                    .write_vectored(&[IoSlice::new(b"po"), IoSlice::new(b"ng")])
                    .unwrap(),
                4
            );
            assert_eq!(f.sender.read(&mut buf, false).unwrap(), 4);
            assert_eq!(&buf[..4], b"pong");
            f.sender.finish_writing().unwrap();
            assert_eq!(f.receiver.read(&mut buf, false).unwrap(), 0, "{t:?}: EOF");
            assert!(f.send_buffer > 0);
        }
    }
}
