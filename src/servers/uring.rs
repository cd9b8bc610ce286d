//! The io_uring server: one thread, one ring; multishot accept (single-shot where the kernel
//! lacks it), then per connection a Recv until a whole request is in and a Send of the echo,
//! looping on short sends. Buffers live in the ring wrapper (`sys::echo_ring`) while lent.
//! Each accepted connection passes the point's door before it gets a slot and a buffer; once
//! the door's count is in, the listener is shut and the accept is not armed again.
use super::door::{Doorkeeper, Entry};
use super::ServerStats;
use crate::sys::echo_ring::{Completion, EchoRing};
use crate::sys::socket;
use std::io;
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

/// Submission slots: enough to arm a Recv for many connections per submit.
const RING_ENTRIES: u32 = 4096;

pub fn start(
    (listener, door): (TcpListener, Arc<Doorkeeper>),
    size: usize,
    stats: &Arc<ServerStats>,
) -> io::Result<()> {
    let shared = Arc::clone(stats);
    super::spawn_server_thread("server-0", stats, move || {
        serve((&listener, &door), size, &shared)
    })
}

/// What the door says of an accepted socket: the socket back when it is let in, with whether
/// it was the last (the listener is then shut); `None` when it was closed here.
fn let_in(fd: OwnedFd, door: &Doorkeeper, listener: &TcpListener) -> Option<OwnedFd> {
    let stream = TcpStream::from(fd);
    let entry = match stream.peer_addr() {
        Ok(from) => door.entry(from.ip()),
        // Already reset by its peer: nothing to serve.
        Err(_) => Entry::Away,
    };
    if entry == Entry::Last {
        let _ = socket::shutdown(listener.as_fd(), socket::SHUT_RDWR);
    }
    (entry != Entry::Away).then(|| OwnedFd::from(stream))
}

/// Per connection: bytes received of the current request, bytes of its echo sent.
#[derive(Clone, Copy, Default)]
struct Progress {
    filled: usize,
    sent: usize,
}

/// A new connection the door let in: a slot, a buffer, and a Recv armed; an accept's error is
/// recorded, unless the listener was shut on purpose (`shut`) or the kernel lacks multishot.
fn accepted(
    ring: &mut EchoRing,
    fd: io::Result<Option<OwnedFd>>,
    shut: bool,
    progress: &mut Vec<Progress>,
    stats: &ServerStats,
) -> io::Result<()> {
    match fd {
        Ok(None) => {}
        Err(_) if shut => {}
        Ok(Some(fd)) => {
            let slot = ring.adopt(fd);
            stats.accepted();
            if progress.len() <= slot {
                progress.resize(slot + 1, Progress::default());
            }
            progress[slot] = Progress::default();
            ring.recv(slot, 0)?;
        }
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
        Err(e) => stats.error(format!("io_uring accept failed: {e}")),
    }
    Ok(())
}

fn serve(
    (listener, door): (&TcpListener, &Doorkeeper),
    size: usize,
    stats: &ServerStats,
) -> io::Result<()> {
    let mut ring = EchoRing::new(RING_ENTRIES, size)?;
    ring.accept(listener.as_fd())?;
    let mut progress: Vec<Progress> = Vec::new();
    loop {
        ring.submit_and_wait()?;
        while let Some(completion) = ring.next_completion() {
            match completion {
                Completion::Accepted { fd, rearm } => {
                    // Once shut, the listener's accept only fails: it is not armed again.
                    if rearm && !door.is_shut() {
                        ring.accept(listener.as_fd())?;
                    }
                    let fd = fd.map(|fd| let_in(fd, door, listener));
                    accepted(&mut ring, fd, door.is_shut(), &mut progress, stats)?;
                }
                Completion::Received { slot, bytes } => match bytes {
                    Ok(0) | Err(_) => ring.close(slot),
                    Ok(n) => {
                        let p = &mut progress[slot];
                        p.filled += n;
                        if p.filled < size {
                            ring.recv(slot, p.filled)?;
                        } else {
                            ring.send(slot, 0, size)?;
                        }
                    }
                },
                Completion::Sent { slot, bytes } => match bytes {
                    Ok(0) | Err(_) => ring.close(slot),
                    Ok(n) => {
                        let p = &mut progress[slot];
                        p.sent += n;
                        if p.sent < size {
                            ring.send(slot, p.sent, size)?;
                        } else {
                            *p = Progress::default();
                            ring.recv(slot, 0)?;
                        }
                    }
                },
            }
        }
    }
}
