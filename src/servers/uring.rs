//! The io_uring server: one thread, one ring; multishot accept (single-shot where the kernel
//! lacks it), then per connection a Recv until a whole request is in and a Send of the echo,
//! looping on short sends. Buffers live in the ring wrapper (`sys::echo_ring`) while lent.
use super::ServerStats;
use crate::sys::echo_ring::{Completion, EchoRing};
use std::io;
use std::net::TcpListener;
use std::os::fd::AsFd;
use std::sync::Arc;

/// Submission slots: enough to arm a Recv for many connections per submit.
const RING_ENTRIES: u32 = 4096;

pub fn start(listener: TcpListener, size: usize, stats: &Arc<ServerStats>) -> io::Result<()> {
    let shared = Arc::clone(stats);
    super::spawn_server_thread("server-0", stats, move || serve(&listener, size, &shared))
}

/// Per connection: bytes received of the current request, bytes of its echo sent.
#[derive(Clone, Copy, Default)]
struct Progress {
    filled: usize,
    sent: usize,
}

fn serve(listener: &TcpListener, size: usize, stats: &ServerStats) -> io::Result<()> {
    let mut ring = EchoRing::new(RING_ENTRIES, size)?;
    ring.accept(listener.as_fd())?;
    let mut progress: Vec<Progress> = Vec::new();
    loop {
        ring.submit_and_wait()?;
        while let Some(completion) = ring.next_completion() {
            match completion {
                Completion::Accepted { slot, rearm } => {
                    if rearm {
                        ring.accept(listener.as_fd())?;
                    }
                    match slot {
                        Ok(slot) => {
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
