//! io_uring sends that lend message memory to the kernel (io_uring_enter(2),
//! io_uring_prep_send(3), io_uring_prep_sendmsg(3), io_uring_prep_send_zc(3); io-uring crate
//! 0.7). The ring owns every slot's memory, so a buffer the kernel may still read is never
//! rewritten or freed: a slot is lent from its push until its result completion, and for
//! IORING_OP_SEND_ZC until its notification (IORING_CQE_F_NOTIF) too. `memory_mut` refuses a
//! lent slot and `Drop` leaks one rather than free it under the kernel.
use io_uring::{cqueue, opcode, squeue, types, IoUring, Probe};
use std::io;
use std::ops::Range;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

/// `IORING_SEND_ZC_REPORT_USAGE` (io_uring.h, Linux 6.2): the notification says whether the
/// kernel copied anyway. Private in the io-uring crate.
pub const IORING_SEND_ZC_REPORT_USAGE: u16 = 1 << 3;
/// `IORING_NOTIF_USAGE_ZC_COPIED`: set in a notification's res when the data was copied.
pub const IORING_NOTIF_USAGE_ZC_COPIED: u32 = 1 << 31;
/// The most parts (iovec entries) one slot's memory may have.
pub const MAX_PARTS: usize = 8;

/// Memory a slot lends to the kernel: the bytes of one message, in order, in at most
/// `MAX_PARTS` parts.
///
/// # Safety
/// Between two `&mut` accesses, `parts` must yield the same byte ranges every time, and
/// those bytes must stay valid and in place while the value lives, even when the value is
/// moved: heap memory owned by the value, never inline arrays or memory shared through `&self`.
pub unsafe trait LentMemory: Send {
    fn parts(&self) -> impl Iterator<Item = &[u8]>;
}

/// Memory made of boxed slices the value holds (a boxed buffer, a message's fields): what a
/// slot lends, with no `unsafe` for the memory's owner to write. Safe to implement because
/// whatever an implementation returns, a `&self` borrow can neither change nor free the bytes
/// of a `Box<[u8]>` it reaches, moving the value leaves the boxes' heap allocations where they
/// are, and `'static` keeps out borrowed boxes (a leaked slot leaks what it holds, never frees
/// it under the kernel).
pub trait BoxedParts: Send + 'static {
    /// The parts, in order, at most `MAX_PARTS`.
    fn boxed_parts(&self) -> &[Box<[u8]>];
}

// SAFETY: every range `parts` yields is the heap allocation of a `Box<[u8]>` that `&self`
// reaches. Without `&mut` it can be neither changed nor freed; the ring hands out `&mut` to a
// slot only once the slot is no longer lent and leaks a lent slot rather than drop it; and
// `'static` means nothing the value reaches is freed while the value lives (or is leaked).
// So the bytes stay valid and in place while the kernel reads them, whichever of its parts an
// implementation returns.
unsafe impl<T: BoxedParts> LentMemory for T {
    fn parts(&self) -> impl Iterator<Item = &[u8]> {
        self.boxed_parts().iter().map(|part| &**part)
    }
}

impl BoxedParts for Box<[u8]> {
    fn boxed_parts(&self) -> &[Box<[u8]>] {
        std::slice::from_ref(self)
    }
}

/// Which operation every push of a ring is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOp {
    /// IORING_OP_SEND of one contiguous part.
    Send,
    /// IORING_OP_SENDMSG with an iovec over the parts.
    SendMsg,
    /// IORING_OP_SEND_ZC of one contiguous part, with IORING_SEND_ZC_REPORT_USAGE.
    SendZc,
}

impl SendOp {
    pub fn code(self) -> u8 {
        match self {
            SendOp::Send => opcode::Send::CODE,
            SendOp::SendMsg => opcode::SendMsg::CODE,
            SendOp::SendZc => opcode::SendZc::CODE,
        }
    }
}

/// What the kernel said about one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// A send's result: bytes taken, or `-errno`. `notify`: a SEND_ZC notification follows
    /// (IORING_CQE_F_MORE).
    Sent {
        slot: usize,
        tag: u32,
        result: i32,
        notify: bool,
    },
    /// A SEND_ZC notification: the kernel no longer reads the slot's memory.
    Released { slot: usize, copied: bool },
}

/// A msghdr and its iovec, boxed so their addresses stay put while a SENDMSG reads them.
struct MsgHeader {
    msg: libc::msghdr,
    iov: [libc::iovec; MAX_PARTS],
}

impl MsgHeader {
    fn empty() -> Box<MsgHeader> {
        // SAFETY: msghdr and iovec are plain old data; all-zero is a valid empty value.
        Box::new(unsafe { std::mem::zeroed() })
    }
}

