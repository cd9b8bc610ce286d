//! The event-driven servers: select(2), poll(2) and epoll(7) (level-triggered) share one
//! per-connection state machine: read until a whole request of --size bytes is in, write it
//! back, handling partial reads and writes; a connection that stalls only waits for its own
//! readiness and never holds up the others. Each accepted connection passes the point's door
//! first (one turned away is closed before its buffer is made); once the door's count is in,
//! the listener is shut and every thread takes it out of its set.
use super::door::{Doorkeeper, Entry};
use super::ServerStats;
use crate::sys::events::{self, Epoll, EventList, FdSet, PollFd};
use crate::sys::socket;
use std::io;
use std::net::TcpListener;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;

/// Which readiness call a server uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    Select,
    Poll,
    Epoll,
}

/// Where bytes come from and go to; a socket in the servers, a script in tests.
pub trait ByteStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    fn write(&mut self, buf: &[u8]) -> io::Result<usize>;
}

/// A non-blocking socket as a byte stream.
pub struct Socket<'a>(pub BorrowedFd<'a>);

impl ByteStream for Socket<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        socket::recv(self.0, buf, 0)
    }
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        socket::send(self.0, buf, 0)
    }
}

/// What a connection waits for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Read,
    Write,
    /// The peer closed or failed: drop the connection.
    Close,
}

/// One connection's echo progress over a buffer allocated once, at accept.
pub struct EchoState {
    buffer: Box<[u8]>,
    filled: usize,
    written: usize,
}

impl EchoState {
    pub fn new(size: usize) -> EchoState {
        EchoState {
            buffer: vec![0u8; size].into_boxed_slice(),
            filled: 0,
            written: 0,
        }
    }

