//! The load generator: --clients connections driven by a few client threads, each with its
//! own epoll over its share. Every connection owns two buffers allocated at setup; a request
//! is --size bytes of a pattern unique to (connection, request number), and every echoed byte
//! is compared with what was sent. Closed loop: send, wait for the whole echo, send again.
//! Open loop (--rate): each connection has a schedule of intended send times, and latency is
//! measured from the intended time, so a slow server cannot hide its queueing (no coordinated
//! omission).
use crate::measure::histogram::LatencyHistogram;
use crate::sys::events::{self, Epoll, EventList};
use crate::sys::netns::NetnsHandle;
use crate::sys::{socket, usage};
use std::io;
use std::net::SocketAddrV4;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the load threads are doing, set by the coordinator.
pub const SETUP: u8 = 0;
pub const WARMUP: u8 = 1;
pub const MEASURE: u8 = 2;
pub const STOP: u8 = 3;
/// After the measured window, `servers --profile`: load goes on, nothing is counted, and each
/// client thread's CPU time stops at the window's end.
pub const PROFILE: u8 = 4;

/// How long a wait may last before the thread looks at the phase again.
const PHASE_CHECK_MS: i32 = 10;

mod connect;
mod pattern;
mod schedule;
use pattern::fill;
mod window;
pub use schedule::Schedule;

#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub addr: SocketAddrV4,
    pub clients: usize,
    pub client_threads: usize,
    pub size: usize,
    /// Requests per second over all connections (open loop); `None`: closed loop.
    pub rate: Option<f64>,
    /// Each connection closes after this many requests.
    pub requests_per_connection: Option<u64>,
    /// `--connection per-request`: after each echo the client closes and connects again, so
    /// every request pays a handshake and the server's accept path.
    pub per_request: bool,
    /// How long connecting may take before the connections still pending count as failed.
    pub setup_timeout: Duration,
    /// CPUs the client threads run on (`--placement split`); `None`: any.
    pub cpus: Option<Vec<usize>>,
    /// `--netns`: each client thread enters this namespace before it connects (the threads
    /// are the load generator's own, so moving them moves nothing else).
    pub netns: Option<Arc<NetnsHandle>>,
}

/// One connection's completions, for the order test (`--record-connections`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConnectionSpan {
    pub connection: usize,
    pub completed: u64,
    /// Nanoseconds since the load started.
    pub first_completion_ns: Option<u64>,
    pub last_completion_ns: Option<u64>,
}

/// What one client thread measured.
pub struct ThreadResult {
    pub histogram: LatencyHistogram,
    pub requests: u64,
    pub mismatched_requests: u64,
    pub connection_errors: u64,
    pub connected: usize,
    pub failed_connects: usize,
    pub first_connect_error: Option<String>,
    pub cpu: Duration,
    pub spans: Vec<ConnectionSpan>,
    /// Connections whose handshake completed, the first ones and every reconnect, all phases.
    pub connections_opened: u64,
    /// Echoes completed, all phases (warm-up and after the window included).
    pub requests_all_phases: u64,
    /// Clients with a request waiting and no echo in the window: each is one latency sample.
    pub unserved: u64,
}

/// The running load: its threads and the shared phase.
pub struct Load {
    pub phase: Arc<AtomicU8>,
    ready: Arc<AtomicUsize>,
    finished: Arc<AtomicUsize>,
    threads: Vec<JoinHandle<ThreadResult>>,
}

impl Load {
    pub fn start(spec: &LoadSpec) -> io::Result<Load> {
        let phase = Arc::new(AtomicU8::new(SETUP));
        let ready = Arc::new(AtomicUsize::new(0));
        let finished = Arc::new(AtomicUsize::new(0));
        let base = Instant::now();
        let mut threads = Vec::new();
        for t in 0..spec.client_threads {
            let (spec, phase, ready, finished) =
                (spec.clone(), phase.clone(), ready.clone(), finished.clone());
            threads.push(
                std::thread::Builder::new()
                    .name(format!("client-{t}"))
                    .spawn(move || {
                        if let Some(cpus) = &spec.cpus {
                            // A client that cannot be placed still runs; the record keeps
                            // the intended placement, and allowed_cpus made it valid.
                            let _ = crate::sys::affinity::pin_current_thread_to(cpus);
                        }
                        let r = client_thread(&spec, t, base, &phase, &ready);
                        finished.fetch_add(1, Ordering::SeqCst);
                        r
                    })?,
            );
        }
        Ok(Load {
            phase,
            ready,
            finished,
            threads,
        })
    }

