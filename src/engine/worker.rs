//! The per-flow loops: stream sender and receiver, rr client and server. The rr client reads
//! the clock once per round trip; the other sides once per batch of messages (`batch`), and
//! derive the phase from that timestamp. Between timestamps the path is the mechanism's own
//! system calls and a few additions.
use super::batch::Batch;
use super::control::{Control, Phase};
use super::crr::{CrrClient, CrrListener, CrrStats};
use super::slices::SliceBoard;
use super::window::{Window, WindowResult};
use crate::measure::counters::CounterSelection;
use crate::mechanism::page_refs::SpliceStats;
use crate::mechanism::receive::path::ReceivePathStats;
use crate::mechanism::receive::{DatagramStats, Receiver, Verifier};
use crate::mechanism::{SendMechanism, ZerocopyStats};
use crate::sys::affinity;
use crate::transport::Endpoint;
use std::io;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// How long a zero-copy sender waits at the end for outstanding completions.
const COMPLETION_WAIT: Duration = Duration::from_secs(2);
/// How often a sender done with its messages looks at the schedule while it waits for the stop
/// (the stop flag wakes it at once; the schedule's end does not).
const IDLE_LOOK: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Stream sender, or rr client.
    Sender,
    /// Stream receiver, or rr server.
    Receiver,
}

impl Role {
    /// The other side of the flow.
    pub fn other(self) -> Role {
        match self {
            Role::Sender => Role::Receiver,
            Role::Receiver => Role::Sender,
        }
    }
}

/// What one flow's side does.
pub enum Job {
    StreamSend(Box<dyn SendMechanism>),
    StreamReceive(Receiver),
    RrClient(Box<dyn SendMechanism>, Receiver),
    RrServer(Receiver, Box<dyn SendMechanism>),
    /// `--pattern crr`: a connection per transaction (`crr`).
    CrrClient(Box<dyn SendMechanism>, Receiver, CrrClient),
    /// The listener, and whether each accepted connection gets TCP_NODELAY.
    CrrServer(Receiver, Box<dyn SendMechanism>, CrrListener, bool),
}

/// Where and with whom a worker runs.
pub struct Worker {
    pub flow: u32,
    pub role: Role,
    pub cpu: Option<usize>,
    pub message_size: usize,
    pub counters: CounterSelection,
    /// The board and slice length, for the side whose throughput the statistics follow.
    pub slices: Option<(Arc<SliceBoard>, Duration)>,
    /// On the measured side with `--messages`/`--bytes`: this flow's share, and the flow count.
    pub count: Option<(u64, usize)>,
    /// A stream sender whose receiver counts elsewhere (a server's side of a counted run
    /// without warm-up): it hands over at most this many messages, then waits for the stop, so
    /// the run moves what its client declared and no more while the client's stop travels.
    pub sends_at_most: Option<u64>,
    /// Messages per timestamp: 1 for the rr client, whose samples are round trips.
    pub stamp_every: u64,
    pub control: Arc<Control>,
    pub start: Arc<Barrier>,
    pub endpoint: Arc<Endpoint>,
    /// `--bidir`: this thread carries the flow's reverse direction.
    pub reverse: bool,
}

/// Everything one worker thread measured (serialized to come back from a second process).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ThreadSample {
    pub flow: u32,
    pub role: Role,
    pub window: Option<WindowResult>,
    /// Messages handed to the kernel (stream sender, rr server) or round trips completed
    /// (rr client) or messages fully received (stream receiver), over all phases.
    pub total_messages: u64,
    /// Payload bytes this side handed to the kernel, all phases.
    pub sent_bytes: u64,
    /// Payload bytes this side received, all phases.
    pub received_bytes: u64,
    pub zerocopy: Option<ZerocopyStats>,
    pub verifier: Option<Verifier>,
    /// Datagram transports: numbering, loss and timeouts seen by this side.
    pub datagrams: Option<DatagramStats>,
    /// What this side's receive path (`--recv`) did, for sides that receive.
    #[serde(default)]
    pub receive: Option<ReceivePathStats>,
    /// `splice` and `sendfile` senders: system calls, pieces, gifted and fresh pages.
    #[serde(default)]
    pub page_refs: Option<SpliceStats>,
    /// `--pattern crr`: transactions, accepts, the split of a transaction, TIME_WAIT left.
    #[serde(default)]
    pub crr: Option<CrrStats>,
    pub error: Option<String>,
    /// `--bidir`: the sample of a thread of the reverse direction.
    #[serde(default)]
    pub reverse: bool,
    /// The process the thread ran in.
    pub pid: u32,
}

