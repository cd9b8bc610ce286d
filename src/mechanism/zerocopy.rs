//! `zerocopy`: sendmsg(2) with MSG_ZEROCOPY over the 8 fields (msg_zerocopy.rst).
//! The kernel pins the fields' pages instead of copying, so a message's buffers may not be
//! rewritten until its completion arrives on the error queue. Messages therefore come from a
//! pool sized to the socket's in-flight window, within a memory cap per flow; a slot is reused
//! only once every send call that carried it is complete (the sender waits for it otherwise,
//! and counts the wait). Completions are reaped without stalling the send path: every
//! `REAP_EVERY` sends, whenever the socket is not writable, and on ENOBUFS (option memory used
//! up by pending notifications: nothing was queued, so the call is simply retried). On UDP
//! (SO_ZEROCOPY on a UDP socket) every datagram or GSO send is one call and gets its own
//! completion id; the kernel may still merge neighbouring ids into one range. Datagram numbers
//! are written into the message's fields, lent with the rest.
use super::completions::CompletionTracker;
use super::descriptor::{Crossover, MechanismDescriptor, MechanismKind};
use super::descriptor::{Patterns, Reuse, Transports};
use super::message::{Message, FIELDS};
use super::{pattern, send_all_vectored, FlowContext, SendMechanism};
use crate::sys::socket::{self, MSG_DONTWAIT, MSG_ZEROCOPY, POLLOUT};
use crate::sys::zerocopy::{read_error_queue, ErrorQueueEntry};
use crate::transport::datagram::{sub_iov, DatagramSocket, Framing};
use crate::transport::{Endpoint, Transport};
use std::io::{self, IoSlice};
use std::ops::Range;
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

const REAP_EVERY: u32 = 32;
/// Pool memory per flow, counting what each of a message's 8 heap fields costs beyond its
/// bytes (`FIELD_OVERHEAD`): at 256 B a message takes about twice its payload, and a pool
/// covering a 4 MiB window took 8 MiB per flow (76 MiB for 8 flows). 4 MiB covers the window
/// wherever completions come back on delivery (loopback and veth, where the kernel copies
/// anyway); where they come back on ACK a pool that runs dry makes the sender wait, and
/// `slot_waits` says how often. At least two messages, so one can fill while one flies.
const POOL_MEMORY_CAP: usize = 4 << 20;
/// A field's boxed-slice pointer (16 B) and its allocator header and rounding (16 B).
const FIELD_OVERHEAD: usize = 32;
/// A completion that takes longer than this means the kernel will not send it.
const SLOT_WAIT_LIMIT: Duration = Duration::from_secs(10);

static DESCRIPTOR: MechanismDescriptor = MechanismDescriptor {
    name: "zerocopy",
    help: "MSG_ZEROCOPY",
    transports: Transports::Only {
        transports: &[Transport::Tcp, Transport::Udp],
        because: "MSG_ZEROCOPY works on TCP and UDP sockets only",
    },
    patterns: Patterns {
        crr: Err(CRR_REFUSAL),
        bidir: false,
    },
    // Not tried before a run: a socket that refuses SO_ZEROCOPY fails the flow's set-up with
    // the kernel's error (`bytepath probe` shows it as MSG_ZEROCOPY).
    probe: || Ok(()),
    build: |ctx| Ok(Box::new(Zerocopy::new(ctx))),
    reuse: Reuse::OnNotification,
    buffers: |message_size, _| largest_pool(message_size),
    zerocopy_socket: true,
    nodelay: false,
    uses_queue_depth: false,
    zero_copy: Some("MSG_ZEROCOPY"),
    datagram_sends: pages_fit,
    crossover: Some(Crossover {
        against: MechanismKind::COPY,
        question: "From which message size does zerocopy beat copy?",
        always: true,
    }),
};

impl MechanismKind {
    /// `zerocopy`: sendmsg(MSG_ZEROCOPY), completions read from the error queue.
    pub const ZEROCOPY: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}

