//! The per-flow loops: stream sender and receiver, rr client and server. Each reads the clock
//! once per message and the phase once per message; everything else on the path is the
//! mechanism's own system calls.
use super::control::{Control, Phase};
use super::slices::SliceBoard;
use super::window::{Window, WindowResult};
use crate::measure::counters::CounterSelection;
use crate::mechanism::page_refs::SpliceStats;
use crate::mechanism::receive::{DatagramStats, Receiver, Verifier};
use crate::mechanism::recv_path::ReceivePathStats;
use crate::mechanism::{SendMechanism, ZerocopyStats};
use crate::sys::affinity;
use crate::transport::Endpoint;
use std::io;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// How long a zero-copy sender waits at the end for outstanding completions.
const COMPLETION_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Stream sender, or rr client.
    Sender,
    /// Stream receiver, or rr server.
    Receiver,
}

/// What one flow's side does.
pub enum Job {
    StreamSend(Box<dyn SendMechanism>),
    StreamReceive(Receiver),
    RrClient(Box<dyn SendMechanism>, Receiver),
    RrServer(Receiver, Box<dyn SendMechanism>),
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
    pub control: Arc<Control>,
    pub start: Arc<Barrier>,
    pub endpoint: Arc<Endpoint>,
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
    pub error: Option<String>,
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
            error: Some(error),
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
struct Totals {
    messages: u64,
    /// Bytes handed to the kernel.
    bytes: u64,
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
        let ep = &*self.endpoint;
        let result = match pinned {
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!("pinning to CPU {:?}: {e}", self.cpu),
            )),
            Ok(()) => self.drive(&mut job, ep, &mut window, &mut totals),
        };
        if result.is_err() {
            // Wake the peer thread, which may be blocked on this flow.
            ep.abort();
        }
        let (mech, receiver) = match job {
            Job::StreamSend(m) => (Some(m), None),
            Job::StreamReceive(r) => (None, Some(r)),
            Job::RrClient(m, r) | Job::RrServer(r, m) => (Some(m), Some(r)),
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
            verifier: receiver.and_then(|r| r.verifier),
            datagrams,
            error: result.err().map(|e| e.to_string()),
            pid: std::process::id(),
        }
    }

    /// With a count, closes this flow's window at its share and reports the flow done.
    #[inline]
    fn check_count(&self, window: &mut Window, now: Instant) {
        if let Some((share, flows)) = self.count {
            if window.is_open() && window.counted() >= share {
                window.close_at(now);
                self.control.flow_done(flows);
            }
        }
    }

    fn drive(
        &self,
        job: &mut Job,
        ep: &Endpoint,
        window: &mut Window,
        totals: &mut Totals,
    ) -> io::Result<()> {
        match job {
            Job::StreamSend(mech) => {
                self.send_loop(mech.as_mut(), ep, window, totals, |_| Ok(true))
            }
            Job::StreamReceive(receiver) => self.stream_receive(receiver, ep, window, totals),
            Job::RrClient(mech, receiver) => {
                let answer = |request| receiver.receive_answer(ep, request);
                self.send_loop(mech.as_mut(), ep, window, totals, answer)
            }
            Job::RrServer(receiver, mech) => {
                self.rr_server(receiver, mech.as_mut(), ep, window, totals)
            }
        }
    }

    /// The sending side of stream and rr: send, then `after_send` (nothing for stream; wait for
    /// the whole answer for rr), then one timestamp. The latency sample is the interval between
    /// consecutive timestamps: time per message handed over (stream) or the round trip (rr).
    /// A round trip whose answer never came (datagrams) is counted by the receiver, not timed.
    fn send_loop(
        &self,
        mech: &mut dyn SendMechanism,
        ep: &Endpoint,
        window: &mut Window,
        totals: &mut Totals,
        mut after_send: impl FnMut(u64) -> io::Result<bool>,
    ) -> io::Result<()> {
        let size = self.message_size as u64;
        let mut last = Instant::now();
        let mut sent = 0u64;
        loop {
            let phase = self.control.phase_at(last);
            if !window.follow(phase, last) && phase == Phase::Stop {
                break;
            }
            mech.send_message(ep, sent)?;
            totals.bytes += size;
            let completed = after_send(sent)?;
            sent += 1;
            let now = Instant::now();
            if !completed {
                last = now;
                continue;
            }
            totals.messages += 1;
            if window.is_open() {
                window.record(now, 1, size);
                window.latency(now - last, 1);
                self.check_count(window, now);
            }
            last = now;
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
        let mut last = Instant::now();
        loop {
            let got = receiver.receive(ep)?;
            if got.eof {
                return Ok(());
            }
            if got.timed_out && self.control.phase_at(Instant::now()) == Phase::Stop {
                // The end marker was lost: the window ends with the last message, not with
                // the silence that followed it.
                receiver.end_marker_lost();
                window.close_at(last);
                return Ok(());
            }
            if got.messages == 0 {
                continue;
            }
            totals.messages += got.messages;
            let now = Instant::now();
            let counting = window.is_open();
            window.follow(self.control.phase_at(now), now);
            if counting {
                window.record(now, got.messages, got.messages * size);
                window.latency(now - last, got.messages);
                self.check_count(window, now);
            }
            last = now;
        }
    }

    fn rr_server(
        &self,
        receiver: &mut Receiver,
        mech: &mut dyn SendMechanism,
        ep: &Endpoint,
        window: &mut Window,
        totals: &mut Totals,
    ) -> io::Result<()> {
        let size = self.message_size as u64;
        loop {
            let got = receiver.receive(ep)?;
            if got.eof {
                break;
            }
            let now = Instant::now();
            if got.timed_out {
                if self.control.phase_at(now) == Phase::Stop {
                    receiver.end_marker_lost();
                    break;
                }
                continue;
            }
            let counting = window.is_open();
            window.follow(self.control.phase_at(now), now);
            // The answer carries the request's numbers and pattern (datagrams may be lost, so
            // the server's own count can lag the client's).
            ep.answer_to(got.first_seq);
            mech.send_message(ep, got.message)?;
            totals.messages += 1;
            totals.bytes += size;
            if counting {
                window.record(now, 1, size);
            }
        }
        mech.finish(ep, Instant::now() + COMPLETION_WAIT)?;
        ep.finish_writing()
    }
}
