//! A single-producer single-consumer byte ring in shared memory (mmap(2) MAP_SHARED, so it also
//! works across fork), with spin-then-futex waits (futex(2)): the no-kernel-copy reference
//! point. Bytes are copied once, from the writer's buffer into the ring, and once out of it;
//! the kernel is entered only to sleep and to wake a sleeper.
//!
//! Memory ordering: the writer copies bytes in, then publishes `head`; the reader loads `head`,
//! copies bytes out, then publishes `tail`. Sleeping uses a sequence word per direction: a side
//! reads the word, announces itself as waiting, re-checks the ring and only then waits on the
//! value it read, so a wake between the check and the wait is never lost.
use super::cvt;
use std::io::{self, IoSlice};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};

/// Spins before sleeping: a round trip on another CPU often answers within this many polls.
const SPINS: u32 = 2000;

#[repr(C)]
struct Header {
    head: AtomicU64,
    tail: AtomicU64,
    closed: AtomicU32,
    /// Bumped after each publish of `head` (readers sleep on it).
    data_seq: AtomicU32,
    /// Bumped after each publish of `tail` (the writer sleeps on it).
    space_seq: AtomicU32,
    reader_waiting: AtomicU32,
    writer_waiting: AtomicU32,
}

/// The ring; one side writes, the other reads.
pub struct Ring {
    base: NonNull<u8>,
    map_len: usize,
    capacity: usize,
}

// SAFETY: all shared state is reached through atomics in the header; the data region is
// written only by the single writer in [head, head+free) and read only by the single reader in
// [tail, head), ranges the atomics keep disjoint.
unsafe impl Send for Ring {}
// SAFETY: as above.
unsafe impl Sync for Ring {}

const HEADER: usize = 64;

impl Ring {
    /// A ring of `capacity` bytes (rounded up to a power of two, at least 4 KiB).
    pub fn new(capacity: usize) -> io::Result<Ring> {
        let capacity = capacity.max(4096).next_power_of_two();
        let map_len = HEADER + capacity;
        let base = super::shared::map_shared(map_len)?;
        // The zero-filled mapping is a valid Header: every field is an atomic integer at 0.
        Ok(Ring {
            base,
            map_len,
            capacity,
        })
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a zero-initialised Header (atomics only), is at least
        // HEADER bytes and page aligned, and lives as long as self.
        unsafe { &*self.base.as_ptr().cast::<Header>() }
    }

    /// Copies as much of `buf` as fits (waiting while the ring is full); returns the count, or
    /// EPIPE once the ring is closed.
    pub fn write(&self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }

