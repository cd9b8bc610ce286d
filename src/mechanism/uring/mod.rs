//! `uring`, `uring-gather`, `uring-zc`: the sending side through io_uring (io_uring(7),
//! io_uring_prep_send(3), io_uring_prep_sendmsg(3), io_uring_prep_send_zc(3)). Each is a file
//! of its own with its descriptor (`send`, `gather`, `zc`); the ring code they share is here.
//! io_uring does not order independent sends on one socket, so messages go out in batches of
//! `--queue-depth` linked entries (IOSQE_IO_LINK on all but the last), each with MSG_WAITALL.
//! A batch is submitted when full, or at once when every message must be on its way (rr), and
//! the next one only after every result of this one is in. A send that still ends short fails
//! the link: it and the cancelled rest are resubmitted from where each stopped, in order.
//! On UDP (`uring`, `uring-zc`) a message is several sends, one per datagram or GSO send,
//! its numbers written into the slot's memory; a batch holds `--queue-depth` messages' sends,
//! and a datagram send is whole or fails. Buffers stay with the ring (`sys::uring_send`)
//! until the kernel is done with them; the zero-copy side (notifications, buffer pool) is in
//! `zc`.
mod gather;
mod send;
mod zc;

use super::message::Message;
use super::{pattern, FlowContext, SendMechanism, ZerocopyStats};
use crate::sys::uring_send::{self, Completion, LentMemory, SendOp, SendRing};
use crate::transport::datagram::DatagramSocket;
use crate::transport::{Endpoint, Transport};
use std::io;
use std::os::fd::BorrowedFd;
use std::time::Instant;
use zc::Notifications;

/// The sockets io_uring sendmsg goes to here, and why (the refusal of the other transports):
/// a slot has one msghdr, so one send of it at a time, where a message of datagrams is several.
const STREAM_SOCKETS: &[Transport] = &[Transport::Tcp, Transport::Unix];
const STREAM_SOCKETS_ONLY: &str = "io_uring sendmsg here goes to stream sockets (one msghdr per message, where a message of datagrams needs one per datagram)";
/// The sockets io_uring send goes to here, and why.
const SEND_SOCKETS: &[Transport] = &[Transport::Tcp, Transport::Unix, Transport::Udp];
const SEND_SOCKETS_ONLY: &str = "io_uring sends here go to stream sockets and UDP";
/// The most entries a ring's submission queue is built with (a batch of datagrams of big
/// split messages would ask for more): the same bound as `--queue-depth`'s
/// (`config::MAX_QUEUE_DEPTH`, a layer above, so restated here).
const MAX_RING_ENTRIES: usize = 4096;

/// `uring` and `uring-gather` hold one message per queue-depth slot.
fn slot_per_queue_entry(_message_size: usize, queue_depth: u32) -> usize {
    queue_depth as usize
}

/// A message's memory as one slot of the ring holds it.
pub(super) trait SlotMemory: LentMemory + Sized {
    /// A message of `ctx`'s size, holding message 0's pattern.
    fn allocate(ctx: &FlowContext) -> Self;
    /// Writes the pattern of message `seed`.
    fn fill(&mut self, seed: u64);
    /// Writes `bytes` at `offset` of the message (a datagram's number).
    fn write_at(&mut self, offset: usize, bytes: &[u8]);
}

/// `uring` and `uring-zc`: one contiguous buffer.
impl SlotMemory for Box<[u8]> {
    fn allocate(ctx: &FlowContext) -> Self {
        let mut buf = vec![0u8; ctx.message_size].into_boxed_slice();
        pattern::fill(pattern::message_seed(ctx.flow, 0), 0, &mut buf);
        buf
    }

    fn fill(&mut self, seed: u64) {
        pattern::fill(seed, 0, self);
    }

    fn write_at(&mut self, offset: usize, bytes: &[u8]) {
        self[offset..offset + bytes.len()].copy_from_slice(bytes);
    }
}

/// `uring-gather`: the 8 separately allocated fields.
impl SlotMemory for Message {
    fn allocate(ctx: &FlowContext) -> Self {
        Message::new(ctx.message_size, ctx.flow)
    }

    fn fill(&mut self, seed: u64) {
        Message::fill(self, seed);
    }

    fn write_at(&mut self, offset: usize, bytes: &[u8]) {
        Message::write_at(self, offset, bytes);
    }
}

/// One send of a batch: its slot, where its bytes start in the slot and how many, how much
/// the kernel has taken, the result of its latest submission, and the datagrams it carries
/// (0 on a stream, where a send is a whole message and may end short).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pending {
    pub slot: usize,
    pub start: usize,
    pub len: usize,
    pub done: usize,
    pub result: Option<i32>,
    pub datagrams: u32,
}

