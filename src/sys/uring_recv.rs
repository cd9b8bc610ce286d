//! io_uring receive into provided buffers (io_uring_register_buf_ring(3), io_uring_enter(2);
//! io-uring crate 0.7): one ring per receiving socket, a registered buffer ring
//! (IORING_REGISTER_PBUF_RING, Linux 5.19) the kernel picks buffers from, and a multishot
//! receive (IORING_RECV_MULTISHOT, Linux 6.0) that posts one completion per buffer filled.
//! Where the kernel refuses multishot, single-shot receives with buffer select, re-armed after
//! each completion. A completion's buffer is read in place and handed back to the ring once
//! every byte of it has been taken. A wait that sees no completion for 100 ms asks the socket
//! whether the peer closed: a multishot receive can miss that EOF (see `fill`).
use io_uring::types::BufRingEntry;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::alloc::{self, Layout};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

/// The buffer group of the ring's one buffer ring.
const GROUP: u16 = 0;
/// user_data of the receive, and of the cancel that ends it on drop.
const RECV: u64 = 1;
const CANCEL: u64 = 2;
/// Completions waited for on drop before giving up and leaking the buffers.
const DROP_WAIT: usize = 64;
/// Buffers and the buffer ring are page-aligned (the kernel requires it of the ring).
const ALIGN: usize = 4096;
/// How long a wait goes without a completion before asking the socket whether the peer
/// closed (see `fill`).
const EOF_CHECK: Duration = Duration::from_millis(100);

/// A buffer the kernel filled, lent to us until every byte of it is taken.
#[derive(Debug, Clone, Copy)]
struct Held {
    bid: u16,
    len: usize,
    taken: usize,
}

/// What the ring did, for the receiver's statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingCounts {
    /// Completions that carried bytes.
    pub completions: u64,
    /// Receives armed again after one ended (no IORING_CQE_F_MORE).
    pub rearms: u64,
    /// Receives that ended with ENOBUFS: the kernel found the buffer ring empty.
    pub enobufs: u64,
    /// EOFs found by asking the socket after no completion came for `EOF_CHECK`.
    pub unreported_eofs: u64,
}

/// An io_uring receiving from one socket into a ring of `count` buffers of `len` bytes.
pub struct RecvRing {
    ring: IoUring,
    fd: RawFd,
    /// `count` BufRingEntry, page-aligned, registered with the kernel.
    entries: *mut BufRingEntry,
    entries_layout: Layout,
    /// `count` buffers of `len` bytes, one allocation the kernel writes into.
    buffers: *mut u8,
    buffers_layout: Layout,
    count: u16,
    len: u32,
    /// Our copy of the ring's tail (the kernel reads the shared one).
    tail: u16,
    multishot: bool,
    /// A receive is in the kernel: its last completion (no F_MORE) has not been seen.
    armed: bool,
    /// Set once a receive has been submitted (the first is not a re-arm).
    started: bool,
    held: Option<Held>,
    counts: RingCounts,
}

// SAFETY: the raw pointers are owned allocations used only through &mut self; the ring and
// its buffers move with the receiver to the thread that uses them, and nothing is shared.
unsafe impl Send for RecvRing {}