// SAFETY: the raw pointers in msg and iov point into the slot's own memory (and msg_iov into
// this header); they are only dereferenced by the kernel for an operation this ring pushed.
unsafe impl Send for MsgHeader {}

struct Slot<M> {
    memory: M,
    /// SENDMSG only.
    header: Option<Box<MsgHeader>>,
    /// Pushed sends whose result has not been seen.
    results: u32,
    /// Notifications announced (IORING_CQE_F_MORE) and not yet seen; signed because nothing
    /// in io_uring(7) promises the result completion arrives before its notification.
    notifications: i32,
}

impl<M> Slot<M> {
    fn lent(&self) -> bool {
        self.results > 0 || self.notifications > 0
    }
}

/// One ring and the message memory it lends, for sends on one socket.
pub struct SendRing<M: LentMemory> {
    ring: IoUring,
    op: SendOp,
    slots: Vec<Slot<M>>,
    /// Test-only bug: a SEND_ZC slot counts as free at its result, before its notification.
    #[cfg(test)]
    reuse_before_notification: bool,
}

impl<M: LentMemory> SendRing<M> {
    /// A ring that lends `memory` (one slot each) to `op` sends, at most `batch` at a time;
    /// the completion queue has room for every result and every notification at once.
    pub fn new(op: SendOp, memory: Vec<M>, batch: u32) -> io::Result<SendRing<M>> {
        let batch = batch.max(1);
        let slots = u32::try_from(memory.len()).unwrap_or(u32::MAX);
        // Clamped to the kernel's limit: beyond it IORING_FEAT_NODROP holds the overflow.
        let cq = batch.saturating_add(slots).max(2 * batch);
        let ring = IoUring::builder()
            .setup_cqsize(cq)
            .setup_clamp()
            .build(batch)?;
        let slots = memory
            .into_iter()
            .map(|memory| Slot {
                memory,
                header: (op == SendOp::SendMsg).then(MsgHeader::empty),
                results: 0,
                notifications: 0,
            })
            .collect();
        Ok(SendRing {
            ring,
            op,
            slots,
            #[cfg(test)]
            reuse_before_notification: false,
        })
    }

    /// Test-only: lets SEND_ZC slots be rewritten and pushed again as soon as their result
    /// arrives (the bug a zero-copy sender must not have), to show that tests can see it.
    /// The kernel then reads pages the test rewrites: wrong bytes on the wire, never memory
    /// freed under the kernel (`Drop` still waits for notifications, else leaks).
    #[cfg(test)]
    pub fn reuse_before_notification(&mut self) {
        self.reuse_before_notification = true;
    }

    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Whether the kernel may still read the slot's memory.
    pub fn is_lent(&self, slot: usize) -> bool {
        let s = &self.slots[slot];
        #[cfg(test)]
        if self.reuse_before_notification {
            return s.results > 0;
        }
        s.lent()
    }

    /// Notifications announced and not yet seen, over all slots.
    pub fn notifications_pending(&self) -> u64 {
        self.slots
            .iter()
            .map(|s| s.notifications.max(0) as u64)
            .sum()
    }

    /// The slot's memory, to rewrite; `None` while the kernel may still read it.
    pub fn memory_mut(&mut self, slot: usize) -> Option<&mut M> {
        if self.is_lent(slot) {
            return None;
        }
        Some(&mut self.slots[slot].memory)
    }