/// The most pages one zero-copy datagram (or GSO send) may pin: the kernel's MAX_SKB_FRAGS,
/// 17 unless built otherwise; a send that needs more fails with EMSGSIZE.
const MAX_SKB_FRAGS: usize = 17;
const PAGE: usize = 4096;

/// Over udp every send pins the pages its bytes lie in, and the message's 8 separately
/// allocated fields each start anywhere in a page, so a send of 40 KiB (fields of 5 KiB, 3
/// pages each at worst) needs 24 and the kernel refuses it: refused before the run instead,
/// with what fits. (`uring-zc` sends from one contiguous buffer: 65507 B pin at most 17 pages.)
pub(crate) fn pages_fit(framing: &Framing, message_size: usize) -> Result<(), String> {
    let field = message_size / FIELDS;
    let worst = (0..framing.sends())
        .map(|send| pages_pinned(framing.send_range(send), field))
        .max()
        .unwrap_or(0);
    if worst <= MAX_SKB_FRAGS {
        return Ok(());
    }
    Err(format!(
        "--mechanism zerocopy with --transport udp and --size {message_size}: one send of the \
         message's fields may pin {worst} pages, and the kernel takes at most {MAX_SKB_FRAGS} \
         in a zero-copy datagram (MAX_SKB_FRAGS; EMSGSIZE); allowed: a --size whose sends pin \
         at most {MAX_SKB_FRAGS} pages (32 KiB always does), or uring-zc, whose buffer is one \
         piece"
    ))
}

/// Pages bytes `range` of a message of fields of `field` bytes may lie in, each field starting
/// anywhere in a page.
fn pages_pinned(range: Range<usize>, field: usize) -> usize {
    let mut pages = 0;
    let mut at = range.start;
    while at < range.end {
        let end = ((at / field + 1) * field).min(range.end);
        pages += (end - at + PAGE - 2) / PAGE + 1;
        at = end;
    }
    pages
}

/// Why no zero-copy mechanism carries `--pattern crr`.
pub(crate) const CRR_REFUSAL: &str = "zero-copy completions arrive on the socket that sent, \
     which a crr transaction closes right after its answer";

/// Zero-copy accounting of one flow (or, summed, of a side).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ZerocopyStats {
    /// Successful sendmsg(MSG_ZEROCOPY) calls (each takes one completion id).
    pub send_calls: u64,
    /// Send calls the kernel reported complete.
    pub completions: u64,
    /// Completions flagged SO_EE_CODE_ZEROCOPY_COPIED: the kernel copied anyway.
    pub copied: u64,
    /// Send calls still without completion when the bounded end-of-run wait gave up.
    pub outstanding_at_end: u64,
    /// Calls refused with ENOBUFS and retried after reaping.
    pub enobufs_retries: u64,
    /// Completion ranges refused as unknown or already counted (should stay 0).
    pub bad_ranges: u64,
    /// Messages in the buffer pool of one flow.
    pub pool_messages: usize,
    /// Sends that found their pool slot still in flight and waited for its completion.
    #[serde(default)]
    pub slot_waits: u64,
}

impl ZerocopyStats {
    pub fn add(&mut self, other: &ZerocopyStats) {
        self.send_calls += other.send_calls;
        self.completions += other.completions;
        self.copied += other.copied;
        self.outstanding_at_end += other.outstanding_at_end;
        self.enobufs_retries += other.enobufs_retries;
        self.bad_ranges += other.bad_ranges;
        self.pool_messages = self.pool_messages.max(other.pool_messages);
        self.slot_waits += other.slot_waits;
    }

    /// Share of completions the kernel copied anyway, in percent.
    pub fn copied_percent(&self) -> Option<f64> {
        (self.completions > 0).then(|| 100.0 * self.copied as f64 / self.completions as f64)
    }
}

struct Slot {
    message: Message,
    /// Ids of the send calls that carried this message (several when a stream send was
    /// short, or a message is several datagrams); reusable once every one is complete.
    ids: Range<u64>,
}

/// Everything but the pool, so the pool can be borrowed by the iovec while this is mutated.
struct State {
    tracker: CompletionTracker,
    since_reap: u32,
    stats: ZerocopyStats,
}

