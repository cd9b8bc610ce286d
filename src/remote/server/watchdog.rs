//! A session's limits, kept by a thread of its own. The session thread may be blocked in a
//! read of the control connection (a client trickling a frame, one byte at a time, instead of
//! its `Go` or `Stop`), where no check of its own can run; this thread is not. With a byte
//! budget it reads what the flows moved every `budget::POLL` and, past the allowance, stops
//! the run's schedule and shuts its flows `CUT_GRACE` later (an rr side answers its client,
//! not the schedule). At its hard end it stops the schedule, shuts the flows and shuts the
//! control connection down both ways, so every call the session or a worker is blocked in
//! returns, whatever the client does. Disarmed (dropped) when the session is done with the
//! run; that wakes it at once.
use super::budget::{self, ByteBudget};
use crate::engine::control::Control;
use crate::transport::Endpoint;
use std::io;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a side the server stopped itself may take to wind down before its flows are shut.
pub(super) const CUT_GRACE: Duration = Duration::from_millis(500);

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
    seen: Arc<Seen>,
    counts_bytes: bool,
}

/// What the thread did, for the session's report and log.
#[derive(Default)]
struct Seen {
    fired: AtomicBool,
    spent: AtomicBool,
}

impl Watchdog {
    /// A thread that holds `guarded` to `budget` and ends it at `at`, unless disarmed first.
    pub(super) fn arm(
        at: Instant,
        guarded: Guarded,
        budget: Option<ByteBudget>,
    ) -> io::Result<Watchdog> {
        let (disarm, disarmed) = mpsc::channel::<()>();
        let seen = Arc::new(Seen::default());
        let told = seen.clone();
        let counts_bytes = budget.is_some();
        let thread = std::thread::Builder::new()
            .name("bytepath-watchdog".into())
            .spawn(move || keep(&disarmed, at, &guarded, budget, &told))?;
        Ok(Watchdog {
            disarm: Some(disarm),
            thread: Some(thread),
            seen,
            counts_bytes,
        })
    }

    /// Whether it has fired (the session's end was the watchdog's, not the session's own).
    pub(super) fn fired(&self) -> bool {
        self.seen.fired.load(Ordering::Acquire)
    }

    /// Whether it holds the run to a byte budget.
    pub(super) fn counts_bytes(&self) -> bool {
        self.counts_bytes
    }

    /// Whether the flows moved past the byte budget (the run was stopped for it).
    pub(super) fn spent(&self) -> bool {
        self.seen.spent.load(Ordering::Acquire)
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

/// The thread: wakes for the budget's polls, the flows' shutting after a stop for the budget,
/// and `at`; returns when disarmed or once it has fired.
fn keep(
    disarmed: &mpsc::Receiver<()>,
    at: Instant,
    guarded: &Guarded,
    budget: Option<ByteBudget>,
    seen: &Seen,
) {
    let mut spent_at: Option<Instant> = None;
    let mut shut = false;
    loop {
        let now = Instant::now();
        let wake = match (&budget, spent_at) {
            (Some(_), None) => at.min(now + budget::POLL),
            (_, Some(spent)) if !shut => at.min(spent + CUT_GRACE),
            _ => at,
        };
        if disarmed_before(disarmed, wake) {
            return;
        }
        let now = Instant::now();
        if now >= at {
            seen.fired.store(true, Ordering::Release);
            fire(guarded);
            return;
        }
        if spent_at.is_none()
            && budget
                .as_ref()
                .is_some_and(|b| b.exceeded(&guarded.endpoints))
        {
            guarded.control.stop();
            seen.spent.store(true, Ordering::Release);
            spent_at = Some(now);
        }
        if spent_at.is_some_and(|spent| now >= spent + CUT_GRACE) && !shut {
            guarded.endpoints.iter().for_each(|ep| ep.abort());
            shut = true;
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
        let watchdog = Watchdog::arm(at, guarded, None).unwrap();
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
        let watchdog =
            Watchdog::arm(Instant::now() + Duration::from_secs(60), guarded, None).unwrap();
        let dropped = Instant::now();
        drop(watchdog);
        assert!(
            dropped.elapsed() < Duration::from_secs(1),
            "the drop waited"
        );
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

    #[test]
    fn past_the_budget_it_stops_the_run_and_shuts_the_flows_a_grace_later() {
        use std::io::Write;
        let control = Arc::new(Control::new().unwrap());
        let (guarded, _control_here, _control_peer, mut flow_peer) = guarded(&control);
        // 1000 bytes allowed and a margin of 250.
        let budget = ByteBudget::new(Some(1000), 100, 0);
        let at = Instant::now() + Duration::from_secs(60);
        let watchdog = Watchdog::arm(at, guarded, budget).unwrap();
        assert!(watchdog.counts_bytes());
        std::thread::sleep(Duration::from_millis(100));
        assert!(!watchdog.spent() && !control.is_stopped(), "nothing moved");
        let wrote = Instant::now();
        flow_peer.write_all(&[0u8; 2000]).unwrap();
        while !watchdog.spent() {
            assert!(wrote.elapsed() < Duration::from_secs(2), "never seen spent");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(control.is_stopped(), "spent stops the schedule");
        assert!(!watchdog.fired(), "spent is not the hard end");
        // The flow is shut after the grace: its peer reads its end.
        flow_peer
            .set_read_timeout(Some(Duration::from_secs(3)))
            .unwrap();
        let mut byte = [0u8; 1];
        assert_eq!(flow_peer.read(&mut byte).unwrap(), 0);
        assert!(wrote.elapsed() >= CUT_GRACE, "shut before the grace");
    }
}
