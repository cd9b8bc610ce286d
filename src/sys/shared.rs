//! A few 64-bit atomic words in an anonymous shared mapping (mmap(2) MAP_SHARED |
//! MAP_ANONYMOUS): the pages stay shared with a child made by fork(2), so a store on one side
//! of a fork is seen by the other (the run's schedule and stop flag live here). A thread can
//! sleep until a word changes (futex(2), shared, so a store and wake in the forked child
//! wakes a sleeper in the parent).
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// `len` zero-initialised atomic words, shared with any process forked after `new`.
#[derive(Debug)]
pub struct SharedWords {
    base: NonNull<AtomicU64>,
    len: usize,
    map_len: usize,
}

// SAFETY: the mapping is reached only through `&AtomicU64`, which is Sync; the pointer itself
// is never written after `new`.
unsafe impl Send for SharedWords {}
// SAFETY: as above.
unsafe impl Sync for SharedWords {}

/// A zero-filled anonymous MAP_SHARED mapping of `len` bytes: after fork both processes see
/// the same memory (SharedWords, the shm rings).
pub(super) fn map_shared(len: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: an anonymous shared mapping with no address hint; the result is checked.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(NonNull::new(ptr.cast::<u8>()).expect("mmap returned a mapping"))
}

impl SharedWords {
    pub fn new(len: usize) -> io::Result<SharedWords> {
        let map_len = (len.max(1) * std::mem::size_of::<AtomicU64>()).next_multiple_of(4096);
        let base = map_shared(map_len)?.cast::<AtomicU64>();
        Ok(SharedWords { base, len, map_len })
    }

    /// Word `i`; panics when `i` is out of range.
    #[inline]
    pub fn word(&self, i: usize) -> &AtomicU64 {
        assert!(i < self.len, "shared word {i} of {}", self.len);
        // SAFETY: i < len, the mapping is page aligned, zero-filled (a valid AtomicU64 is any
        // 8 bytes) and lives as long as self.
        unsafe { &*self.base.as_ptr().add(i) }
    }

    /// The 32 bits of word `i` that a futex compares: its low half (words that sleepers wait
    /// on hold values below 2^32).
    fn futex_word(&self, i: usize) -> *const u32 {
        let low_half = if cfg!(target_endian = "big") { 1 } else { 0 };
        self.word(i).as_ptr().cast::<u32>().wrapping_add(low_half)
    }

    /// Sleeps while the low half of word `i` is `expected`, for at most `timeout`. Returns on
    /// a `wake`, when the word already differs, on a signal, or at the timeout: callers check
    /// the word again.
    pub fn wait(&self, i: usize, expected: u32, timeout: Duration) {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: the address is an aligned u32 inside the mapping, which outlives the call;
        // ts is a valid relative timeout. Every outcome (woken, EAGAIN, EINTR, ETIMEDOUT) means
        // "look again", so the result is not needed.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.futex_word(i),
                libc::FUTEX_WAIT,
                expected,
                &ts as *const libc::timespec,
            )
        };
    }

    /// Wakes every thread sleeping in `wait` on word `i`, in this process or a forked one.
    pub fn wake(&self, i: usize) {
        // SAFETY: the address is an aligned u32 inside the mapping; FUTEX_WAKE only uses it as
        // a key.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.futex_word(i),
                libc::FUTEX_WAKE,
                i32::MAX,
            )
        };
    }
}

impl Drop for SharedWords {
    fn drop(&mut self) {
        // SAFETY: base and map_len are the mapping made in `new`; no reference outlives self.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.map_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::process::{self, Forked};
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    #[test]
    fn words_start_at_zero_and_are_independent() {
        let w = SharedWords::new(3).unwrap();
        assert_eq!(w.len, 3);
        w.word(1).store(7, Ordering::Relaxed);
        assert_eq!(
            (0..3)
                .map(|i| w.word(i).load(Ordering::Relaxed))
                .collect::<Vec<_>>(),
            [0, 7, 0]
        );
    }

    #[test]
    fn a_value_stored_by_a_forked_child_is_seen_by_the_parent() {
        let w = SharedWords::new(2).unwrap();
        w.word(0).store(1, Ordering::SeqCst);
        match process::fork().unwrap() {
            Forked::Child => {
                // The child sees the parent's store from before the fork, and answers.
                let seen = w.word(0).load(Ordering::SeqCst);
                w.word(1).store(seen + 41, Ordering::SeqCst);
                process::exit_now(0)
            }
            Forked::Parent(mut child) => {
                let status = child
                    .wait_until(Instant::now() + Duration::from_secs(10))
                    .unwrap()
                    .expect("the child exited");
                assert!(status.success(), "{status}");
                assert_eq!(w.word(1).load(Ordering::SeqCst), 42);
            }
        }
    }

    #[test]
    fn a_sleeper_wakes_when_the_word_changes_and_otherwise_at_its_timeout() {
        let words = std::sync::Arc::new(SharedWords::new(2).unwrap());
        let t = Instant::now();
        words.wait(1, 0, Duration::from_millis(30));
        assert!(
            t.elapsed() >= Duration::from_millis(25),
            "slept to the timeout"
        );
        let setter = {
            let words = words.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                words.word(1).store(1, Ordering::Relaxed);
                words.wake(1);
            })
        };
        let t = Instant::now();
        while words.word(1).load(Ordering::Relaxed) == 0 {
            words.wait(1, 0, Duration::from_secs(10));
        }
        assert!(t.elapsed() < Duration::from_secs(5), "woken, not timed out");
        setter.join().unwrap();
        let t = Instant::now();
        words.wait(1, 0, Duration::from_secs(10));
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "the word already differs"
        );
    }

    #[test]
    fn a_wake_from_a_forked_child_ends_the_parents_sleep() {
        let w = SharedWords::new(1).unwrap();
        match process::fork().unwrap() {
            Forked::Child => {
                std::thread::sleep(Duration::from_millis(20));
                w.word(0).store(1, Ordering::SeqCst);
                w.wake(0);
                process::exit_now(0)
            }
            Forked::Parent(mut child) => {
                let t = Instant::now();
                while w.word(0).load(Ordering::SeqCst) == 0 {
                    w.wait(0, 0, Duration::from_secs(10));
                }
                assert!(t.elapsed() < Duration::from_secs(5), "woken, not timed out");
                let status = child
                    .wait_until(Instant::now() + Duration::from_secs(10))
                    .unwrap()
                    .expect("the child exited");
                assert!(status.success(), "{status}");
            }
        }
    }
}