impl Pending {
    /// A whole message of a stream.
    pub fn new(slot: usize, len: usize) -> Pending {
        Pending {
            slot,
            start: 0,
            len,
            done: 0,
            result: None,
            datagrams: 0,
        }
    }

    /// One datagram, or one GSO send of `datagrams`: bytes `range` of the slot's message.
    pub fn datagrams(slot: usize, range: std::ops::Range<usize>, datagrams: u32) -> Pending {
        Pending {
            start: range.start,
            datagrams,
            ..Pending::new(slot, range.len())
        }
    }
}

/// Applies the results of one linked submission of `chain` (in stream order). Returns the
/// index of the first message to resubmit (it ended short, was interrupted, or was cancelled
/// behind one that did), or `None` when the kernel took every byte. A message that took bytes
/// after an earlier one stopped would have reordered the stream: that is an error, as is any
/// result other than bytes, ECANCELED, EINTR or EAGAIN.
pub(crate) fn settle(chain: &mut [Pending]) -> io::Result<Option<usize>> {
    let mut first_unfinished = None;
    for (i, p) in chain.iter_mut().enumerate() {
        let res = p.result.take().expect("every submitted send has a result");
        if res > 0 {
            if let Some(k) = first_unfinished {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("io_uring send {i} of a linked batch took bytes after send {k} stopped: stream order lost"),
                ));
            }
            p.done += res as usize;
            if p.datagrams > 0 && p.done != p.len {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "io_uring send of a datagram took {} bytes of {}",
                        p.done, p.len
                    ),
                ));
            }
            if p.done > p.len {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "io_uring send took {} bytes of a {}-byte message",
                        p.done, p.len
                    ),
                ));
            }
        } else if res == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        } else if !matches!(-res, libc::ECANCELED | libc::EINTR | libc::EAGAIN) {
            return Err(io::Error::from_raw_os_error(-res));
        }
        if p.done < p.len {
            first_unfinished.get_or_insert(i);
        }
    }
    Ok(first_unfinished)
}

/// Sends `batch` in order: `submit` sends `batch[first..]` as one linked chain and fills
/// every entry's `result`; whatever did not finish is submitted again from where it stopped.
/// Returns how many resubmissions it took. `submit` is a parameter so this is tested without
/// a kernel.
pub(crate) fn send_in_order(
    batch: &mut [Pending],
    mut submit: impl FnMut(&mut [Pending]) -> io::Result<()>,
) -> io::Result<u64> {
    let mut first = 0;
    let mut resubmissions = 0;
    while first < batch.len() {
        submit(&mut batch[first..])?;
        match settle(&mut batch[first..])? {
            None => break,
            Some(i) => {
                first += i;
                resubmissions += 1;
            }
        }
    }
    Ok(resubmissions)
}

/// One flow's io_uring sender.
pub(super) struct UringSender<M: SlotMemory> {
    pub(super) ring: SendRing<M>,
    /// Sends appended since the last submission: a message each on a stream, a datagram (or
    /// GSO send) each on UDP; at most `capacity`.
    pub(super) batch: Vec<Pending>,
    /// Messages in `batch` (a batch is submitted at `--queue-depth` of them).
    in_batch: usize,
    /// Entries of the ring's submission queue: the sends of `--queue-depth` messages, within
    /// `MAX_RING_ENTRIES`.
    capacity: usize,
    pub(super) ctx: FlowContext,
    /// SEND_ZC: slots are reused round-robin, each once its notification came.
    zc: Option<Notifications>,
    pub(super) next_slot: usize,
}

impl<M: SlotMemory> UringSender<M> {
    /// `queue_depth` slots for SEND and SENDMSG (a slot is free again at its result); for
    /// SEND_ZC the zero-copy pool, at least `queue_depth`.
    pub(super) fn new(op: SendOp, ctx: FlowContext) -> io::Result<UringSender<M>> {
        let depth = ctx.queue_depth.max(1) as usize;
        let slots = match op {
            SendOp::SendZc => {
                super::zerocopy_pool_size(ctx.message_size, ctx.send_buffer).max(depth)
            }
            SendOp::Send | SendOp::SendMsg => depth,
        };
        let sends = ctx.framing.map_or(1, |f| f.sends() as usize);
        let capacity = depth.saturating_mul(sends).min(MAX_RING_ENTRIES);
        let memory = (0..slots).map(|_| M::allocate(&ctx)).collect();
        Ok(UringSender {
            ring: SendRing::new(op, memory, capacity as u32)?,
            batch: Vec::with_capacity(capacity),
            in_batch: 0,
            capacity,
            ctx,
            zc: (op == SendOp::SendZc).then(|| Notifications::new(slots)),
            next_slot: 0,
        })
    }