pub struct Zerocopy {
    pool: Vec<Slot>,
    next_slot: usize,
    state: State,
    ctx: FlowContext,
}

/// Messages needed to cover the send buffer plus one being filled, within the memory cap.
pub fn pool_size(message_size: usize, send_buffer: usize) -> usize {
    let window = send_buffer.div_ceil(message_size) + 2;
    let per_message = message_size + super::message::FIELDS * FIELD_OVERHEAD;
    window.min(POOL_MEMORY_CAP / per_message).max(2)
}

/// The pool the memory check counts before a run: the one a 4 MiB send buffer (tcp_wmem's
/// default maximum) gets.
pub(crate) fn largest_pool(message_size: usize) -> usize {
    pool_size(message_size, 4 << 20)
}

impl Zerocopy {
    pub fn new(ctx: FlowContext) -> Self {
        let n = pool_size(ctx.message_size, ctx.send_buffer);
        let pool = (0..n)
            .map(|_| Slot {
                message: Message::new(ctx.message_size, ctx.flow),
                ids: 0..0,
            })
            .collect();
        let stats = ZerocopyStats {
            pool_messages: n,
            ..Default::default()
        };
        let state = State {
            tracker: CompletionTracker::default(),
            since_reap: 0,
            stats,
        };
        Zerocopy {
            pool,
            next_slot: 0,
            state,
            ctx,
        }
    }
}

impl SendMechanism for Zerocopy {
    fn send_message(&mut self, ep: &Endpoint, seq: u64) -> io::Result<()> {
        let fd = socket_of(ep)?;
        let idx = self.next_slot;
        self.next_slot = (idx + 1) % self.pool.len();
        let slot = &mut self.pool[idx];
        self.state.wait_for_slot(fd, slot.ids.clone())?;
        if self.ctx.fill_pattern {
            slot.message.fill(pattern::message_seed(self.ctx.flow, seq));
        }
        let state = &mut self.state;
        let first_id = state.tracker.issued_ids();
        match ep.datagram_socket() {
            None => {
                let mut iov = slot.message.iov();
                send_all_vectored(&mut iov, |iov| state.send_call(fd, iov))?;
            }
            Some(socket) => send_datagrams(state, fd, socket, &mut slot.message)?,
        }
        slot.ids = first_id..state.tracker.issued_ids();
        Ok(())
    }

    fn finish(&mut self, ep: &Endpoint, deadline: Instant) -> io::Result<()> {
        let fd = socket_of(ep)?;
        while self.state.tracker.outstanding() > 0 && Instant::now() < deadline {
            if self.state.reap(fd)? == 0 {
                socket::poll_one(fd, 0, 10)?;
            }
        }
        self.state.stats.outstanding_at_end = self.state.tracker.outstanding();
        Ok(())
    }

    fn zerocopy_stats(&self) -> Option<ZerocopyStats> {
        let t = &self.state.tracker;
        let mut stats = self.state.stats;
        stats.send_calls = t.issued_ids();
        stats.completions = t.completed();
        stats.copied = t.copied();
        Some(stats)
    }
}

/// One message over a datagram socket: its numbers written into the message's own memory
/// (which the kernel reads until the completion, so no separate header may be), then one
/// zero-copy send call per datagram or GSO send. A datagram send is whole or fails.
fn send_datagrams(
    state: &mut State,
    fd: BorrowedFd<'_>,
    socket: &DatagramSocket,
    message: &mut Message,
) -> io::Result<()> {
    let framing = *socket.framing();
    framing.number_parts(socket.number_message(), |at, bytes| {
        message.write_at(at, &bytes)
    });
    let iov = message.iov();
    for send in 0..framing.sends() {
        let mut list = [IoSlice::new(&[]); FIELDS];
        let used = sub_iov(&iov, framing.send_range(send), &mut list)
            .expect("a send's bytes lie in the message's fields, one entry each at most");
        state.send_call(fd, &list[..used])?;
        socket.count_sent(framing.send_parts(send).len() as u32);
    }
    Ok(())
}