    /// Waits until every thread has connected its share (or given up on it).
    pub fn wait_ready(&self) {
        while self.ready.load(Ordering::SeqCst) < self.threads.len() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    pub fn all_finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst) == self.threads.len()
    }

    pub fn set_phase(&self, phase: u8) {
        self.phase.store(phase, Ordering::SeqCst);
    }

    pub fn join(self) -> Vec<ThreadResult> {
        self.set_phase(STOP);
        self.threads
            .into_iter()
            .filter_map(|t| t.join().ok())
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Connecting,
    Sending,
    Receiving,
    /// Open loop: the next request's intended time has not come.
    Waiting,
    Done,
}

struct Connection {
    fd: Option<OwnedFd>,
    /// Global connection number (decides the byte pattern and the schedule offset).
    id: usize,
    request: Box<[u8]>,
    echo: Box<[u8]>,
    sent: usize,
    received: usize,
    state: State,
    /// Number of the request in flight, or next to send.
    seq: u64,
    intended_ns: u64,
    /// Open loop: this connection's offset in every schedule period.
    offset_ns: u64,
    completed: u64,
    /// An echo of this connection was counted in the measured window.
    echoed_in_window: bool,
    first_ns: Option<u64>,
    last_ns: Option<u64>,
    writable_interest: bool,
}

struct Thread<'a> {
    spec: &'a LoadSpec,
    phase: &'a AtomicU8,
    base: Instant,
    epoll: Epoll,
    conns: Vec<Connection>,
    schedule: Option<Schedule>,
    measuring: bool,
    /// The measured window has ended and its unserved clients are counted.
    window_closed: bool,
    result: ThreadResult,
    open: usize,
}

fn client_thread(
    spec: &LoadSpec,
    index: usize,
    base: Instant,
    phase: &AtomicU8,
    ready: &AtomicUsize,
) -> ThreadResult {
    let result = ThreadResult::empty();
    if let Some(Err(e)) = spec.netns.as_ref().map(|ns| ns.enter()) {
        ready.fetch_add(1, Ordering::SeqCst);
        let mut r = result;
        r.failed_connects = (index..spec.clients).step_by(spec.client_threads).count();
        r.first_connect_error = Some(format!("entering the clients' network namespace: {e}"));
        return r;
    }
    let epoll = match Epoll::new() {
        Ok(e) => e,
        Err(e) => {
            ready.fetch_add(1, Ordering::SeqCst);
            let mut r = result;
            r.first_connect_error = Some(format!("epoll_create1: {e}"));
            return r;
        }
    };
    let mut t = Thread {
        spec,
        phase,
        base,
        epoll,
        conns: Vec::new(),
        schedule: None,
        measuring: false,
        window_closed: false,
        result,
        open: 0,
    };
    t.connect_share(index);
    ready.fetch_add(1, Ordering::SeqCst);
    while phase.load(Ordering::SeqCst) == SETUP {
        std::thread::sleep(Duration::from_micros(200));
    }
    t.run(phase);
    t.result.spans = t.conns.iter().map(Connection::span).collect();
    t.result
}

impl ThreadResult {
    /// Nothing measured yet.
    fn empty() -> ThreadResult {
        ThreadResult {
            histogram: LatencyHistogram::new(),
            requests: 0,
            mismatched_requests: 0,
            connection_errors: 0,
            connected: 0,
            failed_connects: 0,
            first_connect_error: None,
            cpu: Duration::ZERO,
            spans: Vec::new(),
            connections_opened: 0,
            requests_all_phases: 0,
            unserved: 0,
        }
    }
}

