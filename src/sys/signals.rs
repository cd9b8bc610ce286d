//! Ending a long-lived process gracefully: sigaction(2) handlers for SIGTERM and SIGINT that
//! only record which signal came (an atomic store, async-signal-safe), for a loop that polls
//! the record. A handler is what lets the process end cleanly as PID 1 (a container's first
//! process), where the kernel drops every signal whose disposition is the default, SIGTERM
//! included (pid_namespaces(7)). No SA_RESTART: a blocking poll(2) or accept(2) returns EINTR
//! at once, so the loop sees the signal without waiting for its next tick.
use super::cvt;
use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked the process to end; 0 while none has.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn record(signal: libc::c_int) {
    RECEIVED.store(signal, Ordering::SeqCst);
}

/// Installs the handlers for SIGTERM and SIGINT (replacing any installed before).
pub fn catch_termination() -> io::Result<()> {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: sigaction is plain old data; zeroed is an empty mask and no flags.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = record as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: action.sa_mask is a valid sigset_t to empty.
        cvt(unsafe { libc::sigemptyset(&mut action.sa_mask) })?;
        // SAFETY: action is fully initialised; the handler only stores to an atomic.
        cvt(unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) })?;
    }
    Ok(())
}

/// The termination signal received so far, if any (SIGTERM or SIGINT).
pub fn termination_received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The signal's name as `kill -l` prints it, for log lines.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_sigterm_is_recorded_and_does_not_end_the_process() {
        catch_termination().unwrap();
        // SAFETY: raise with an integer argument; the handler just installed only records it.
        assert_eq!(unsafe { libc::raise(libc::SIGTERM) }, 0);
        assert_eq!(termination_received(), Some(libc::SIGTERM));
        assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
    }
}