    /// Pushes a send of bytes `range` of the slot's memory, with MSG_WAITALL (a stream send
    /// ends short only on an error or a signal) and MSG_NOSIGNAL; `link` chains the next
    /// push after this one (IOSQE_IO_LINK). `tag` comes back in the result. Pushes are
    /// submitted by `wait`; the submission queue holds `batch` of them. A slot may carry
    /// several sends at once (a message's datagrams), except with SENDMSG, whose one header
    /// per slot a second send would overwrite.
    pub fn push(
        &mut self,
        fd: BorrowedFd<'_>,
        slot: usize,
        range: Range<usize>,
        link: bool,
        tag: u32,
    ) -> io::Result<()> {
        // A slot whose SEND_ZC ended short is pushed again for the rest while the kernel
        // still holds its pages for reading: that is fine, rewriting them is not.
        if self.op == SendOp::SendMsg {
            assert_eq!(
                self.slots[slot].results, 0,
                "one SENDMSG per slot at a time"
            );
        }
        let entry = self.entry(fd, slot, range);
        let entry = entry.user_data((tag as u64) << 32 | slot as u64);
        let entry = if link {
            entry.flags(squeue::Flags::IO_LINK)
        } else {
            entry
        };
        // SAFETY: the entry points into slot `slot` of this ring: its memory, which the
        // kernel only reads, and for SENDMSG its boxed header, which no other send of this
        // slot is using (asserted above). The slot is marked lent below before anything else
        // can run, and a lent slot's memory is neither handed out for writing (`memory_mut`)
        // nor freed (`Drop` leaks it) until its results and any notifications have been
        // reaped (`complete`); `LentMemory` promises the bytes stay in place meanwhile. The
        // socket is only named by number: io_uring takes its own reference to the file at
        // submission.
        unsafe { self.ring.submission().push(&entry) }.map_err(|_| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                "io_uring submission queue full: more sends pushed than the ring was built for",
            )
        })?;
        self.slots[slot].results += 1;
        Ok(())
    }

    fn entry(&mut self, fd: BorrowedFd<'_>, slot: usize, range: Range<usize>) -> squeue::Entry {
        let fd = types::Fd(fd.as_raw_fd());
        let flags = libc::MSG_WAITALL | libc::MSG_NOSIGNAL;
        let s = &mut self.slots[slot];
        match self.op {
            SendOp::Send | SendOp::SendZc => {
                let part = s.memory.parts().next().expect("one part");
                let bytes = &part[range];
                let len = u32::try_from(bytes.len()).expect("messages are below 4 GiB");
                if self.op == SendOp::Send {
                    opcode::Send::new(fd, bytes.as_ptr(), len)
                        .flags(flags)
                        .build()
                } else {
                    opcode::SendZc::new(fd, bytes.as_ptr(), len)
                        .flags(flags)
                        .zc_flags(IORING_SEND_ZC_REPORT_USAGE)
                        .build()
                }
            }
            SendOp::SendMsg => {
                let h = s
                    .header
                    .as_deref_mut()
                    .expect("SENDMSG slots have a header");
                let mut n = 0;
                let mut at = 0;
                for part in s.memory.parts() {
                    let (start, end) = (at, at + part.len());
                    at = end;
                    let (lo, hi) = (range.start.max(start), range.end.min(end));
                    if lo >= hi {
                        continue;
                    }
                    let bytes = &part[lo - start..hi - start];
                    h.iov[n] = libc::iovec {
                        iov_base: bytes.as_ptr() as *mut libc::c_void,
                        iov_len: bytes.len(),
                    };
                    n += 1;
                }
                h.msg.msg_iov = h.iov.as_mut_ptr();
                h.msg.msg_iovlen = n as _;
                opcode::SendMsg::new(fd, &h.msg).flags(flags as u32).build()
            }
        }
    }

    /// Submits what was pushed and waits until at least `want` completions are queued, or
    /// `timeout` has passed, or a signal came (both: returns with whatever is queued).
    pub fn wait(&mut self, want: usize, timeout: Option<Duration>) -> io::Result<()> {
        let submitter = self.ring.submitter();
        let ret = match timeout {
            None => submitter.submit_and_wait(want),
            Some(t) => {
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                submitter.submit_with_args(want, &args)
            }
        };
        match ret {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::ETIME)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The next completion already queued, if any; it updates which slots are lent.
    pub fn next_completion(&mut self) -> Option<Completion> {
        let cqe = self.ring.completion().next()?;
        Some(self.complete(&cqe))
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        let slot = (cqe.user_data() & u32::MAX as u64) as usize;
        let s = &mut self.slots[slot];
        if cqueue::notif(cqe.flags()) {
            s.notifications -= 1;
            return Completion::Released {
                slot,
                copied: cqe.result() as u32 & IORING_NOTIF_USAGE_ZC_COPIED != 0,
            };
        }
        let notify = cqueue::more(cqe.flags());
        s.results -= 1;
        if notify {
            s.notifications += 1;
        }
        Completion::Sent {
            slot,
            tag: (cqe.user_data() >> 32) as u32,
            result: cqe.result(),
            notify,
        }
    }
}

impl<M: LentMemory> Drop for SendRing<M> {
    fn drop(&mut self) {
        // Closing the ring cancels what is pending asynchronously: memory the kernel may
        // still read is leaked rather than freed under it.
        for slot in self.slots.drain(..) {
            if slot.lent() {
                std::mem::forget(slot);
            }
        }
    }
}

/// Whether this kernel's io_uring supports `op` (IORING_REGISTER_PROBE, Linux 5.6).
pub fn supports(op: SendOp) -> io::Result<bool> {
    let ring = IoUring::new(2)?;
    let mut probe = Probe::new();
    ring.submitter().register_probe(&mut probe)?;
    Ok(probe.is_supported(op.code()))
}