    /// Copies as much of the gather list as fits, slice after slice, and publishes it once (one
    /// wake-up check, as one writev is one system call); waits while the ring is full.
    pub fn write_vectored(&self, iov: &[IoSlice<'_>]) -> io::Result<usize> {
        let h = self.header();
        let head = h.head.load(SeqCst);
        let wanted: usize = iov.iter().map(|s| s.len()).sum();
        let free = loop {
            if h.closed.load(SeqCst) != 0 {
                return Err(io::Error::from_raw_os_error(libc::EPIPE));
            }
            let free = self.capacity - (head - h.tail.load(SeqCst)) as usize;
            if free > 0 || wanted == 0 {
                break free;
            }
            self.wait(&h.space_seq, &h.writer_waiting, || {
                h.closed.load(SeqCst) != 0 || h.tail.load(SeqCst) + (self.capacity as u64) > head
            })?;
        };
        let mut written = 0;
        for slice in iov {
            let n = slice.len().min(free - written);
            self.copy_in(head + written as u64, &slice[..n]);
            written += n;
            if written == free {
                break;
            }
        }
        h.head.store(head + written as u64, SeqCst);
        self.wake(&h.data_seq, &h.reader_waiting);
        Ok(written)
    }

    /// Copies up to `buf.len()` bytes out (waiting while empty); 0 when closed and drained.
    /// With `nonblocking`, an empty ring is WouldBlock instead of a wait.
    pub fn read(&self, buf: &mut [u8], nonblocking: bool) -> io::Result<usize> {
        let h = self.header();
        let tail = h.tail.load(SeqCst);
        let avail = loop {
            // `closed` is read before `head`: the writer publishes its last bytes before it
            // closes, so a reader that sees the close also sees those bytes. Read the other
            // way round, a close landing between the two loads would end the stream early.
            let closed = h.closed.load(SeqCst) != 0;
            let avail = (h.head.load(SeqCst) - tail) as usize;
            if avail > 0 || buf.is_empty() {
                break avail;
            }
            if closed {
                return Ok(0);
            }
            if nonblocking {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            self.wait(&h.data_seq, &h.reader_waiting, || {
                h.closed.load(SeqCst) != 0 || h.head.load(SeqCst) > tail
            })?;
        };
        let n = avail.min(buf.len());
        self.copy_out(tail, &mut buf[..n]);
        h.tail.store(tail + n as u64, SeqCst);
        self.wake(&h.space_seq, &h.writer_waiting);
        Ok(n)
    }

    /// No more bytes: the reader drains what is there, then reads 0; a writer gets EPIPE.
    pub fn close(&self) {
        let h = self.header();
        h.closed.store(1, SeqCst);
        for (seq, waiting) in [
            (&h.data_seq, &h.reader_waiting),
            (&h.space_seq, &h.writer_waiting),
        ] {
            seq.fetch_add(1, SeqCst);
            if waiting.load(SeqCst) != 0 {
                futex_wake(seq);
            }
        }
    }

    /// Spins, then sleeps on `seq` until `ready()` holds (or a wake arrives).
    fn wait(
        &self,
        seq: &AtomicU32,
        waiting: &AtomicU32,
        ready: impl Fn() -> bool,
    ) -> io::Result<()> {
        for _ in 0..SPINS {
            if ready() {
                return Ok(());
            }
            std::hint::spin_loop();
        }
        let seen = seq.load(SeqCst);
        waiting.store(1, SeqCst);
        if !ready() {
            futex_wait(seq, seen)?;
        }
        waiting.store(0, SeqCst);
        Ok(())
    }

    fn wake(&self, seq: &AtomicU32, waiting: &AtomicU32) {
        seq.fetch_add(1, SeqCst);
        if waiting.load(SeqCst) != 0 {
            futex_wake(seq);
        }
    }

    fn data(&self) -> *mut u8 {
        // SAFETY: HEADER < map_len; the data region follows the header inside the mapping.
        unsafe { self.base.as_ptr().add(HEADER) }
    }

    /// Copies `src` into the ring at stream position `pos` (wrapping).
    fn copy_in(&self, pos: u64, src: &[u8]) {
        let start = (pos as usize) & (self.capacity - 1);
        let first = src.len().min(self.capacity - start);
        // SAFETY: [start, start+first) and [0, src.len()-first) lie inside the data region, and
        // the single writer owns these free bytes until it publishes head.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.data().add(start), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), self.data(), src.len() - first);
        }
    }

    /// Copies bytes at stream position `pos` (wrapping) into `dst`.
    fn copy_out(&self, pos: u64, dst: &mut [u8]) {
        let start = (pos as usize) & (self.capacity - 1);
        let first = dst.len().min(self.capacity - start);
        // SAFETY: the ranges lie inside the data region, and the single reader owns these
        // published bytes until it publishes tail.
        unsafe {
            std::ptr::copy_nonoverlapping(self.data().add(start), dst.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(
                self.data(),
                dst.as_mut_ptr().add(first),
                dst.len() - first,
            );
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: base/map_len are exactly the mapping made in new(); nothing uses it afterwards.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.map_len) };
    }
}

/// Sleeps while `*word == expected` (shared futex: the ring may be mapped by two processes).
fn futex_wait(word: &AtomicU32, expected: u32) -> io::Result<()> {
    // SAFETY: word is a valid, aligned u32 in memory that outlives the call; no timeout.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
    match cvt(r) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) => Ok(()),
        Err(e) => Err(e),
    }
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: word is a valid, aligned u32; FUTEX_WAKE only reads the address.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn bytes_cross_the_ring_in_order_through_many_wraps() {
        let ring = Arc::new(Ring::new(4096).unwrap());
        let total: usize = 3 << 20;
        let writer = {
            let ring = ring.clone();
            std::thread::spawn(move || {
                let data: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
                let mut sent = 0;
                while sent < total {
                    sent += ring.write(&data[sent..(sent + 1000).min(total)]).unwrap();
                }
                ring.close();
            })
        };
        let mut got = Vec::with_capacity(total);
        let mut buf = [0u8; 3000];
        loop {
            let n = ring.read(&mut buf, false).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        writer.join().unwrap();
        assert_eq!(got.len(), total);
        assert!(got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
    }

    #[test]
    fn a_gather_list_is_published_whole_when_it_fits_and_cut_when_it_does_not() {
        let ring = Ring::new(4096).unwrap();
        let parts = [IoSlice::new(b"ab"), IoSlice::new(b""), IoSlice::new(b"cde")];
        assert_eq!(ring.write_vectored(&parts).unwrap(), 5);
        let mut buf = [0u8; 8];
        assert_eq!(ring.read(&mut buf, false).unwrap(), 5);
        assert_eq!(&buf[..5], b"abcde");
        ring.write(&[0u8; 4094]).unwrap();
        let n = ring
            .write_vectored(&[IoSlice::new(b"xy"), IoSlice::new(b"z")])
            .unwrap();
        assert_eq!(n, 2, "only the free bytes are taken, in order");
    }

    #[test]
    fn an_empty_ring_blocks_or_says_would_block_and_close_is_eof() {
        let ring = Ring::new(4096).unwrap();
        let mut buf = [0u8; 8];
        let err = ring.read(&mut buf, true).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        ring.write(b"abc").unwrap();
        ring.close();
        assert_eq!(ring.read(&mut buf, false).unwrap(), 3, "drains after close");
        assert_eq!(ring.read(&mut buf, false).unwrap(), 0, "then EOF");
        assert_eq!(
            ring.write(b"x").unwrap_err().raw_os_error(),
            Some(libc::EPIPE)
        );
    }

    #[test]
    fn a_sleeping_reader_is_woken_by_the_writer() {
        let ring = Arc::new(Ring::new(4096).unwrap());
        let reader = {
            let ring = ring.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4];
                ring.read(&mut buf, false).unwrap()
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50)); // past the spin: asleep
        ring.write(b"wake").unwrap();
        assert_eq!(reader.join().unwrap(), 4);
    }
}