    /// The slot for the next message: its place among the batch's messages, or for SEND_ZC
    /// the next of the pool once the kernel has released it.
    fn take_slot(&mut self, seq: u64) -> io::Result<usize> {
        if self.zc.is_none() {
            return Ok(self.in_batch);
        }
        let slot = self.next_slot;
        self.next_slot = (slot + 1) % self.ring.slots();
        self.wait_released(slot, seq)?;
        Ok(slot)
    }

    /// Appends the sends of one message of datagrams, numbered in the slot's memory: one per
    /// datagram, or per GSO send. Returns whether the batch filled up on the way and was
    /// submitted (a message of more sends than the ring holds).
    fn push_datagrams(
        &mut self,
        fd: BorrowedFd<'_>,
        socket: &DatagramSocket,
        slot: usize,
    ) -> io::Result<bool> {
        let framing = *socket.framing();
        let memory = self.ring.memory_mut(slot).expect("a taken slot is free");
        framing.number_parts(socket.number_message(), |at, bytes| {
            memory.write_at(at, &bytes)
        });
        let mut overflowed = false;
        for send in 0..framing.sends() {
            if self.batch.len() == self.capacity {
                self.flush(fd, Some(socket))?;
                overflowed = true;
            }
            let datagrams = framing.send_parts(send).len() as u32;
            let range = framing.send_range(send);
            self.batch.push(Pending::datagrams(slot, range, datagrams));
        }
        Ok(overflowed)
    }

    /// Submits the batch and waits for all of it, resubmitting what ended short; counts the
    /// datagrams it carried once the kernel took them.
    fn flush(&mut self, fd: BorrowedFd<'_>, socket: Option<&DatagramSocket>) -> io::Result<()> {
        let UringSender {
            ring, batch, zc, ..
        } = self;
        let sent = send_in_order(batch, |chain| {
            let last = chain.len() - 1;
            for (i, p) in chain.iter().enumerate() {
                let range = p.start + p.done..p.start + p.len;
                ring.push(fd, p.slot, range, i < last, i as u32)?;
            }
            let mut results = 0;
            while results < chain.len() {
                ring.wait(chain.len() - results, None)?;
                results += reap(ring, chain, zc);
            }
            Ok(())
        });
        if let (Ok(_), Some(socket)) = (&sent, socket) {
            socket.count_sent(self.batch.iter().map(|p| p.datagrams).sum());
        }
        self.batch.clear();
        self.in_batch = 0;
        sent.map(drop)
    }
}

/// Takes every queued completion: results into `chain` by tag, notifications into `zc`.
/// Returns how many results it took.
fn reap<M: LentMemory>(
    ring: &mut SendRing<M>,
    chain: &mut [Pending],
    zc: &mut Option<Notifications>,
) -> usize {
    let mut results = 0;
    while let Some(c) = ring.next_completion() {
        if let Some(z) = zc.as_mut() {
            z.count(&c);
        }
        if let Completion::Sent { tag, result, .. } = c {
            chain[tag as usize].result = Some(result);
            results += 1;
        }
    }
    results
}

impl<M: SlotMemory> SendMechanism for UringSender<M> {
    fn send_message(&mut self, ep: &Endpoint, seq: u64) -> io::Result<()> {
        let fd = socket_of(ep)?;
        let socket = ep.datagram_socket();
        let sends = socket.map_or(1, |d| d.framing().sends() as usize);
        if !self.batch.is_empty() && self.batch.len() + sends > self.capacity {
            self.flush(fd, socket)?;
        }
        let slot = self.take_slot(seq)?;
        if self.ctx.fill_pattern {
            let seed = pattern::message_seed(self.ctx.flow, seq);
            self.ring
                .memory_mut(slot)
                .expect("a taken slot is free")
                .fill(seed);
        }
        let overflowed = match socket {
            None => {
                self.batch.push(Pending::new(slot, self.ctx.message_size));
                false
            }
            Some(socket) => self.push_datagrams(fd, socket, slot)?,
        };
        self.in_batch += 1;
        let full = self.in_batch >= self.ctx.queue_depth.max(1) as usize;
        if self.ctx.flush_each || full || overflowed {
            self.flush(fd, socket)?;
        }
        Ok(())
    }