    /// Moves as far as the stream allows without blocking. After a whole echo it returns
    /// `Read` without reading again, so one busy client cannot starve the others; level-
    /// triggered readiness brings it back if more is waiting.
    pub fn advance(&mut self, io: &mut impl ByteStream) -> Want {
        let size = self.buffer.len();
        loop {
            if self.filled < size {
                match io.read(&mut self.buffer[self.filled..]) {
                    Ok(0) => return Want::Close,
                    Ok(n) => self.filled += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Want::Read,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return Want::Close,
                }
            } else {
                match io.write(&self.buffer[self.written..]) {
                    Ok(n) => {
                        self.written += n;
                        if self.written == size {
                            self.filled = 0;
                            self.written = 0;
                            return Want::Read;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Want::Write,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return Want::Close,
                }
            }
        }
    }
}

/// A served connection: its socket, its echo state, and what it is registered for.
struct Connection {
    fd: OwnedFd,
    echo: EchoState,
    want: Want,
}

impl Connection {
    fn advance(&mut self) -> Want {
        self.want = self.echo.advance(&mut Socket(self.fd.as_fd()));
        self.want
    }
}

/// Whether the listener still takes connections, after `accept_pending`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listening {
    Open,
    /// The door's count is in and the listener is shut: take it out of the set.
    Shut,
}

/// Accepts every pending connection the door lets in (non-blocking, TCP_NODELAY) and hands
/// each to `admit`; closes those it turns away.
fn accept_pending(
    (listener, door): (&TcpListener, &Doorkeeper),
    stats: &ServerStats,
    mut admit: impl FnMut(OwnedFd) -> io::Result<()>,
) -> io::Result<Listening> {
    loop {
        if door.is_shut() {
            return Ok(Listening::Shut);
        }
        match listener.accept() {
            Ok((stream, from)) => {
                let entry = door.entry(from.ip());
                if entry == Entry::Away {
                    continue;
                }
                stream.set_nonblocking(true)?;
                stream.set_nodelay(true)?;
                stats.accepted();
                admit(OwnedFd::from(stream))?;
                if entry == Entry::Last {
                    // Pending and later connections are refused by the kernel from here.
                    socket::shutdown(listener.as_fd(), socket::SHUT_RDWR)?;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Listening::Open),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Starts `threads` server threads (epoll only may have more than one; they share the
/// listener through EPOLLEXCLUSIVE, each serving the connections it accepted).
pub fn start(
    kind: Readiness,
    (listener, door): (TcpListener, Arc<Doorkeeper>),
    size: usize,
    threads: usize,
    stats: &Arc<ServerStats>,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = Arc::new(listener);
    for i in 0..threads {
        let listener = Arc::clone(&listener);
        let door = Arc::clone(&door);
        let shared = Arc::clone(stats);
        let exclusive = threads > 1;
        super::spawn_server_thread(&format!("server-{i}"), stats, move || {
            let at = (&*listener, &*door);
            match kind {
                Readiness::Select => serve_select(at, size, &shared),
                Readiness::Poll => serve_poll(at, size, &shared),
                Readiness::Epoll => serve_epoll(at, size, exclusive, &shared),
            }
        })?;
    }
    Ok(())
}

const LISTENER: u64 = u64::MAX;

/// Files a new connection under its descriptor number (descriptors are small and dense, so
/// the table is a vector indexed by them).
fn keep(connections: &mut Vec<Option<Connection>>, fd: OwnedFd, size: usize) {
    let raw = fd.as_raw_fd() as usize;
    if connections.len() <= raw {
        connections.resize_with(raw + 1, || None);
    }
    connections[raw] = Some(Connection {
        fd,
        echo: EchoState::new(size),
        want: Want::Read,
    });
}

fn interest(want: Want) -> u32 {
    match want {
        Want::Write => events::WRITABLE,
        _ => events::READABLE,
    }
}

fn serve_epoll(
    (listener, door): (&TcpListener, &Doorkeeper),
    size: usize,
    exclusive: bool,
    stats: &ServerStats,
) -> io::Result<()> {
    let epoll = Epoll::new()?;
    let flags = if exclusive { events::EXCLUSIVE } else { 0 };
    epoll.add(listener.as_fd(), events::READABLE | flags, LISTENER)?;
    // Indexed by descriptor number: the kernel hands out the lowest free one, so this stays
    // as small as the number of open connections.
    let mut connections: Vec<Option<Connection>> = Vec::new();
    let mut list = EventList::with_capacity(1024);
    loop {
        let n = epoll.wait(&mut list, -1)?;
        for i in 0..n {
            let (token, _) = list.get(i);
            if token == LISTENER {
                let listening = accept_pending((listener, door), stats, |fd| {
                    epoll.add(fd.as_fd(), events::READABLE, fd.as_raw_fd() as u64)?;
                    keep(&mut connections, fd, size);
                    Ok(())
                })?;
                if listening == Listening::Shut {
                    let _ = epoll.delete(listener.as_fd());
                }
                continue;
            }
            let slot = token as usize;
            let Some(conn) = connections.get_mut(slot).and_then(Option::as_mut) else {
                continue;
            };
            let before = conn.want;
            match conn.advance() {
                Want::Close => {
                    let _ = epoll.delete(conn.fd.as_fd());
                    connections[slot] = None;
                }
                want if want != before => {
                    epoll.modify(conn.fd.as_fd(), interest(want), token)?;
                }
                _ => {}
            }
        }
    }
}

fn serve_poll(
    (listener, door): (&TcpListener, &Doorkeeper),
    size: usize,
    stats: &ServerStats,
) -> io::Result<()> {
    // Entry 0 is the listener; entry i + 1 is connections[i].
    let mut set: Vec<PollFd> = vec![events::poll_entry(listener.as_raw_fd(), events::POLLIN)];
    let mut connections: Vec<Connection> = Vec::new();
    loop {
        events::poll(&mut set, -1)?;
        // Backwards, so swap_remove only moves entries already looked at.
        for i in (1..set.len()).rev() {
            if set[i].revents == 0 {
                continue;
            }
            match connections[i - 1].advance() {
                Want::Close => {
                    set.swap_remove(i);
                    connections.swap_remove(i - 1);
                }
                want => set[i].events = poll_events(want),
            }
        }
        if set[0].revents != 0 {
            let listening = accept_pending((listener, door), stats, |fd| {
                set.push(events::poll_entry(fd.as_raw_fd(), events::POLLIN));
                connections.push(Connection {
                    fd,
                    echo: EchoState::new(size),
                    want: Want::Read,
                });
                Ok(())
            })?;
            if listening == Listening::Shut {
                // A negative descriptor is one poll(2) skips.
                set[0] = events::poll_entry(-1, 0);
            }
        }
    }
}

fn poll_events(want: Want) -> i16 {
    match want {
        Want::Write => events::POLLOUT,
        _ => events::POLLIN,
    }
}

fn serve_select(
    (listener, door): (&TcpListener, &Doorkeeper),
    size: usize,
    stats: &ServerStats,
) -> io::Result<()> {
    let listen_fd = listener.as_raw_fd();
    let mut listening = Listening::Open;
    let mut connections: Vec<Option<Connection>> = Vec::new();
    let mut read = FdSet::new();
    let mut write = FdSet::new();
    loop {
        read.clear();
        write.clear();
        let mut limit = 0;
        if listening == Listening::Open {
            read.insert(listen_fd).map_err(beyond)?;
            limit = listen_fd as usize + 1;
        }
        for (fd, conn) in connections.iter().enumerate() {
            let Some(conn) = conn else { continue };
            // Admission below guarantees fd < FD_SETSIZE.
            let set = if conn.want == Want::Write {
                &mut write
            } else {
                &mut read
            };
            set.insert(fd as RawFd).map_err(beyond)?;
            limit = limit.max(fd + 1);
        }
        events::select(limit, &mut read, &mut write, None)?;
        for (fd, slot) in connections.iter_mut().enumerate() {
            if !(read.contains(fd as RawFd) || write.contains(fd as RawFd)) {
                continue;
            }
            if let Some(conn) = slot.as_mut() {
                if conn.advance() == Want::Close {
                    *slot = None;
                }
            }
        }
        if listening == Listening::Open && read.contains(listen_fd) {
            listening = accept_pending((listener, door), stats, |fd| {
                let raw = fd.as_raw_fd();
                if raw as usize >= events::FD_SETSIZE {
                    // Dropping the socket closes it: the client sees the refusal at once.
                    stats.error(events::BeyondFdSetSize(raw).to_string());
                    return Ok(());
                }
                keep(&mut connections, fd, size);
                Ok(())
            })?;
        }
    }
}

fn beyond(e: events::BeyondFdSetSize) -> io::Error {
    io::Error::other(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A stream that hands out reads and takes writes in the chunk sizes scripted.
    struct Scripted {
        incoming: Vec<u8>,
        read_chunks: VecDeque<usize>,
        write_chunks: VecDeque<usize>,
        written: Vec<u8>,
    }

    impl ByteStream for Scripted {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.read_chunks.pop_front() {
                None => Err(io::ErrorKind::WouldBlock.into()),
                Some(0) => Ok(0),
                Some(n) => {
                    let n = n.min(buf.len()).min(self.incoming.len());
                    buf[..n].copy_from_slice(&self.incoming[..n]);
                    self.incoming.drain(..n);
                    Ok(n)
                }
            }
        }
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            match self.write_chunks.pop_front() {
                None => Err(io::ErrorKind::WouldBlock.into()),
                Some(n) => {
                    let n = n.min(buf.len());
                    self.written.extend_from_slice(&buf[..n]);
                    Ok(n)
                }
            }
        }
    }

    fn scripted(incoming: &[u8], reads: &[usize], writes: &[usize]) -> Scripted {
        Scripted {
            incoming: incoming.to_vec(),
            read_chunks: reads.iter().copied().collect(),
            write_chunks: writes.iter().copied().collect(),
            written: Vec::new(),
        }
    }

    #[test]
    fn a_request_read_in_pieces_is_echoed_whole_through_partial_writes() {
        let request: Vec<u8> = (0..10).collect();
        let mut io = scripted(&request, &[3, 4], &[]);
        let mut echo = EchoState::new(10);
        assert_eq!(
            echo.advance(&mut io),
            Want::Read,
            "7 of 10 bytes: wait for more"
        );
        io.read_chunks.push_back(3);
        io.write_chunks.extend([4, 1]);
        assert_eq!(
            echo.advance(&mut io),
            Want::Write,
            "5 of 10 written: wait to write"
        );
        assert_eq!(io.written, request[..5]);
        io.write_chunks.push_back(100);
        assert_eq!(
            echo.advance(&mut io),
            Want::Read,
            "whole echo out: read the next"
        );
        assert_eq!(io.written, request);
    }

    #[test]
    fn the_next_request_starts_at_the_buffer_start() {
        let two: Vec<u8> = (0..8).collect();
        let mut io = scripted(&two, &[4], &[4]);
        let mut echo = EchoState::new(4);
        assert_eq!(echo.advance(&mut io), Want::Read);
        io.read_chunks.push_back(4);
        io.write_chunks.push_back(4);
        assert_eq!(echo.advance(&mut io), Want::Read);
        assert_eq!(io.written, two);
    }

    #[test]
    fn a_peer_that_closes_mid_request_closes_the_connection() {
        let mut io = scripted(&[1, 2], &[2, 0], &[]);
        let mut echo = EchoState::new(4);
        assert_eq!(echo.advance(&mut io), Want::Close);
        assert!(io.written.is_empty(), "half a request is never echoed");
    }
}
