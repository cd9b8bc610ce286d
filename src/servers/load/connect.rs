//! A client thread's share of the connections, opened: non-blocking connects, then a wait
//! until each handshake has ended (TCP_NODELAY set, watched for the echo) or the setup time
//! is up; what failed or never finished is counted with the first reason.
use super::{Connection, State, Thread, PHASE_CHECK_MS};
use crate::sys::events::{self, EventList};
use crate::sys::socket;
use std::io;
use std::os::fd::AsFd;
use std::time::Instant;

impl Thread<'_> {
    /// Connects this thread's share (connection ids index, index + threads, …) and waits
    /// until each handshake has ended or the setup time is up.
    pub(super) fn connect_share(&mut self, index: usize) {
        let spec = self.spec;
        for id in (index..spec.clients).step_by(spec.client_threads) {
            match events::connect_nonblocking(spec.addr) {
                Ok(fd) => {
                    let slot = self.conns.len() as u64;
                    if let Err(e) = self.epoll.add(fd.as_fd(), events::WRITABLE, slot) {
                        self.connect_failed(e);
                        continue;
                    }
                    self.conns.push(Connection {
                        fd: Some(fd),
                        id,
                        request: vec![0u8; spec.size].into_boxed_slice(),
                        echo: vec![0u8; spec.size].into_boxed_slice(),
                        sent: 0,
                        received: 0,
                        state: State::Connecting,
                        seq: 0,
                        intended_ns: 0,
                        offset_ns: 0,
                        completed: 0,
                        echoed_in_window: false,
                        first_ns: None,
                        last_ns: None,
                        writable_interest: true,
                    });
                }
                Err(e) => self.connect_failed(e),
            }
        }
        self.await_handshakes();
        for c in &mut self.conns {
            if c.state == State::Connecting {
                c.state = State::Done;
                c.fd = None;
                self.result.failed_connects += 1;
                self.result.first_connect_error.get_or_insert_with(|| {
                    format!("connect still pending after {:?}", spec.setup_timeout)
                });
            }
        }
    }

    /// Waits for the connects under way until each has ended or the setup time is up.
    fn await_handshakes(&mut self) {
        let deadline = Instant::now() + self.spec.setup_timeout;
        let mut pending = self.conns.len();
        let mut list = EventList::with_capacity(1024);
        while pending > 0 && Instant::now() < deadline {
            let n = self.epoll.wait(&mut list, PHASE_CHECK_MS).unwrap_or(0);
            for i in 0..n {
                let (slot, _) = list.get(i);
                let c = &mut self.conns[slot as usize];
                if c.state != State::Connecting {
                    continue;
                }
                pending -= 1;
                let fd = c.fd.as_ref().expect("connecting has a socket");
                let outcome = match events::take_error(fd.as_fd()) {
                    Ok(None) => self
                        .epoll
                        .modify(fd.as_fd(), events::READABLE, slot)
                        .and_then(|()| {
                            socket::set_int_option(
                                fd.as_fd(),
                                libc::IPPROTO_TCP,
                                libc::TCP_NODELAY,
                                1,
                            )
                        }),
                    Ok(Some(e)) | Err(e) => Err(e),
                };
                match outcome {
                    Ok(()) => {
                        c.state = State::Waiting;
                        c.writable_interest = false;
                        self.result.connected += 1;
                        self.result.connections_opened += 1;
                        self.open += 1;
                    }
                    Err(e) => {
                        c.state = State::Done;
                        c.fd = None;
                        self.connect_failed(e);
                    }
                }
            }
        }
    }

    /// `--connection per-request`: closes connection `j` after its echo at `now` and starts
    /// a new one; the next request is timed from `now` (closed loop), so its latency holds
    /// the handshake, or waits for its intended time (open loop).
    pub(super) fn reconnect(&mut self, j: usize, now: u64) {
        let c = &mut self.conns[j];
        c.fd = None;
        c.intended_ns = now;
        match events::connect_nonblocking(self.spec.addr).and_then(|fd| {
            self.epoll.add(fd.as_fd(), events::WRITABLE, j as u64)?;
            Ok(fd)
        }) {
            Ok(fd) => {
                c.fd = Some(fd);
                c.state = State::Connecting;
                c.writable_interest = true;
            }
            Err(_) => self.lost(j),
        }
    }

    /// A reconnect's handshake ended: on success the connection waits for its next request
    /// (closed loop: sent now); on failure it is lost.
    pub(super) fn reconnected(&mut self, j: usize) {
        let c = &mut self.conns[j];
        let Some(fd) = c.fd.as_ref() else { return };
        let ready = match events::take_error(fd.as_fd()) {
            Ok(None) => self
                .epoll
                .modify(fd.as_fd(), events::READABLE, j as u64)
                .and_then(|()| {
                    socket::set_int_option(fd.as_fd(), libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)
                }),
            Ok(Some(e)) | Err(e) => Err(e),
        };
        if ready.is_err() {
            return self.lost(j);
        }
        c.state = State::Waiting;
        c.writable_interest = false;
        self.result.connections_opened += 1;
        if self.schedule.is_none() {
            let at = c.intended_ns;
            self.begin(j, at);
        }
    }

    fn connect_failed(&mut self, e: io::Error) {
        self.result.failed_connects += 1;
        self.result
            .first_connect_error
            .get_or_insert_with(|| format!("connect: {e}"));
    }
}
