//! The server's graceful end: SIGTERM or SIGINT (what Kubernetes and Ctrl-C send, also to a
//! container's PID 1) stops accepting, the run in progress is stopped at its next poll and its
//! client told why, and the server returns (exit 0) once every session has ended or a grace
//! has passed. The listener is polled so the loop sees the signal at once (poll(2) returns
//! EINTR; the handler has no SA_RESTART).
use crate::error::Error;
use crate::sys::events::{poll, poll_entry, POLLIN};
use crate::sys::signals;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long the accept loop sleeps in poll(2) when nothing comes (a signal wakes it sooner).
const ACCEPT_POLL_MS: i32 = 500;
/// Past the sessions' own timeout, how long the server waits for them to end before it exits.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Installs the signal handlers and makes the listener non-blocking for the polled loop.
pub(super) fn prepare(listener: &TcpListener) -> Result<(), Error> {
    signals::catch_termination()
        .and_then(|()| listener.set_nonblocking(true))
        .map_err(Error::Setup)
}

/// Whether a termination signal came: every session's wait looks at this at each poll.
pub(in crate::remote) fn stopping() -> bool {
    signals::termination_received().is_some()
}

/// The next control connection (blocking, as a session expects), or `None` once the server
/// is asked to end; `idle` runs whenever the wait for one wakes with nothing.
pub(super) fn next_connection(
    listener: &TcpListener,
    idle: &dyn Fn(),
) -> Option<std::io::Result<TcpStream>> {
    loop {
        if let Some(signal) = signals::termination_received() {
            eprintln!(
                "bytepath server: {} received: no new sessions; stopping the run in progress",
                signals::signal_name(signal)
            );
            return None;
        }
        match listener.accept() {
            Ok((stream, _)) => return Some(stream.set_nonblocking(false).map(|()| stream)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let mut set = [poll_entry(listener.as_raw_fd(), POLLIN)];
                // EINTR (the signal) and timeouts alike go round to look again.
                let _ = poll(&mut set, ACCEPT_POLL_MS);
                idle();
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Some(Err(e)),
        }
    }
}

/// Waits until no session is open, at most the sessions' timeout and a grace: a session
/// waiting for a client's next frame ends by its timeout, a run by its next poll.
pub(super) fn drain(open: &AtomicUsize, timeout: Duration) {
    let until = Instant::now() + timeout + DRAIN_GRACE;
    while open.load(Ordering::Acquire) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    match open.load(Ordering::Acquire) {
        0 => eprintln!("bytepath server: every session ended; exiting"),
        n => eprintln!("bytepath server: exiting with {n} sessions still open"),
    }
}
