//! What the two senders that hand the kernel references to pages instead of bytes (`splice`:
//! vmsplice(2) + splice(2); `sendfile`: sendfile(2) from a memfd) share: their accounting, the
//! retry rule of one system call on a socket, and the one-shot probe.
//!
//! Neither copies at send time: the pipe, then the socket's skbs, reference the sender's pages
//! until the data is acknowledged and, on loopback, read. Rewriting those pages in place
//! changes bytes the receiver has not read yet, so a sender that changes its message
//! (`--verify`) must write every message into fresh pages (see the two senders).
use crate::sys::socket::{self, POLLOUT};
use crate::transport::Transport;
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsFd, BorrowedFd};

/// The sockets both send to: the pages go into a stream socket's queue.
pub(crate) const STREAM_SOCKETS: &[Transport] = &[Transport::Tcp, Transport::Unix];

/// Why both are bound to `STREAM_SOCKETS`.
pub(crate) const STREAM_SOCKETS_ONLY: &str = "splice and sendfile move pages into a stream socket";

/// Why neither carries `--pattern crr`.
pub(crate) const CRR_REFUSAL: &str = "splice and sendfile move a file's or pipe's pages into a \
     long-lived stream, not one request per connection";

/// Accounting of one `splice` or `sendfile` flow (or, summed, of a side).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SpliceStats {
    /// Messages handed to the kernel whole.
    pub messages: u64,
    /// splice: messages vmspliced with SPLICE_F_GIFT, which vmsplice(2) allows only for
    /// whole, page-aligned pages (the message size is a multiple of the page size).
    pub gifted_messages: u64,
    /// Messages first written into fresh pages (MADV_DONTNEED, or a hole punched in the
    /// memfd) because their content changed (`--verify`).
    pub fresh_page_messages: u64,
    /// splice: pipe-sized pieces the messages went through (one per message while the message
    /// fits the pipe). sendfile: 0.
    pub pieces: u64,
    /// System calls made to move the bytes (vmsplice + splice, or sendfile), retries included.
    pub calls: u64,
    /// Calls retried after EINTR or EAGAIN (EAGAIN waits for the socket to drain).
    pub retried_calls: u64,
    /// splice: the pipe's size as granted (F_SETPIPE_SZ); sendfile: 0.
    pub pipe_bytes: usize,
}

impl SpliceStats {
    pub fn add(&mut self, other: &SpliceStats) {
        self.messages += other.messages;
        self.gifted_messages += other.gifted_messages;
        self.fresh_page_messages += other.fresh_page_messages;
        self.pieces += other.pieces;
        self.calls += other.calls;
        self.retried_calls += other.retried_calls;
        self.pipe_bytes = self.pipe_bytes.max(other.pipe_bytes);
    }

    /// System calls per message.
    pub fn calls_per_message(&self) -> Option<f64> {
        (self.messages > 0).then(|| self.calls as f64 / self.messages as f64)
    }

    /// One line for a person (built once, at report time).
    pub fn summary(&self) -> String {
        let per = self
            .calls_per_message()
            .map_or("n/a".into(), |c| format!("{c:.2}"));
        let mut s = format!("{} messages, {per} calls per message", self.messages);
        if self.pipe_bytes > 0 {
            s += &format!(
                ", pipe {} B, {} pieces, {} gifted (SPLICE_F_GIFT)",
                self.pipe_bytes, self.pieces, self.gifted_messages
            );
        }
        if self.fresh_page_messages > 0 {
            s += &format!(", {} written into fresh pages", self.fresh_page_messages);
        }
        s
    }
}

/// The socket behind an endpoint; config allows these senders on tcp and unix only.
pub(crate) fn socket_of(ep: &crate::transport::Endpoint) -> io::Result<BorrowedFd<'_>> {
    ep.socket_fd().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::Unsupported,
            "splice and sendfile send to sockets only",
        )
    })
}