impl Connection {
    /// When this connection's completions began and ended.
    fn span(&self) -> ConnectionSpan {
        ConnectionSpan {
            connection: self.id,
            completed: self.completed,
            first_completion_ns: self.first_ns,
            last_completion_ns: self.last_ns,
        }
    }
}

impl Thread<'_> {
    fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }

    /// Closed loop: every connection's first request now. Open loop: each connection's offset
    /// in the schedule, its requests issued as they fall due.
    fn start(&mut self) {
        let start = self.now_ns();
        let clients = self.spec.clients;
        self.schedule = self.spec.rate.map(|r| Schedule::new(r, clients, start));
        for j in 0..self.conns.len() {
            if self.conns[j].state != State::Waiting {
                continue;
            }
            match self.schedule {
                Some(s) => self.conns[j].offset_ns = s.offset_ns(self.conns[j].id, clients),
                None => self.begin(j, start),
            }
        }
    }

    /// Open loop: begins every request whose intended time has come, advancing the cursor
    /// `(k, j)` (request number, connection) in intended-time order.
    fn issue_due(&mut self, s: Schedule, (k, j): (&mut u64, &mut usize)) {
        let now = self.now_ns();
        while !self.conns.is_empty() && s.intended_ns(*k, self.conns[*j].offset_ns) <= now {
            let c = &self.conns[*j];
            if c.state == State::Waiting && c.seq <= *k {
                let at = s.intended_ns(c.seq, c.offset_ns);
                self.begin(*j, at);
            }
            *j += 1;
            if *j == self.conns.len() {
                *j = 0;
                *k += 1;
            }
        }
    }

    fn run(&mut self, phase: &AtomicU8) {
        self.start();
        // The open-loop cursor: (request number, connection) in intended-time order.
        let (mut k, mut j) = (0u64, 0usize);
        let (mut cpu_at_start, mut cpu_at_end) = (None, None);
        let mut list = EventList::with_capacity(1024);
        while self.open > 0 {
            match phase.load(Ordering::Relaxed) {
                STOP => break,
                MEASURE if !self.measuring => {
                    self.measuring = true;
                    cpu_at_start = usage::thread_usage().ok();
                }
                PROFILE if self.measuring && cpu_at_end.is_none() => {
                    cpu_at_end = usage::thread_usage().ok();
                    self.close_window();
                }
                _ => {}
            }
            let mut timeout = PHASE_CHECK_MS;
            if let (Some(s), false) = (self.schedule, self.conns.is_empty()) {
                let next = s.intended_ns(k, self.conns[j].offset_ns);
                let wait_ms = next.saturating_sub(self.now_ns()) / 1_000_000;
                timeout = timeout.min(wait_ms as i32);
            }
            let n = match self.epoll.wait(&mut list, timeout) {
                Ok(n) => n,
                Err(_) => break,
            };
            for i in 0..n {
                let (slot, bits) = list.get(i);
                self.on_event(slot as usize, bits);
            }
            if let Some(s) = self.schedule {
                self.issue_due(s, (&mut k, &mut j));
            }
        }
        self.close_window();
        let after = cpu_at_end.map_or_else(usage::thread_usage, Ok);
        if let (Some(before), Ok(after)) = (cpu_at_start, after) {
            let used = after.since(&before);
            self.result.cpu = used.user + used.system;
        }
    }

    /// Sends request `seq` of connection `j`, intended at `intended_ns`.
    fn begin(&mut self, j: usize, intended_ns: u64) {
        let c = &mut self.conns[j];
        fill(&mut c.request, c.id, c.seq);
        c.sent = 0;
        c.received = 0;
        c.intended_ns = intended_ns;
        c.state = State::Sending;
        self.send_more(j);
    }

    fn send_more(&mut self, j: usize) {
        let c = &mut self.conns[j];
        let Some(fd) = c.fd.as_ref() else { return };
        loop {
            match socket::send(fd.as_fd(), &c.request[c.sent..], 0) {
                Ok(n) => {
                    c.sent += n;
                    if c.sent == c.request.len() {
                        c.state = State::Receiving;
                        if c.writable_interest {
                            c.writable_interest = false;
                            let _ = self.epoll.modify(fd.as_fd(), events::READABLE, j as u64);
                        }
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !c.writable_interest {
                        c.writable_interest = true;
                        let _ = self.epoll.modify(fd.as_fd(), events::WRITABLE, j as u64);
                    }
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.lost(j),
            }
        }
    }

    fn on_event(&mut self, j: usize, bits: u32) {
        match self.conns[j].state {
            State::Sending if bits & events::WRITABLE != 0 => self.send_more(j),
            State::Connecting => self.reconnected(j),
            State::Receiving => self.receive(j),
            State::Done => {}
            // Readable while nothing is expected: the server closed, failed, or sent bytes
            // nobody asked for.
            _ => self.unexpected(j),
        }
    }

    fn receive(&mut self, j: usize) {
        let c = &mut self.conns[j];
        let Some(fd) = c.fd.as_ref() else { return };
        while c.received < c.echo.len() {
            match socket::recv(fd.as_fd(), &mut c.echo[c.received..], 0) {
                Ok(0) => return self.lost(j),
                Ok(n) => c.received += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.lost(j),
            }
        }
        let now = self.now_ns();
        self.complete(j, now);
    }

    fn complete(&mut self, j: usize, now: u64) {
        // Checked per completion, not per loop: once another client thread has stopped and
        // closed its connections, an iterative server serves the next one, and those late
        // completions belong to no measured window.
        let measuring = self.measuring && self.phase.load(Ordering::Relaxed) == MEASURE;
        if self.measuring && !measuring {
            // The window has ended: its unserved clients are counted before this echo.
            self.close_window();
        }
        let c = &mut self.conns[j];
        if c.echo != c.request {
            self.result.mismatched_requests += 1;
        }
        if measuring {
            c.echoed_in_window = true;
            self.result.requests += 1;
            self.result
                .histogram
                .record(now.saturating_sub(c.intended_ns));
        }
        c.completed += 1;
        self.result.requests_all_phases += 1;
        c.first_ns.get_or_insert(now);
        c.last_ns = Some(now);
        c.seq += 1;
        c.state = State::Waiting;
        if self.spec.requests_per_connection == Some(c.completed) {
            c.state = State::Done;
            c.fd = None;
            self.open -= 1;
            return;
        }
        if self.spec.per_request {
            return self.reconnect(j, now);
        }
        match self.schedule {
            None => self.begin(j, now),
            Some(s) => {
                let at = s.intended_ns(c.seq, c.offset_ns);
                if at <= now {
                    self.begin(j, at);
                }
            }
        }
    }

    fn unexpected(&mut self, j: usize) {
        let c = &mut self.conns[j];
        let Some(fd) = c.fd.as_ref() else { return };
        let mut scratch = [0u8; 64];
        match socket::recv(fd.as_fd(), &mut scratch, 0) {
            Ok(0) | Err(_) => self.lost(j),
            Ok(_) => self.result.mismatched_requests += 1,
        }
    }

    /// The server closed or reset the connection while it was in use.
    fn lost(&mut self, j: usize) {
        let c = &mut self.conns[j];
        if c.state != State::Done {
            c.state = State::Done;
            c.fd = None;
            self.open -= 1;
            self.result.connection_errors += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_spreads_connections_over_one_period() {
        // 1000 requests/s over 4 connections: each sends every 4 ms, 1 ms apart.
        let s = Schedule::new(1000.0, 4, 500);
        assert_eq!(s.period_ns, 4_000_000);
        assert_eq!(s.offset_ns(0, 4), 0);
        assert_eq!(s.offset_ns(3, 4), 3_000_000);
        assert_eq!(s.intended_ns(0, s.offset_ns(1, 4)), 1_000_500);
        assert_eq!(s.intended_ns(2, s.offset_ns(1, 4)), 9_000_500);
    }

    #[test]
    fn intended_times_of_all_connections_interleave_in_order() {
        let s = Schedule::new(300.0, 3, 0);
        let mut times: Vec<u64> = Vec::new();
        for k in 0..3 {
            for id in 0..3 {
                times.push(s.intended_ns(k, s.offset_ns(id, 3)));
            }
        }
        assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
        let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g.abs_diff(3_333_333) <= 1), "{gaps:?}");
    }
}
