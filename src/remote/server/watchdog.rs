//! A session's hard end, kept by a thread of its own. The session thread may be blocked in a
//! read of the control connection (a client trickling a frame, one byte at a time, instead of
//! its `Go` or `Stop`), where no check of its own can run; this thread is not. At its time it
//! stops the run's schedule, shuts the run's flows and shuts the control connection down both
//! ways, so every call the session or a worker is blocked in returns, whatever the client does.
//! Disarmed (dropped) when the session is done with the run; that wakes it at once.
use crate::engine::control::Control;
use crate::transport::Endpoint;
use std::io;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// What the watchdog ends when it fires: the run's schedule and flows, and the control
/// connection (a second handle on its socket).
pub(super) struct Guarded {
    pub(super) control: Arc<Control>,
    pub(super) endpoints: Vec<Arc<Endpoint>>,
    pub(super) stream: TcpStream,
}

pub(super) struct Watchdog {
    /// Dropping it wakes the thread, which then ends without firing.
    disarm: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    fired: Arc<AtomicBool>,
}

impl Watchdog {
    /// A thread that ends `guarded` at `at` unless disarmed first.
    pub(super) fn arm(at: Instant, guarded: Guarded) -> io::Result<Watchdog> {
        let (disarm, disarmed) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let flag = fired.clone();
        let thread = std::thread::Builder::new()
            .name("bytepath-watchdog".into())
            .spawn(move || {
                if !disarmed_before(&disarmed, at) {
                    flag.store(true, Ordering::Release);
                    fire(&guarded);
                }
            })?;
        Ok(Watchdog {
            disarm: Some(disarm),
            thread: Some(thread),
            fired,
        })
    }

    /// Whether it has fired (the session's end was the watchdog's, not the session's own).
    pub(super) fn fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.disarm.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Waits until `at`; true when disarmed before.
fn disarmed_before(disarmed: &mpsc::Receiver<()>, at: Instant) -> bool {
    loop {
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        match disarmed.recv_timeout(left) {
            Err(RecvTimeoutError::Timeout) => {}
            // Nothing is ever sent: only the sender's drop arrives.
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return true,
        }
    }
}

fn fire(guarded: &Guarded) {
    guarded.control.stop();
    guarded.endpoints.iter().for_each(|ep| ep.abort());
    let _ = guarded.stream.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;
    use std::time::Duration;

    /// A connected pair: (this side, the peer).
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        (listener.accept().unwrap().0, peer)
    }

    fn guarded(control: &Arc<Control>) -> (Guarded, TcpStream, TcpStream, TcpStream) {
        let (control_here, control_peer) = pair();
        let (flow_here, flow_peer) = pair();
        let guarded = Guarded {
            control: control.clone(),
            endpoints: vec![Arc::new(Endpoint::socket(flow_here))],
            stream: control_here.try_clone().unwrap(),
        };
        (guarded, control_here, control_peer, flow_peer)
    }

    #[test]
    fn at_its_time_it_stops_the_run_and_wakes_a_read_blocked_on_the_control_connection() {
        let control = Arc::new(Control::new().unwrap());
        let (guarded, mut control_here, _control_peer, mut flow_peer) = guarded(&control);
        let at = Instant::now() + Duration::from_millis(200);
        let watchdog = Watchdog::arm(at, guarded).unwrap();
        // Blocked with no timeout, as a session reading a trickled frame is.
        let mut byte = [0u8; 1];
        let read = control_here.read(&mut byte);
        let woke = Instant::now();
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
        assert!(woke >= at, "woke before its time");
        assert!(woke < at + Duration::from_secs(2), "woke late");
        assert!(watchdog.fired() && control.is_stopped());
        // The flow was shut: its peer reads its end.
        flow_peer
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        assert_eq!(flow_peer.read(&mut byte).unwrap(), 0);
    }

    #[test]
    fn disarmed_in_time_it_ends_at_once_and_touches_nothing() {
        let control = Arc::new(Control::new().unwrap());
        let (guarded, control_here, _control_peer, _flow_peer) = guarded(&control);
        let watchdog = Watchdog::arm(Instant::now() + Duration::from_secs(60), guarded).unwrap();
        let dropped = Instant::now();
        drop(watchdog);
        assert!(dropped.elapsed() < Duration::from_secs(1), "the drop waited");
        assert!(!control.is_stopped());
        // The control connection is still open both ways.
        control_here
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let mut byte = [0u8; 1];
        let err = (&control_here).read(&mut byte).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{err}"
        );
    }
}