    fn finish(&mut self, ep: &Endpoint, deadline: Instant) -> io::Result<()> {
        let fd = socket_of(ep)?;
        if !self.batch.is_empty() {
            self.flush(fd, ep.datagram_socket())?;
        }
        self.wait_all_released(deadline)
    }

    fn zerocopy_stats(&self) -> Option<ZerocopyStats> {
        self.zc.as_ref().map(|z| z.stats)
    }
}

/// io_uring sends here go to sockets; config refuses the other transports.
fn socket_of(ep: &Endpoint) -> io::Result<BorrowedFd<'_>> {
    ep.socket_fd()
        .ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, "io_uring sends need a socket"))
}

/// One flow's sender for `op`, its messages in `M`.
fn build<M: SlotMemory + 'static>(
    op: SendOp,
    ctx: FlowContext,
) -> io::Result<Box<dyn SendMechanism>> {
    Ok(Box::new(UringSender::<M>::new(op, ctx)?))
}

/// Whether this kernel can set io_uring up and has `op` (IORING_REGISTER_PROBE); `Err` is
/// the reason in one line.
fn supported(op: SendOp) -> Result<(), String> {
    let name = match op {
        SendOp::Send => "SEND",
        SendOp::SendMsg => "SENDMSG",
        SendOp::SendZc => "SEND_ZC",
    };
    match uring_send::supports(op) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!(
            "io_uring {name} unsupported by this kernel (IORING_REGISTER_PROBE)"
        )),
        Err(e) => Err(format!(
            "io_uring unavailable: setup or IORING_REGISTER_PROBE failed: {e}"
        )),
    }
}

/// Loopback TCP pairs and a checking reader, for this module's tests and `zc`'s.
#[cfg(test)]
pub(super) mod loopback;

#[cfg(test)]
mod tests {
    use super::super::MechanismKind;
    use super::loopback::{available, context, pair, reader, send};
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;
    use std::time::Duration;

    /// 8-byte messages (1-byte fields), an odd field size, and the sizes of the measurements.
    const SIZES: [usize; 5] = [8, 4096 + 8 * 3, 64 << 10, 512 << 10, 1 << 20];

    /// Every byte of every message arrives in order, at every size and queue depth, whether
    /// batches fill (the last one partial, flushed by `finish`) or go one message at a time.
    fn delivers_every_byte_in_order(kind: MechanismKind) {
        if !available(kind) {
            return;
        }
        for size in SIZES {
            for depth in [1u32, 3, 16] {
                for flush_each in [false, true] {
                    let what = format!(
                        "{} size {size} depth {depth} flush_each {flush_each}",
                        kind.name()
                    );
                    let count = (depth + depth / 2 + 1) as u64;
                    let (ep, rx) = pair(None);
                    let check = reader(rx, 3, size, Duration::ZERO);
                    let mut mech = (kind.build)(context(size, depth, flush_each)).unwrap();
                    send(mech.as_mut(), &ep, count).unwrap_or_else(|e| panic!("{what}: {e}"));
                    let v = check.join().unwrap();
                    assert_eq!(v.checked_bytes, count * size as u64, "{what}");
                    assert_eq!(v.wrong_bytes, 0, "{what}: {:?}", v.first);
                    if let Some(z) = mech.zerocopy_stats() {
                        assert!(z.send_calls >= count, "{what}: {z:?}");
                        assert_eq!(z.completions, z.send_calls, "{what}: {z:?}");
                        assert_eq!(z.outstanding_at_end, 0, "{what}");
                        assert!(z.pool_messages >= depth as usize, "{what}");
                    } else {
                        assert_eq!(kind.zero_copy, None, "{what}: no zero-copy accounting");
                    }
                }
            }
        }
    }

    #[test]
    fn uring_delivers_every_byte_in_order() {
        delivers_every_byte_in_order(MechanismKind::URING);
    }

    #[test]
    fn uring_gather_delivers_every_byte_in_order() {
        delivers_every_byte_in_order(MechanismKind::URING_GATHER);
    }

    #[test]
    fn uring_zc_delivers_every_byte_in_order() {
        delivers_every_byte_in_order(MechanismKind::URING_ZC);
    }

    #[test]
    fn this_kernel_supports_all_three_opcodes_and_says_so() {
        for kind in [
            MechanismKind::URING,
            MechanismKind::URING_GATHER,
            MechanismKind::URING_ZC,
        ] {
            if let Err(reason) = (kind.probe)() {
                assert!(
                    !reason.contains('\n') && reason.starts_with("io_uring "),
                    "{reason}"
                );
                eprintln!("{}: {reason}", kind.name());
            }
        }
    }

