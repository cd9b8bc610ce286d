//! `uring-zc`: IORING_OP_SEND_ZC with IORING_SEND_ZC_REPORT_USAGE (io_uring_prep_send_zc(3)).
//! Each send gets a result completion flagged IORING_CQE_F_MORE, then a notification
//! (IORING_CQE_F_NOTIF) once the kernel no longer reads the buffer; its res carries
//! IORING_NOTIF_USAGE_ZC_COPIED when the kernel copied anyway (always, for data delivered to a
//! local socket: msg_zerocopy.rst). A buffer of the pool is rewritten only after its
//! notification; the accounting is the `zerocopy` mechanism's `ZerocopyStats`.
use super::super::descriptor::{Crossover, MechanismDescriptor, MechanismKind};
use super::super::descriptor::{Patterns, Reuse, Transports};
use super::super::zerocopy::{largest_pool, CRR_REFUSAL};
use super::super::{FlowContext, SendMechanism, ZerocopyStats};
use super::{build, reap, supported, SlotMemory, UringSender};
use crate::sys::uring_send::{Completion, SendOp};
use crate::transport::{Endpoint, Transport};
use std::io;
use std::time::{Duration, Instant};

static DESCRIPTOR: MechanismDescriptor = MechanismDescriptor {
    name: "uring-zc",
    help: "io_uring send-zc",
    transports: Transports::Only {
        transports: &[Transport::Tcp, Transport::Udp],
        because: "io_uring SEND_ZC sends zero copy on TCP and UDP sockets only",
    },
    patterns: Patterns {
        crr: Err(CRR_REFUSAL),
        bidir: false,
    },
    probe: supported_with_usage_report,
    build: |ctx| build::<Box<[u8]>>(SendOp::SendZc, ctx),
    reuse: Reuse::OnNotification,
    // The pool holds at least one buffer per queue-depth entry.
    buffers: |message_size, queue_depth| largest_pool(message_size).max(queue_depth as usize),
    zerocopy_socket: false,
    nodelay: true,
    uses_queue_depth: true,
    zero_copy: Some("io_uring SEND_ZC"),
    datagram_sends: crate::mechanism::descriptor::any_send,
    crossover: Some(Crossover {
        against: MechanismKind::URING,
        question: "From which message size does io_uring zero-copy send (uring-zc) beat io_uring send (uring)?",
        always: false,
    }),
};

impl MechanismKind {
    /// `uring-zc`: io_uring IORING_OP_SEND_ZC; a buffer is reused only after its notification.
    pub const URING_ZC: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}

/// Whether this kernel has SEND_ZC and reports whether it copied: kernels 6.0 and 6.1 have
/// SEND_ZC but not IORING_SEND_ZC_REPORT_USAGE, and only a real send shows which.
fn supported_with_usage_report() -> Result<(), String> {
    supported(SendOp::SendZc)?;
    one_zero_copy_send().map_err(|e| {
        format!("io_uring SEND_ZC with IORING_SEND_ZC_REPORT_USAGE failed on loopback TCP: {e}")
    })
}

/// One 4 KiB SEND_ZC over a loopback TCP pair, through the mechanism itself, until its
/// notification arrives.
fn one_zero_copy_send() -> io::Result<()> {
    let (client, _server) = crate::transport::tcp::probe_pair()?;
    let ep = Endpoint::socket(client);
    let ctx = FlowContext {
        flow: 0,
        message_size: 4096,
        fill_pattern: false,
        send_buffer: 4096,
        queue_depth: 1,
        flush_each: true,
        framing: None,
    };
    let mut mech = UringSender::<Box<[u8]>>::new(SendOp::SendZc, ctx)?;
    mech.send_message(&ep, 0)?;
    mech.finish(&ep, Instant::now() + Duration::from_secs(2))?;
    match mech.zerocopy_stats() {
        Some(z) if z.completions == 1 => Ok(()),
        _ => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the notification did not arrive within 2 s",
        )),
    }
}

/// A notification that takes longer than this means the kernel will not send it.
const SLOT_WAIT_LIMIT: Duration = Duration::from_secs(10);
/// How long one wait for a notification blocks before the limits are looked at again.
const WAIT_STEP: Duration = Duration::from_millis(100);

/// Notification accounting of one flow.
#[derive(Debug)]
pub(super) struct Notifications {
    pub(super) stats: ZerocopyStats,
}

impl Notifications {
    pub(super) fn new(pool_messages: usize) -> Notifications {
        Notifications {
            stats: ZerocopyStats {
                pool_messages,
                ..Default::default()
            },
        }
    }

    /// A send call is one SEND_ZC whose result announced a notification; a completion is one
    /// notification.
    pub(super) fn count(&mut self, c: &Completion) {
        match *c {
            Completion::Sent { notify: true, .. } => self.stats.send_calls += 1,
            Completion::Sent { notify: false, .. } => {}
            Completion::Released { copied, .. } => {
                self.stats.completions += 1;
                self.stats.copied += copied as u64;
            }
        }
    }
}