impl RecvRing {
    /// A ring receiving from `fd` into `count` buffers (a power of two, at most 32768) of
    /// `len` bytes each; `multishot` tries IORING_RECV_MULTISHOT first.
    pub fn new(fd: BorrowedFd<'_>, count: u16, len: u32, multishot: bool) -> io::Result<Self> {
        assert!(count.is_power_of_two() && len > 0, "ring geometry");
        let ring = IoUring::builder()
            .setup_cqsize(2 * u32::from(count).max(8))
            .build(8)?;
        let entries_layout =
            Layout::from_size_align(std::mem::size_of::<BufRingEntry>() * count as usize, ALIGN)
                .map_err(io::Error::other)?;
        let buffers_layout = Layout::from_size_align(len as usize * count as usize, ALIGN)
            .map_err(io::Error::other)?;
        // SAFETY: both layouts have a non-zero size (count >= 1, len >= 1).
        let entries = unsafe { alloc::alloc_zeroed(entries_layout) }.cast::<BufRingEntry>();
        if entries.is_null() {
            alloc::handle_alloc_error(entries_layout);
        }
        // SAFETY: `entries` is a page-aligned, zeroed array of `count` entries; it is freed
        // below if this fails, else owned by the RecvRing, which frees it only after
        // unregistering the buffer ring (Drop).
        let registered = unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(entries as u64, count, GROUP, 0)
        };
        if let Err(e) = registered {
            // SAFETY: allocated above with this layout; the kernel refused it, so holds nothing.
            unsafe { alloc::dealloc(entries.cast(), entries_layout) };
            return Err(e);
        }
        // SAFETY: non-zero size, as above.
        let buffers = unsafe { alloc::alloc_zeroed(buffers_layout) };
        if buffers.is_null() {
            alloc::handle_alloc_error(buffers_layout);
        }
        let mut r = RecvRing {
            ring,
            fd: fd.as_raw_fd(),
            entries,
            entries_layout,
            buffers,
            buffers_layout,
            count,
            len,
            tail: 0,
            multishot,
            armed: false,
            started: false,
            held: None,
            counts: RingCounts::default(),
        };
        for bid in 0..count {
            r.provide(bid);
        }
        Ok(r)
    }

    pub fn multishot(&self) -> bool {
        self.multishot
    }

    pub fn counts(&self) -> RingCounts {
        self.counts
    }

    /// Bytes of the held buffer not taken yet; when every byte is taken, hands the buffer back
    /// and waits for the next completion (busy-polling the completion queue with `spin`,
    /// else in io_uring_enter). 0: the peer closed the connection.
    pub fn fill(&mut self, spin: bool) -> io::Result<usize> {
        if let Some(h) = self.held {
            if h.taken < h.len {
                return Ok(h.len - h.taken);
            }
            self.held = None;
            self.provide(h.bid);
        }
        loop {
            if !self.armed {
                self.arm()?;
            }
            let Some(cqe) = self.wait(spin)? else {
                // A multishot receive that took the last bytes after the peer had closed can
                // miss the EOF: AF_UNIX reports an empty queue (msg_inq 0), so io_uring waits
                // for a wakeup that already came (seen on Linux 6.18). Ask the socket.
                if self.peer_closed() {
                    self.counts.unreported_eofs += 1;
                    return Ok(0);
                }
                continue;
            };
            if cqe.user_data() != RECV {
                continue;
            }
            let (res, flags) = (cqe.result(), cqe.flags());
            if !cqueue::more(flags) {
                self.armed = false;
            }
            if res > 0 {
                let bid = cqueue::buffer_select(flags).ok_or_else(|| {
                    io::Error::other("io_uring receive completed without a provided buffer")
                })?;
                self.counts.completions += 1;
                self.held = Some(Held {
                    bid,
                    len: res as usize,
                    taken: 0,
                });
                return Ok(res as usize);
            }
            if let Some(bid) = cqueue::buffer_select(flags) {
                self.provide(bid);
            }
            match -res {
                0 => return Ok(0),
                libc::ENOBUFS => self.counts.enobufs += 1,
                libc::EINVAL if self.multishot && self.counts.completions == 0 => {
                    // The kernel predates IORING_RECV_MULTISHOT: one receive at a time.
                    self.multishot = false;
                }
                libc::EINTR => {}
                e => return Err(io::Error::from_raw_os_error(e)),
            }
        }
    }

    /// Takes up to `max` bytes of the held buffer (call `fill` first), in place.
    pub fn take(&mut self, max: usize) -> &[u8] {
        let h = self.held.as_mut().expect("fill() found bytes");
        let n = max.min(h.len - h.taken);
        let at = h.bid as usize * self.len as usize + h.taken;
        h.taken += n;
        // SAFETY: buffer `bid` came back in a completion and is not in the buffer ring, so the
        // kernel does not write it until `provide` returns it; `at + n` stays inside it, and
        // the slice's borrow of self ends before the next `fill` can provide it again.
        unsafe { std::slice::from_raw_parts(self.buffers.add(at), n) }
    }

    /// Puts buffer `bid` back at the ring's tail for the kernel to fill.
    fn provide(&mut self, bid: u16) {
        let index = (self.tail & (self.count - 1)) as usize;
        // SAFETY: index < count: the entry lies inside the registered array, past the tail the
        // kernel reads up to, so the kernel is not reading it now.
        let entry = unsafe { &mut *self.entries.add(index) };
        // SAFETY: bid < count, so the address is inside the buffers allocation.
        let addr = unsafe { self.buffers.add(bid as usize * self.len as usize) };
        entry.set_addr(addr as u64);
        entry.set_len(self.len);
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail is the u16 the kernel reads at the start of the registered array
        // (BufRingEntry::tail); it is 2-aligned and lives as long as the array. The release
        // store publishes the entry written above before the new tail.
        unsafe {
            let tail = BufRingEntry::tail(self.entries) as *mut u16;
            AtomicU16::from_ptr(tail).store(self.tail, Ordering::Release);
        }
    }

    /// Submits a receive: multishot where the kernel takes it, else one buffer's worth.
    fn arm(&mut self) -> io::Result<()> {
        let fd = types::Fd(self.fd);
        let entry = if self.multishot {
            opcode::RecvMulti::new(fd, GROUP).build()
        } else {
            opcode::Recv::new(fd, std::ptr::null_mut(), self.len)
                .buf_group(GROUP)
                .build()
                .flags(squeue::Flags::BUFFER_SELECT)
        };
        self.push(entry.user_data(RECV))?;
        if self.started {
            self.counts.rearms += 1;
        }
        self.started = true;
        self.armed = true;
        Ok(())
    }

    fn push(&mut self, entry: squeue::Entry) -> io::Result<()> {
        // SAFETY: the entry names no memory of ours directly: the kernel picks a buffer from
        // the registered ring, which this struct owns until Drop has seen the receive's last
        // completion (or leaks it).
        while unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.ring.submit()?;
        }
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next completion: busy-polls the queue with `spin`, else waits in io_uring_enter.
    /// `None` when none came for `EOF_CHECK` (the caller looks for an EOF the kernel did not
    /// report).
    fn wait(&mut self, spin: bool) -> io::Result<Option<cqueue::Entry>> {
        let mut polls = 0u32;
        let mut deadline = None;
        loop {
            if let Some(cqe) = self.ring.completion().next() {
                return Ok(Some(cqe));
            }
            if spin {
                polls = polls.wrapping_add(1);
                if polls % 4096 == 0 {
                    let now = Instant::now();
                    if now >= *deadline.get_or_insert(now + EOF_CHECK) {
                        return Ok(None);
                    }
                }
                std::hint::spin_loop();
                continue;
            }
            let timeout = types::Timespec::from(EOF_CHECK);
            let args = types::SubmitArgs::new().timespec(&timeout);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => {
                    return Ok(self.ring.completion().next());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether the peer has closed and nothing is left to read: recv(MSG_PEEK | MSG_DONTWAIT)
    /// of one byte returns 0 (it takes nothing, so a receive in flight loses no byte).
    fn peer_closed(&self) -> bool {
        let mut byte = 0u8;
        // SAFETY: byte is one valid, writable byte; fd is the socket the ring receives from.
        let n = unsafe {
            libc::recv(
                self.fd,
                (&mut byte as *mut u8).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        n == 0
    }

    /// Cancels the receive in flight and waits for its last completion; false if it never
    /// came.
    fn quiesce(&mut self) -> bool {
        if !self.armed {
            return true;
        }
        let cancel = opcode::AsyncCancel::new(RECV).build().user_data(CANCEL);
        if self.push(cancel).is_err() {
            return false;
        }
        for _ in 0..DROP_WAIT {
            match self.wait(false) {
                Ok(Some(cqe)) if cqe.user_data() == RECV && !cqueue::more(cqe.flags()) => {
                    self.armed = false;
                    return true;
                }
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }
}

impl Drop for RecvRing {
    fn drop(&mut self) {
        if !self.quiesce() || self.ring.submitter().unregister_buf_ring(GROUP).is_err() {
            // The kernel may still write into the buffers: leak them rather than free them
            // under it.
            return;
        }
        // SAFETY: nothing in the kernel refers to either allocation any more (the receive has
        // ended and the buffer ring is unregistered); both were allocated with these layouts.
        unsafe {
            alloc::dealloc(self.entries.cast(), self.entries_layout);
            alloc::dealloc(self.buffers, self.buffers_layout);
        }
    }
}

/// Whether this kernel registers a buffer ring and receives into it, tried on a loopback TCP
/// pair; `Ok(multishot)` says whether multishot receive worked, `Err` why nothing did.
pub fn supported() -> Result<bool, String> {
    use std::io::Write;
    use std::os::fd::AsFd;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let mut client =
        std::net::TcpStream::connect(listener.local_addr().map_err(|e| e.to_string())?)
            .map_err(|e| format!("loopback TCP pair: {e}"))?;
    let (server, _) = listener.accept().map_err(|e| e.to_string())?;
    let mut ring = RecvRing::new(server.as_fd(), 2, 4096, true).map_err(|e| match e.kind() {
        io::ErrorKind::InvalidInput => {
            "io_uring buffer rings (IORING_REGISTER_PBUF_RING, Linux 5.19) are not supported".into()
        }
        _ => format!("io_uring with a buffer ring: {e}"),
    })?;
    client.write_all(b"probe").map_err(|e| e.to_string())?;
    let n = ring
        .fill(false)
        .map_err(|e| format!("io_uring receive into a provided buffer: {e}"))?;
    if ring.take(n) != b"probe" {
        return Err("io_uring receive into a provided buffer delivered the wrong bytes".into());
    }
    Ok(ring.multishot())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn buffers_come_back_and_the_receive_is_rearmed_over_many_fills() {
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        // Two 16-byte buffers and 4 KiB of data: every buffer is reused many times.
        let mut ring = RecvRing::new(b.as_fd(), 2, 16, true).unwrap();
        let data: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
        let writer = std::thread::spawn(move || {
            a.write_all(&data).unwrap();
            data
        });
        let mut got = Vec::new();
        loop {
            let n = ring.fill(false).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(ring.take(5));
            if got.len() == 4096 {
                break;
            }
        }
        assert_eq!(got, writer.join().unwrap());
        assert!(ring.counts().completions >= 4096 / 16);
    }

    #[test]
    fn an_eof_that_came_before_the_last_bytes_were_taken_is_still_seen() {
        // Everything queued and the peer gone before the ring takes the first byte: the
        // multishot receive takes the last bytes after the hang-up.
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let data = vec![3u8; 40_000];
        a.write_all(&data).unwrap();
        drop(a);
        let mut ring = RecvRing::new(b.as_fd(), 2, 4096, true).unwrap();
        let mut got = 0;
        let start = std::time::Instant::now();
        loop {
            let n = ring.fill(false).unwrap();
            if n == 0 {
                break;
            }
            got += ring.take(n).len();
        }
        assert_eq!(got, data.len());
        assert!(start.elapsed() < Duration::from_secs(2));
    }
}
