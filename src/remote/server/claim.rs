//! What a session holds of the server, as guards released exactly once: `RunClaim`, the one
//! run at a time (run, servers point, file transfer, peer run), and `OpenSlot`, one of the
//! control connections the server keeps open at once. Each is released by its holder or by
//! its drop, whichever comes first, so a session that returns early, fails, panics, or whose
//! thread never starts gives back what it took, and a claim released early (before a run's
//! samples go back) can never be released again over the claim of the session after it.
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// The server's one-run-at-a-time flag, held by one session.
pub(in crate::remote) struct RunClaim<'a> {
    busy: &'a AtomicBool,
    held: bool,
}

impl<'a> RunClaim<'a> {
    /// The claim, or `None` when another session holds it.
    pub(in crate::remote) fn take(busy: &'a AtomicBool) -> Option<RunClaim<'a>> {
        busy.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| RunClaim { busy, held: true })
    }

    /// Frees the server for the next run; only the first call (or the drop) does anything.
    pub(in crate::remote) fn release(&mut self) {
        if std::mem::take(&mut self.held) {
            self.busy.store(false, Ordering::Release);
        }
    }
}

impl Drop for RunClaim<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

/// One open control connection, counted while its session lives. It owns its counter so it
/// can move into the session's thread: a thread that cannot be spawned drops it unstarted.
pub(in crate::remote) struct OpenSlot {
    open: Arc<AtomicUsize>,
}

impl OpenSlot {
    /// A slot, or `None` when `max` are open.
    pub(in crate::remote) fn take(open: &Arc<AtomicUsize>, max: usize) -> Option<OpenSlot> {
        open.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        })
        .ok()
        .map(|_| OpenSlot { open: open.clone() })
    }
}

impl Drop for OpenSlot {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_released_early_cannot_wipe_the_next_sessions_claim() {
        let busy = AtomicBool::new(false);
        let mut first = RunClaim::take(&busy).unwrap();
        // The run's samples are about to go back: the next run may start meanwhile.
        first.release();
        let second = RunClaim::take(&busy).expect("free once released");
        // The first session ends (its samples were slow to go) and drops its claim.
        drop(first);
        assert!(
            RunClaim::take(&busy).is_none(),
            "a third run overlapped the second"
        );
        drop(second);
        assert!(RunClaim::take(&busy).is_some());
    }

    #[test]
    fn a_panicking_session_frees_its_claim_and_its_slot() {
        let busy = Arc::new(AtomicBool::new(false));
        let open = Arc::new(AtomicUsize::new(0));
        let slot = OpenSlot::take(&open, 1).unwrap();
        assert!(OpenSlot::take(&open, 1).is_none(), "one slot only");
        let flag = busy.clone();
        let session = std::thread::spawn(move || {
            let _slot = slot;
            let _claim = RunClaim::take(&flag).unwrap();
            panic!("a session failed mid-run");
        });
        assert!(session.join().is_err(), "the session panicked");
        assert!(
            !busy.load(Ordering::Acquire),
            "the claim outlived its panic"
        );
        assert_eq!(
            open.load(Ordering::Acquire),
            0,
            "the slot outlived its panic"
        );
    }

    #[test]
    fn a_session_whose_thread_never_starts_gives_its_slot_back() {
        let open = Arc::new(AtomicUsize::new(0));
        let slot = OpenSlot::take(&open, 4).unwrap();
        let session = move || drop(slot);
        // A failed spawn drops the closure unrun, and with it the slot it owns.
        drop(session);
        assert_eq!(open.load(Ordering::Acquire), 0);
        let held: Vec<_> = (0..4).map(|_| OpenSlot::take(&open, 4).unwrap()).collect();
        assert!(OpenSlot::take(&open, 4).is_none());
        drop(held);
        assert_eq!(open.load(Ordering::Acquire), 0);
    }
}