/// Zero copy is a socket feature; config refuses it on other transports.
fn socket_of(ep: &Endpoint) -> io::Result<std::os::fd::BorrowedFd<'_>> {
    ep.socket_fd()
        .ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, "MSG_ZEROCOPY needs a socket"))
}

impl State {
    /// One non-blocking zero-copy send call; waits for writability or option memory as needed.
    fn send_call(&mut self, fd: BorrowedFd<'_>, iov: &[IoSlice<'_>]) -> io::Result<usize> {
        loop {
            match socket::sendmsg(fd, iov, MSG_ZEROCOPY | MSG_DONTWAIT) {
                Ok(n) => {
                    self.tracker.issue();
                    self.since_reap += 1;
                    if self.since_reap >= REAP_EVERY {
                        self.reap(fd)?;
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.reap(fd)?;
                    // POLLERR (a pending completion) wakes poll too, whatever `events` says.
                    socket::poll_one(fd, POLLOUT, 100)?;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                    self.stats.enobufs_retries += 1;
                    if self.reap(fd)? == 0 {
                        socket::poll_one(fd, 0, 10)?;
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads every pending notification; returns how many sends they completed.
    fn reap(&mut self, fd: BorrowedFd<'_>) -> io::Result<u64> {
        self.since_reap = 0;
        let mut completed = 0;
        while let Some(entry) = read_error_queue(fd)? {
            match entry {
                ErrorQueueEntry::Completion(range) => match self.tracker.complete(range) {
                    Ok(n) => completed += n,
                    Err(_) => self.stats.bad_ranges += 1,
                },
                ErrorQueueEntry::Other { errno: 0, origin } => {
                    return Err(io::Error::other(format!(
                        "the error queue held an entry of origin {origin} with no error number"
                    )))
                }
                ErrorQueueEntry::Other { errno, .. } => {
                    return Err(io::Error::from_raw_os_error(errno as i32))
                }
            }
        }
        Ok(completed)
    }

    /// Waits until every send call of a slot's last use is complete (counted once in
    /// `slot_waits` when any is not).
    fn wait_for_slot(&mut self, fd: BorrowedFd<'_>, ids: Range<u64>) -> io::Result<()> {
        let mut waited = false;
        for id in ids {
            if !self.tracker.is_complete(id) {
                if !waited {
                    self.stats.slot_waits += 1;
                    waited = true;
                }
                self.wait_until_complete(fd, id)?;
            }
        }
        Ok(())
    }

    fn wait_until_complete(&mut self, fd: BorrowedFd<'_>, id: u64) -> io::Result<()> {
        let started = Instant::now();
        while !self.tracker.is_complete(id) {
            if self.reap(fd)? == 0 {
                if started.elapsed() > SLOT_WAIT_LIMIT {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("zero-copy completion of send {id} did not arrive within 10 s"),
                    ));
                }
                socket::poll_one(fd, 0, 100)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_send_pins_two_pages_a_field_of_4_kib_and_three_of_5_kib_at_worst() {
        assert_eq!(pages_pinned(0..32 << 10, 4 << 10), 16);
        assert_eq!(pages_pinned(0..40 << 10, 5 << 10), 24);
        assert_eq!(pages_pinned(1..2, 8), 1);
    }

    #[test]
    fn pool_covers_the_send_buffer_within_the_memory_cap() {
        assert_eq!(pool_size(4096, 64 * 4096), 66);
        assert_eq!(pool_size(64 << 20, 4 << 20), 2, "never fewer than two");
        // 256 B over a 4 MiB window: 16,386 messages wanted, 8,192 of 512 B each fit 4 MiB.
        assert_eq!(pool_size(256, 4 << 20), 8192);
        for size in [64, 256, 4096, 1 << 20] {
            let n = pool_size(size, 1 << 30);
            assert!(
                n == 2 || n * (size + 8 * FIELD_OVERHEAD) <= POOL_MEMORY_CAP,
                "{size}"
            );
        }
    }
}