    /// What the stand-in kernel does with the next send of a chain.
    #[derive(Debug, Clone, Copy)]
    enum Step {
        /// Takes every byte.
        Whole,
        /// Takes this many bytes (fewer than asked), then fails the link.
        Short(usize),
        /// Takes nothing and fails with this errno.
        Fail(i32),
    }

    /// A stand-in for io_uring on a stream socket: sends of a linked chain run in order and
    /// put their bytes on `wire`; after a short or failed one, the rest come back -ECANCELED.
    struct FakeKernel {
        messages: Vec<Vec<u8>>,
        wire: Vec<u8>,
        script: VecDeque<Step>,
        submissions: usize,
    }

    impl FakeKernel {
        fn new(sizes: &[usize], script: &[Step]) -> FakeKernel {
            let messages = sizes
                .iter()
                .enumerate()
                .map(|(i, &n)| (0..n).map(|b| (i * 31 + b) as u8).collect())
                .collect();
            FakeKernel {
                messages,
                wire: Vec::new(),
                script: script.iter().copied().collect(),
                submissions: 0,
            }
        }

        fn submit(&mut self, chain: &mut [Pending]) -> io::Result<()> {
            self.submissions += 1;
            let mut failed = false;
            for p in chain {
                if failed {
                    p.result = Some(-libc::ECANCELED);
                    continue;
                }
                let rest = &self.messages[p.slot][p.done..];
                let took = match self.script.pop_front().unwrap_or(Step::Whole) {
                    Step::Whole => rest.len(),
                    Step::Short(n) => n.min(rest.len() - 1),
                    Step::Fail(errno) => {
                        failed = true;
                        p.result = Some(-errno);
                        continue;
                    }
                };
                failed = took < rest.len();
                self.wire.extend_from_slice(&rest[..took]);
                p.result = Some(if took == 0 { -libc::EINTR } else { took as i32 });
            }
            Ok(())
        }

        fn run(&mut self) -> io::Result<u64> {
            let mut batch: Vec<Pending> = (0..self.messages.len())
                .map(|i| Pending::new(i, self.messages[i].len()))
                .collect();
            send_in_order(&mut batch, |chain| self.submit(chain))
        }

        fn expected(&self) -> Vec<u8> {
            self.messages.concat()
        }
    }

    #[test]
    fn a_short_send_and_the_cancelled_rest_are_resubmitted_in_order() {
        let mut k = FakeKernel::new(&[100, 100, 100, 100], &[Step::Whole, Step::Short(37)]);
        assert_eq!(k.run().unwrap(), 1);
        assert_eq!(k.wire, k.expected(), "no byte lost or repeated");
        assert_eq!(k.submissions, 2);
    }

    #[test]
    fn interrupted_and_would_block_results_are_retried() {
        let script = [
            Step::Fail(libc::EINTR),
            Step::Whole,
            Step::Fail(libc::EAGAIN),
        ];
        let mut k = FakeKernel::new(&[10, 10], &script);
        assert_eq!(k.run().unwrap(), 2);
        assert_eq!(k.wire, k.expected());
    }

    #[test]
    fn a_real_error_ends_the_batch_with_it() {
        let mut k = FakeKernel::new(&[10, 10, 10], &[Step::Whole, Step::Fail(libc::EPIPE)]);
        let err = k.run().unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EPIPE));
    }

    #[test]
    fn bytes_taken_after_a_send_that_stopped_are_refused_as_lost_order() {
        let mut chain = [Pending::new(0, 20), Pending::new(1, 20)];
        chain[0].result = Some(10);
        chain[1].result = Some(20);
        let err = settle(&mut chain).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("stream order lost"), "{err}");
    }

    #[test]
    fn a_send_that_takes_nothing_is_an_error_not_a_hang() {
        let mut chain = [Pending::new(0, 20)];
        chain[0].result = Some(0);
        assert_eq!(
            settle(&mut chain).unwrap_err().kind(),
            io::ErrorKind::WriteZero
        );
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => Just(Step::Whole),
            3 => (0usize..300).prop_map(Step::Short),
            1 => Just(Step::Fail(libc::EINTR)),
            1 => Just(Step::Fail(libc::EAGAIN)),
        ]
    }

    proptest! {
        #[test]
        fn any_mix_of_short_interrupted_and_cancelled_sends_delivers_each_byte_once(
            sizes in proptest::collection::vec(1usize..400, 1..20),
            script in proptest::collection::vec(step(), 0..40),
        ) {
            let mut k = FakeKernel::new(&sizes, &script);
            k.run().unwrap();
            let expected = k.expected();
            prop_assert_eq!(k.wire, expected);
        }
    }
}