/// Runs one system call on `socket` until it moves something: EINTR is retried at once,
/// EAGAIN (a non-blocking socket that is full) after the socket polls writable. Counts the
/// calls and the retries in `stats`. A call that moves nothing is an error, not a loop.
#[inline]
pub(crate) fn moved(
    socket: BorrowedFd<'_>,
    stats: &mut SpliceStats,
    mut call: impl FnMut() -> io::Result<usize>,
) -> io::Result<usize> {
    loop {
        stats.calls += 1;
        match call() {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => stats.retried_calls += 1,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                stats.retried_calls += 1;
                socket::poll_one(socket, POLLOUT, 100)?;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Bytes each probe sends and checks: two pages and a bit, so whole and partial pages go.
const PROBE_BYTES: usize = 2 * 4096 + 24;

/// Tries `send` once on a loopback TCP pair: it must deliver `PROBE_BYTES` bytes of the probe
/// pattern (`probe_byte`), which the receiving socket then checks. `Err`: one line saying
/// which step failed.
pub(crate) fn probe_on_loopback(
    send: impl FnOnce(BorrowedFd<'_>, &[u8]) -> Result<(), String>,
) -> Result<(), String> {
    use std::io::Read;
    let pair = || -> io::Result<(TcpStream, TcpStream)> {
        let (client, server) = crate::transport::tcp::probe_pair()?;
        server.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
        Ok((client, server))
    };
    let (client, mut server) = pair().map_err(|e| format!("loopback TCP pair: {e}"))?;
    let data: Vec<u8> = (0..PROBE_BYTES).map(probe_byte).collect();
    send(client.as_fd(), &data)?;
    let mut got = vec![0u8; PROBE_BYTES];
    server
        .read_exact(&mut got)
        .map_err(|e| format!("receiving what was sent: {e}"))?;
    if got == data {
        Ok(())
    } else {
        Err("the bytes that arrived differ from those sent".into())
    }
}

fn probe_byte(i: usize) -> u8 {
    (i % 251) as u8
}

/// Test harness: one sender over a real socket pair, a reader thread checking every byte.
#[cfg(test)]
pub(crate) mod testing {
    use super::super::receive::Verifier;
    use super::super::{FlowContext, SendMechanism};
    use crate::sys::socket::set_int_option;
    use crate::transport::Endpoint;
    use std::io::Read;
    use std::net::{Ipv4Addr, TcpListener, TcpStream};
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    pub const FLOW: u32 = 3;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Pair {
        Tcp,
        Unix,
    }

    pub fn context(message_size: usize) -> FlowContext {
        FlowContext {
            flow: FLOW,
            message_size,
            fill_pattern: true,
            send_buffer: 1 << 20,
            queue_depth: 1,
            flush_each: false,
            framing: None,
        }
    }

    /// A connected pair: the sender's endpoint and the receiver's socket, whose SO_RCVBUF is
    /// `rcvbuf` if given (set on the listener, so TCP sizes its window from it).
    fn connect(pair: Pair, rcvbuf: Option<i32>) -> (Endpoint, Box<dyn Read + Send>) {
        let limit = |fd: std::os::fd::BorrowedFd<'_>| {
            if let Some(bytes) = rcvbuf {
                set_int_option(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, bytes).unwrap();
            }
        };
        match pair {
            Pair::Tcp => {
                let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
                limit(listener.as_fd());
                let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
                let (server, _) = listener.accept().unwrap();
                (Endpoint::socket(client), Box::new(server))
            }
            Pair::Unix => {
                let (a, b) = UnixStream::pair().unwrap();
                limit(b.as_fd());
                (Endpoint::socket(a), Box::new(b))
            }
        }
    }

    /// How the receiving side behaves.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct Reader {
        /// Sleeps this long before its first read.
        pub delay: Duration,
        /// SO_RCVBUF to ask for (the kernel doubles it).
        pub rcvbuf: Option<i32>,
    }

    /// Sends `messages` messages through `mech` over `pair`, closes, and returns what the
    /// reader's verifier saw (all of it: the reader reads to EOF).
    pub fn deliver(
        mech: &mut dyn SendMechanism,
        pair: Pair,
        message_size: usize,
        messages: u64,
        reader: Reader,
    ) -> Verifier {
        let (ep, mut rx) = connect(pair, reader.rcvbuf);
        let handle = std::thread::spawn(move || {
            std::thread::sleep(reader.delay);
            let mut verifier = Verifier::new(FLOW, message_size);
            let mut buf = vec![0u8; 256 << 10];
            loop {
                match rx.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => verifier.check(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => panic!("receiving: {e}"),
                }
            }
            verifier
        });
        for seq in 0..messages {
            mech.send_message(&ep, seq).expect("send_message");
        }
        ep.finish_writing().unwrap();
        handle.join().expect("reader thread")
    }

    /// Messages to send at `size` so a test moves a few MiB at most and at least 4 messages.
    pub fn messages_for(size: usize) -> u64 {
        ((4 << 20) / size).clamp(4, 2000) as u64
    }

    /// The sizes every sender must carry whole: 8 B, a page and a bit, the default pipe,
    /// 512 KiB, pipe-max-size and twice it (pieces).
    pub const SIZES: [usize; 6] = [8, 4096 + 24, 64 << 10, 512 << 10, 1 << 20, 2 << 20];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_add_up_and_read_as_one_line() {
        let mut a = SpliceStats {
            messages: 2,
            gifted_messages: 2,
            pieces: 4,
            calls: 8,
            pipe_bytes: 1 << 20,
            ..Default::default()
        };
        a.add(&SpliceStats {
            messages: 2,
            calls: 4,
            fresh_page_messages: 2,
            ..Default::default()
        });
        assert_eq!(a.messages, 4);
        assert_eq!(a.calls_per_message(), Some(3.0));
        let s = a.summary();
        assert!(s.contains("4 messages, 3.00 calls per message"), "{s}");
        assert!(
            s.contains("2 gifted") && s.contains("2 written into fresh pages"),
            "{s}"
        );
        assert_eq!(SpliceStats::default().calls_per_message(), None);
    }

    #[test]
    fn a_call_that_moves_nothing_is_an_error_and_interruptions_are_retried() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut stats = SpliceStats::default();
        let err = moved(a.as_fd(), &mut stats, || Ok(0)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WriteZero);
        let mut tries = 0;
        let n = moved(a.as_fd(), &mut stats, || {
            tries += 1;
            match tries {
                1 => Err(io::ErrorKind::Interrupted.into()),
                2 => Err(io::ErrorKind::WouldBlock.into()),
                _ => Ok(5),
            }
        })
        .unwrap();
        assert_eq!((n, stats.retried_calls, stats.calls), (5, 2, 4));
    }

    #[test]
    fn the_probe_harness_catches_wrong_bytes() {
        assert_eq!(
            probe_on_loopback(|fd, data| {
                crate::sys::socket::send(fd, data, 0).map_err(|e| e.to_string())?;
                Ok(())
            }),
            Ok(())
        );
        let err = probe_on_loopback(|fd, data| {
            let mut wrong = data.to_vec();
            wrong[7] ^= 1;
            crate::sys::socket::send(fd, &wrong, 0).map_err(|e| e.to_string())?;
            Ok(())
        })
        .unwrap_err();
        assert!(err.contains("differ"), "{err}");
    }
}