impl<M: SlotMemory> UringSender<M> {
    /// Waits until the kernel has released `slot` (its notification came), at most
    /// `SLOT_WAIT_LIMIT`; message `seq` is the one that wants it.
    pub(super) fn wait_released(&mut self, slot: usize, seq: u64) -> io::Result<()> {
        let started = Instant::now();
        while self.ring.is_lent(slot) {
            let waited = started.elapsed();
            if waited >= SLOT_WAIT_LIMIT {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "io_uring SEND_ZC: the notification releasing the buffer for send {seq} did not arrive within 10 s"
                    ),
                ));
            }
            self.ring
                .wait(1, Some(WAIT_STEP.min(SLOT_WAIT_LIMIT - waited)))?;
            reap(&mut self.ring, &mut [], &mut self.zc);
        }
        Ok(())
    }

    /// Waits, until `deadline`, for every outstanding notification; what is still missing
    /// then is counted in `outstanding_at_end`. Nothing to do without zero copy.
    pub(super) fn wait_all_released(&mut self, deadline: Instant) -> io::Result<()> {
        if self.zc.is_none() {
            return Ok(());
        }
        loop {
            let pending = self.ring.notifications_pending();
            let now = Instant::now();
            if pending == 0 || now >= deadline {
                if let Some(z) = self.zc.as_mut() {
                    z.stats.outstanding_at_end = pending;
                }
                return Ok(());
            }
            self.ring.wait(1, Some(WAIT_STEP.min(deadline - now)))?;
            reap(&mut self.ring, &mut [], &mut self.zc);
        }
    }

    /// Test-only: the bug this module must not have — rewrite a buffer at its result.
    #[cfg(test)]
    pub(super) fn reuse_before_notification(&mut self) {
        self.ring.reuse_before_notification();
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::receive::Verifier;
    use super::super::super::zerocopy_pool_size;
    use super::super::loopback::{available, context, pair, reader, send};
    use super::*;

    const SIZE: usize = 64 << 10;
    const MESSAGES: u64 = 128;

    /// 128 messages of 64 KiB (8 MiB) through a pool of 3 buffers while the receiver reads
    /// nothing for 200 ms: past what its locked 128 KiB receive buffer takes, the data waits
    /// in the sender's queue still pointing at the pool's pages. (A receive buffer below the
    /// 64 KiB loopback MSS does not do: its windows of a few hundred bytes made the transfer
    /// crawl at ~10 KB/s.) Returns what the receiver saw and the sender's stats.
    fn send_while_receiver_stalls(buggy: bool) -> (Verifier, ZerocopyStats) {
        let mut ctx = context(SIZE, 1, false);
        ctx.send_buffer = SIZE; // a pool of 3 buffers
        let (ep, rx) = pair(Some(128 << 10));
        let check = reader(rx, ctx.flow, SIZE, Duration::from_millis(200));
        let mut mech = UringSender::<Box<[u8]>>::new(SendOp::SendZc, ctx).unwrap();
        assert_eq!(mech.ring.slots(), zerocopy_pool_size(SIZE, SIZE));
        if buggy {
            mech.reuse_before_notification();
        }
        send(&mut mech, &ep, MESSAGES).unwrap();
        let stats = mech.zerocopy_stats().unwrap();
        (check.join().unwrap(), stats)
    }

    #[test]
    fn a_buffer_rewritten_before_its_notification_corrupts_the_stream() {
        if !available(MechanismKind::URING_ZC) {
            return;
        }
        let (v, _) = send_while_receiver_stalls(true);
        eprintln!(
            "reused at the result: {} of {} bytes wrong",
            v.wrong_bytes, v.checked_bytes
        );
        assert_eq!(v.checked_bytes, MESSAGES * SIZE as u64);
        assert!(
            v.wrong_bytes > 0,
            "the test must be able to see the bug: reusing buffers at their result left every byte right"
        );
    }

    #[test]
    fn uring_zc_never_rewrites_a_buffer_before_its_notification() {
        if !available(MechanismKind::URING_ZC) {
            return;
        }
        let (v, stats) = send_while_receiver_stalls(false);
        assert_eq!(v.checked_bytes, MESSAGES * SIZE as u64);
        assert_eq!(v.wrong_bytes, 0, "{:?}", v.first);
        assert!(stats.send_calls >= MESSAGES, "{stats:?}");
        assert_eq!(stats.completions, stats.send_calls, "{stats:?}");
        assert_eq!(stats.outstanding_at_end, 0);
        assert_eq!(stats.pool_messages, 3);
    }

    #[test]
    fn send_calls_and_notifications_are_counted_with_the_copied_ones() {
        let mut n = Notifications::new(4);
        let sent = |notify| Completion::Sent {
            slot: 0,
            tag: 0,
            result: 8,
            notify,
        };
        n.count(&sent(true));
        n.count(&sent(true));
        n.count(&sent(false));
        n.count(&Completion::Released {
            slot: 0,
            copied: true,
        });
        n.count(&Completion::Released {
            slot: 1,
            copied: false,
        });
        let s = n.stats;
        assert_eq!((s.send_calls, s.completions, s.copied), (2, 2, 1));
        assert_eq!(s.pool_messages, 4);
    }
}
