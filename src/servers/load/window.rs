//! The end of the measured window for one client thread: the clients that waited on a request
//! and got no echo in the window (an iterative server serves one client; the rest queue) are
//! counted in latency, once each, with their wait up to the window's end, so a model's figures
//! hold what every one of its clients saw, not only the served ones. Done once per window over
//! the connections: the per-request path only marks a connection echoed.
use super::{State, Thread};

impl Thread<'_> {
    /// Counts the window's unserved clients, once, when the thread first sees it ended: each
    /// connection with a request outstanding (sent or due, or reconnecting for it) and no
    /// echo in the window gives one latency sample, from that request's intended send (a
    /// first request's is right after the connect) to now; the visit's clients never served
    /// thus wait the whole visit.
    pub(super) fn close_window(&mut self) {
        if !self.measuring || self.window_closed {
            return;
        }
        self.window_closed = true;
        let now = self.now_ns();
        for c in &self.conns {
            let waiting = matches!(
                c.state,
                State::Sending | State::Receiving | State::Connecting
            );
            if waiting && !c.echoed_in_window {
                self.result
                    .histogram
                    .record(now.saturating_sub(c.intended_ns));
                self.result.unserved += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use std::net::Ipv4Addr;

    fn connection(id: usize, state: State, echoed: bool) -> Connection {
        Connection {
            fd: None,
            id,
            request: Box::new([]),
            echo: Box::new([]),
            sent: 0,
            received: 0,
            state,
            seq: 0,
            intended_ns: 0,
            offset_ns: 0,
            completed: u64::from(echoed),
            echoed_in_window: echoed,
            first_ns: None,
            last_ns: None,
            writable_interest: false,
        }
    }

    /// Three clients: one served in the window, one waiting since the load began (an
    /// iterative server's queue), one lost: only the waiting one is counted, with its wait.
    #[test]
    fn a_client_never_served_counts_its_whole_wait_once() {
        let spec = LoadSpec {
            addr: SocketAddrV4::new(Ipv4Addr::LOCALHOST, 1),
            clients: 3,
            client_threads: 1,
            size: 64,
            rate: None,
            requests_per_connection: None,
            per_request: false,
            setup_timeout: Duration::from_secs(1),
            cpus: None,
            netns: None,
        };
        let phase = AtomicU8::new(STOP);
        let base = Instant::now() - Duration::from_millis(300);
        let mut t = Thread {
            spec: &spec,
            phase: &phase,
            base,
            epoll: Epoll::new().unwrap(),
            conns: vec![
                connection(0, State::Receiving, true),
                connection(1, State::Receiving, false),
                connection(2, State::Done, false),
            ],
            schedule: None,
            measuring: true,
            window_closed: false,
            result: ThreadResult::empty(),
            open: 2,
        };
        t.close_window();
        t.close_window(); // once per window
        assert_eq!(t.result.unserved, 1);
        let s = t.result.histogram.summary().expect("one sample");
        assert_eq!(s.count, 1);
        assert!(s.min >= 290_000_000, "its wait since the load began: {s:?}");
        // A thread that never measured counts nothing.
        t.measuring = false;
        t.window_closed = false;
        t.result = ThreadResult::empty();
        t.close_window();
        assert_eq!(t.result.unserved, 0);
    }
}