impl ThreadSample {
    /// The sample of a side that never reported (a dead child, a lost server): only why.
    pub fn missing(flow: u32, role: Role, pid: u32, error: String) -> ThreadSample {
        ThreadSample {
            flow,
            role,
            window: None,
            total_messages: 0,
            sent_bytes: 0,
            received_bytes: 0,
            zerocopy: None,
            verifier: None,
            datagrams: None,
            receive: None,
            page_refs: None,
            crr: None,
            error: Some(error),
            reverse: false,
            pid,
        }
    }
}

/// Adds a `missing` sample, saying `error`, for every expected (flow, role) with no sample.
pub fn fill_missing(
    samples: &mut Vec<ThreadSample>,
    expected: &[(u32, Role)],
    pid: u32,
    error: &str,
) {
    for &(flow, role) in expected {
        if !samples.iter().any(|s| s.flow == flow && s.role == role) {
            samples.push(ThreadSample::missing(flow, role, pid, error.to_string()));
        }
    }
}

/// Counts that survive an error in the loop.
#[derive(Default)]
pub(super) struct Totals {
    pub(super) messages: u64,
    /// Bytes handed to the kernel.
    pub(super) bytes: u64,
}

impl Worker {
    pub fn run(self, mut job: Job) -> ThreadSample {
        let pinned = self.cpu.map_or(Ok(()), affinity::pin_current_thread);
        let mut window = Window::new(self.counters);
        self.start.wait();
        if let Some((board, length)) = &self.slices {
            window.attach_slices(board.clone(), *length, self.control.clone());
        }
        let mut totals = Totals::default();
        let mut crr =
            matches!(job, Job::CrrClient(..) | Job::CrrServer(..)).then(CrrStats::default);
        let ep = &*self.endpoint;
        let result = match pinned {
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!("pinning to CPU {:?}: {e}", self.cpu),
            )),
            Ok(()) => self.drive(&mut job, ep, &mut window, (&mut totals, &mut crr)),
        };
        if result.is_err() {
            // Wake the peer thread, which may be blocked on this flow.
            ep.abort();
        }
        let (mech, receiver) = match job {
            Job::StreamSend(m) => (Some(m), None),
            Job::StreamReceive(r) => (None, Some(r)),
            Job::RrClient(m, r) | Job::RrServer(r, m) => (Some(m), Some(r)),
            Job::CrrClient(m, r, _) | Job::CrrServer(r, m, _, _) => (Some(m), Some(r)),
        };
        let zerocopy = mech.as_ref().and_then(|m| m.zerocopy_stats());
        let page_refs = mech.as_ref().and_then(|m| m.splice_stats());
        let datagrams = ep.datagrams_sent().map(|sent| DatagramStats {
            sent,
            ..receiver
                .as_ref()
                .and_then(Receiver::datagram_stats)
                .unwrap_or_default()
        });
        ThreadSample {
            flow: self.flow,
            role: self.role,
            window: window.finish(),
            total_messages: totals.messages,
            sent_bytes: totals.bytes,
            received_bytes: receiver.as_ref().map_or(0, |r| r.bytes_total),
            zerocopy,
            receive: receiver.as_ref().map(Receiver::path_stats),
            page_refs,
            crr,
            verifier: receiver.and_then(|r| r.verifier),
            datagrams,
            error: result.err().map(|e| e.to_string()),
            reverse: self.reverse,
            pid: std::process::id(),
        }
    }

    /// The timestamp `now` ends `batch`: follows the phase, counts the batch's messages if the
    /// window was open while they completed, closes the window at the flow's count, and starts
    /// the next batch. Returns the phase.
    #[inline]
    pub(super) fn stamp(&self, window: &mut Window, batch: &mut Batch, now: Instant) -> Phase {
        let counting = window.is_open();
        let phase = self.control.phase_at(now);
        window.follow(phase, now);
        if counting && batch.messages > 0 {
            window.record(now, batch.messages, batch.bytes);
            window.latency(now - batch.last, batch.messages);
            if let Some((share, flows)) = self.count {
                if window.counted() >= share {
                    window.close_at(now);
                    self.control.flow_done(flows);
                }
            }
        }
        let most = match self.count {
            _ if window.is_waiting() => Some(1),
            Some((share, _)) if window.is_open() => Some(share.saturating_sub(window.counted())),
            _ => None,
        };
        batch.restart(now, most);
        phase
    }

    fn drive(
        &self,
        job: &mut Job,
        ep: &Endpoint,
        window: &mut Window,
        (totals, crr): (&mut Totals, &mut Option<CrrStats>),
    ) -> io::Result<()> {
        match job {
            Job::StreamSend(mech) => self.stream_send(mech.as_mut(), ep, window, totals),
            Job::StreamReceive(receiver) => self.stream_receive(receiver, ep, window, totals),
            Job::RrClient(mech, receiver) => {
                let answer = |request| receiver.receive_answer(ep, request);
                self.rr_client(mech.as_mut(), ep, window, totals, answer)
            }
            Job::RrServer(receiver, mech) => {
                self.rr_server(receiver, mech.as_mut(), ep, window, totals)
            }
            Job::CrrClient(mech, receiver, client) => {
                let stats = crr.get_or_insert_with(CrrStats::default);
                self.crr_client((mech, receiver), client, ep, (window, totals, stats))
            }
            Job::CrrServer(receiver, mech, listener, nodelay) => {
                let stats = crr.get_or_insert_with(CrrStats::default);
                let sides = (receiver, mech);
                self.crr_server(sides, (listener, *nodelay), (window, totals, stats))
            }
        }
    }

    /// The stream sender: send, and a timestamp when the batch is due. The latency sample is
    /// the interval between timestamps per message handed over.
    fn stream_send(
        &self,
        mech: &mut dyn SendMechanism,
        ep: &Endpoint,
        window: &mut Window,
        totals: &mut Totals,
    ) -> io::Result<()> {
        let size = self.message_size as u64;
        let start = Instant::now();
        let mut batch = Batch::new(self.stamp_every, start);
        let mut phase = self.stamp(window, &mut batch, start);
        let mut sent = 0u64;
        while phase != Phase::Stop {
            if self.sends_at_most.is_some_and(|most| sent >= most) {
                phase = self.idle_until_stop(window, &mut batch);
                continue;
            }
            mech.send_message(ep, sent)?;
            totals.bytes += size;
            totals.messages += 1;
            sent += 1;
            if batch.add(1, size) {
                phase = self.stamp(window, &mut batch, Instant::now());
            }
        }
        mech.finish(ep, Instant::now() + COMPLETION_WAIT)?;
        ep.finish_writing()
    }

    /// A sender past `sends_at_most`: its last batch stamped, its window closed there (what it
    /// did ends with its last message, not with the wait), then asleep until the run's stop.
    #[cold]
    fn idle_until_stop(&self, window: &mut Window, batch: &mut Batch) -> Phase {
        let now = Instant::now();
        let mut phase = self.stamp(window, batch, now);
        window.close_at(now);
        while phase != Phase::Stop {
            self.control.wait_for_stop(IDLE_LOOK);
            phase = self.control.phase_at(Instant::now());
        }
        phase
    }

    /// The rr client: a request, its whole `answer`, a timestamp; the sample is the interval
    /// between timestamps, one round trip. The next request goes out right after the
    /// timestamp, before the bookkeeping (phase, window, histogram), which then overlaps its
    /// trip instead of lengthening it; the request sent when the phase turns out to have
    /// ended is answered and read, not counted. A round trip whose answer never came
    /// (datagrams) is counted by the receiver, not timed.
    fn rr_client(
        &self,
        mech: &mut dyn SendMechanism,
        ep: &Endpoint,
        window: &mut Window,
        totals: &mut Totals,
        mut answer: impl FnMut(u64) -> io::Result<bool>,
    ) -> io::Result<()> {
        let size = self.message_size as u64;
        let start = Instant::now();
        let mut batch = Batch::new(1, start);
        if self.stamp(window, &mut batch, start) != Phase::Stop {
            mech.send_message(ep, 0)?;
            totals.bytes += size;
            for request in 0u64.. {
                let completed = answer(request)?;
                let now = Instant::now();
                mech.send_message(ep, request + 1)?;
                totals.bytes += size;
                if completed {
                    totals.messages += 1;
                    batch.add(1, size);
                }
                if self.stamp(window, &mut batch, now) == Phase::Stop {
                    answer(request + 1)?;
                    break;
                }
            }
        }
        mech.finish(ep, Instant::now() + COMPLETION_WAIT)?;
        ep.finish_writing()
    }

    fn stream_receive(
        &self,
        receiver: &mut Receiver,
        ep: &Endpoint,
        window: &mut Window,
        totals: &mut Totals,
    ) -> io::Result<()> {
        let size = self.message_size as u64;
        let mut batch = Batch::new(self.stamp_every, Instant::now());
        loop {
            let got = receiver.receive(ep)?;
            if got.eof {
                // The sender stopped after the measured phase: the messages since the last
                // timestamp complete the batch now.
                self.stamp(window, &mut batch, Instant::now());
                return Ok(());
            }
            if got.timed_out && self.control.phase_at(Instant::now()) == Phase::Stop {
                // The end marker was lost: the window ends with the last timestamp, not with
                // the silence that followed it.
                receiver.end_marker_lost();
                window.close_at(batch.last);
                return Ok(());
            }
            if got.messages == 0 {
                continue;
            }
            totals.messages += got.messages;
            if batch.add(got.messages, got.messages * size) {
                self.stamp(window, &mut batch, Instant::now());
            }
        }
    }

    /// Answers each request, then counts it; the timestamp (once per batch) comes after the
    /// answer, off the round trip the client times.
    fn rr_server(
        &self,
        receiver: &mut Receiver,
        mech: &mut dyn SendMechanism,
        ep: &Endpoint,
        window: &mut Window,
        totals: &mut Totals,
    ) -> io::Result<()> {
        let size = self.message_size as u64;
        let mut batch = Batch::new(self.stamp_every, Instant::now());
        loop {
            let got = receiver.receive(ep)?;
            if got.eof {
                self.stamp(window, &mut batch, Instant::now());
                break;
            }
            if got.timed_out {
                if self.control.phase_at(Instant::now()) == Phase::Stop {
                    receiver.end_marker_lost();
                    break;
                }
                continue;
            }
            // The answer carries the request's numbers and pattern (datagrams may be lost, so
            // the server's own count can lag the client's).
            ep.answer_to(got.first_seq);
            mech.send_message(ep, got.message)?;
            totals.messages += 1;
            totals.bytes += size;
            if batch.add(1, size) {
                self.stamp(window, &mut batch, Instant::now());
            }
        }
        mech.finish(ep, Instant::now() + COMPLETION_WAIT)?;
        ep.finish_writing()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::batch::Batch;
    use crate::mechanism::receive::path::RecvPath;
    use crate::mechanism::receive::RecvMode;
    use crate::mechanism::{self, FlowContext, MechanismKind};
    use std::os::unix::net::UnixStream;

    /// One stream flow of `size`-byte `send` messages over a socket pair, its receiver
    /// counting to `share` if given, else measuring `measure` after `warmup`; its sender
    /// handing over at most `sends_at_most`, if given.
    fn stream_flow(
        size: usize,
        (share, sends_at_most): (Option<u64>, Option<u64>),
        (warmup, measure): (Duration, Duration),
    ) -> [ThreadSample; 2] {
        let (a, b) = UnixStream::pair().unwrap();
        let control = Arc::new(Control::default());
        let start = Arc::new(Barrier::new(3));
        let worker = |role, endpoint, count| Worker {
            flow: 0,
            role,
            cpu: None,
            message_size: size,
            counters: CounterSelection::None,
            slices: None,
            count,
            sends_at_most: sends_at_most.filter(|_| role == Role::Sender),
            stamp_every: super::super::batch::messages_per_stamp(size),
            control: control.clone(),
            start: start.clone(),
            endpoint: Arc::new(Endpoint::socket(endpoint)),
            reverse: false,
        };
        let ctx = FlowContext {
            flow: 0,
            message_size: size,
            fill_pattern: true,
            send_buffer: 1 << 16,
            queue_depth: 1,
            flush_each: false,
            framing: None,
        };
        let sender = worker(Role::Sender, a, None);
        let job = Job::StreamSend(mechanism::build(MechanismKind::SEND, ctx).unwrap());
        let sender = std::thread::spawn(move || sender.run(job));
        let receiver = worker(Role::Receiver, b, share.map(|s| (s, 1)));
        let mode = RecvMode::WholeMessage { max_call: size };
        let job = Job::StreamReceive(Receiver::new(0, size, mode, false, true, RecvPath::Recv));
        let receiver = std::thread::spawn(move || receiver.run(job));
        let duration = if share.is_some() {
            Duration::from_secs(60)
        } else {
            measure
        };
        control.schedule(Instant::now(), warmup, duration);
        start.wait();
        // The run ends at its schedule, or when the receiver stops it at its share.
        let (sender, receiver) = (sender.join().unwrap(), receiver.join().unwrap());
        [sender, receiver]
    }

    /// One rr flow of 64 B `send` requests over a socket pair; the client counts to `share`.
    fn rr_flow(share: u64) -> [ThreadSample; 2] {
        let (a, b) = UnixStream::pair().unwrap();
        let control = Arc::new(Control::default());
        let start = Arc::new(Barrier::new(3));
        let worker = |role, endpoint, count, stamp_every| Worker {
            flow: 0,
            role,
            cpu: None,
            message_size: 64,
            counters: CounterSelection::None,
            slices: None,
            count,
            sends_at_most: None,
            stamp_every,
            control: control.clone(),
            start: start.clone(),
            endpoint: Arc::new(Endpoint::socket(endpoint)),
            reverse: false,
        };
        let ctx = FlowContext {
            flow: 0,
            message_size: 64,
            fill_pattern: true,
            send_buffer: 1 << 16,
            queue_depth: 1,
            flush_each: true,
            framing: None,
        };
        let receiver = || {
            let mode = RecvMode::WholeMessage { max_call: 64 };
            Receiver::new(0, 64, mode, false, true, RecvPath::Recv)
        };
        let mech = || mechanism::build(MechanismKind::SEND, ctx).unwrap();
        let client = worker(Role::Sender, a, Some((share, 1)), 1);
        let job = Job::RrClient(mech(), receiver());
        let client = std::thread::spawn(move || client.run(job));
        let server = worker(Role::Receiver, b, None, 64);
        let job = Job::RrServer(receiver(), mech());
        let server = std::thread::spawn(move || server.run(job));
        control.schedule(Instant::now(), Duration::ZERO, Duration::from_secs(60));
        start.wait();
        [client.join().unwrap(), server.join().unwrap()]
    }

    #[test]
    fn the_rr_client_counts_its_share_and_reads_the_answer_to_the_request_after_it() {
        let [client, server] = rr_flow(50);
        assert_eq!((client.error.clone(), server.error.clone()), (None, None));
        let window = client.window.as_ref().unwrap();
        assert_eq!(window.messages, 50);
        assert_eq!(histogram_count(&client), 50, "one round trip per sample");
        assert!(client.total_messages >= 50);
        // Every request was answered, and every answer read, the last one included.
        assert_eq!(server.total_messages, client.sent_bytes / 64);
        assert_eq!(client.total_messages + 1, server.total_messages);
        assert_eq!(client.received_bytes, server.sent_bytes);
        assert_eq!(client.verifier.unwrap().wrong_bytes, 0);
    }

    #[test]
    fn messages_are_stamped_one_by_one_until_the_window_opens_then_in_batches() {
        let control = Arc::new(Control::default());
        let worker = Worker {
            flow: 0,
            role: Role::Receiver,
            cpu: None,
            message_size: 64,
            counters: CounterSelection::None,
            slices: None,
            count: None,
            sends_at_most: None,
            stamp_every: 64,
            control: control.clone(),
            start: Arc::new(Barrier::new(1)),
            endpoint: Arc::new(Endpoint::socket(UnixStream::pair().unwrap().0)),
            reverse: false,
        };
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        control.schedule(t0, ms(10), ms(100));
        let mut window = Window::new(CounterSelection::None);
        let mut batch = Batch::new(64, t0);
        assert!(batch.add(1, 64), "warm-up: the first message is stamped");
        assert_eq!(
            worker.stamp(&mut window, &mut batch, t0 + ms(5)),
            Phase::Warmup
        );
        assert!(batch.add(1, 64), "and the next, while the window waits");
        assert_eq!(
            worker.stamp(&mut window, &mut batch, t0 + ms(11)),
            Phase::Measure
        );
        assert!(
            window.is_open(),
            "opened by the first message of the measured phase"
        );
        assert!((1..64).all(|_| !batch.add(1, 64)));
        assert!(batch.add(1, 64), "then every 64th message");
        worker.stamp(&mut window, &mut batch, t0 + ms(12));
        assert_eq!(window.counted(), 64);
    }

    fn histogram_count(sample: &ThreadSample) -> u64 {
        let window = sample.window.as_ref().expect("the window opened");
        window.histogram.summary().map_or(0, |s| s.count)
    }

    #[test]
    fn a_count_not_a_multiple_of_the_batch_is_met_exactly_and_every_message_is_a_sample() {
        let share = 3 * super::super::batch::MAX_MESSAGES + 5;
        let [sender, receiver] =
            stream_flow(64, (Some(share), None), (Duration::ZERO, Duration::ZERO));
        assert_eq!(receiver.error, None);
        let window = receiver.window.as_ref().unwrap();
        assert_eq!(window.messages, share);
        assert_eq!(window.bytes, share * 64);
        assert_eq!(histogram_count(&receiver), share);
        assert!(receiver.total_messages >= share);
        assert_eq!(
            receiver.total_messages, sender.total_messages,
            "all delivered"
        );
        assert_eq!(receiver.verifier.unwrap().wrong_bytes, 0);
    }

    #[test]
    fn batched_timestamps_count_each_window_message_once_on_both_sides() {
        let ms = Duration::from_millis;
        let [sender, receiver] = stream_flow(256, (None, None), (ms(20), ms(100)));
        assert_eq!((sender.error.clone(), receiver.error.clone()), (None, None));
        assert_eq!(
            receiver.total_messages, sender.total_messages,
            "all delivered"
        );
        assert_eq!(receiver.received_bytes, sender.sent_bytes);
        for side in [&sender, &receiver] {
            let window = side.window.as_ref().unwrap();
            assert!(window.messages > 0 && window.messages <= side.total_messages);
            assert_eq!(histogram_count(side), window.messages, "{:?}", side.role);
        }
    }

    #[test]
    fn a_sender_with_a_most_hands_over_exactly_that_and_waits_for_the_stop() {
        let ms = Duration::from_millis;
        let most = 2 * super::super::batch::MAX_MESSAGES + 7;
        // Its peer counts one fewer (a server's side of a counted run: the receiver's first
        // message opens its window uncounted): the run ends at the count.
        let sends = (Some(most - 1), Some(most));
        let [sender, receiver] = stream_flow(64, sends, (ms(0), ms(0)));
        assert_eq!((sender.error.clone(), receiver.error.clone()), (None, None));
        assert_eq!(sender.total_messages, most);
        assert_eq!(receiver.total_messages, most, "nothing past the count");
        assert_eq!(receiver.window.as_ref().unwrap().messages, most - 1);
        // Nobody counts: the sender waits out the schedule, and its window ends at its last
        // message, not with the wait.
        let [sender, receiver] = stream_flow(64, (None, Some(most)), (ms(0), ms(300)));
        assert_eq!(sender.total_messages, most);
        assert_eq!(receiver.received_bytes, most * 64);
        let window = sender.window.as_ref().unwrap();
        assert_eq!(window.messages, most);
        assert!(window.elapsed < ms(200), "{:?}", window.elapsed);
        assert!(receiver.window.as_ref().unwrap().elapsed >= ms(300));
    }
}
