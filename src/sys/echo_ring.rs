//! io_uring for the echo server (io_uring(7), io_uring_enter(2); io-uring crate 0.7): a ring
//! that owns every connection's buffer, so a buffer handed to the kernel by a Recv or Send
//! cannot be freed or reused before its completion is seen. Accepts are multishot
//! (IORING_ACCEPT_MULTISHOT, Linux 5.19); where the kernel refuses that, single-shot accepts
//! re-armed after each completion.
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// What the user_data of an entry says it was.
const ACCEPT: u64 = u64::MAX;
const RECV: u64 = 1;
const SEND: u64 = 2;

/// One connection: its socket and its buffer, owned here while the kernel may use it.
struct Slot {
    fd: OwnedFd,
    buffer: Box<[u8]>,
    /// A Recv or Send on `buffer` has been pushed and its completion not yet seen.
    in_flight: bool,
}

/// A completed operation.
#[derive(Debug)]
pub enum Completion {
    /// A new connection (its socket, not yet in a slot: `adopt` gives it one and its buffer)
    /// or the accept's error; `rearm` when the accept will not produce more (single-shot, or
    /// the multishot ended).
    Accepted {
        fd: io::Result<OwnedFd>,
        rearm: bool,
    },
    Received {
        slot: usize,
        bytes: io::Result<usize>,
    },
    Sent {
        slot: usize,
        bytes: io::Result<usize>,
    },
}

/// A ring and the connection buffers it lends to the kernel.
pub struct EchoRing {
    ring: IoUring,
    /// Indexed by slot; a slot number is reused after `close`.
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    buffer_size: usize,
    multishot: bool,
}

fn result(res: i32) -> io::Result<usize> {
    if res < 0 {
        Err(io::Error::from_raw_os_error(-res))
    } else {
        Ok(res as usize)
    }
}

impl EchoRing {
    /// A ring of `entries` submission slots; each connection gets a buffer of `buffer_size`.
    pub fn new(entries: u32, buffer_size: usize) -> io::Result<EchoRing> {
        Ok(EchoRing {
            ring: IoUring::new(entries)?,
            slots: Vec::new(),
            free: Vec::new(),
            buffer_size,
            multishot: true,
        })
    }

    /// Pushes one entry, submitting first when the submission queue is full.
    fn push(&mut self, entry: squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every entry pushed here points either at no memory (accept with null
            // address) or into a slot's boxed buffer marked in_flight, which `close` refuses
            // to free and Drop leaks until the completion has been seen.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }

    /// Arms an accept on `listener` (multishot unless the kernel refused it before).
    pub fn accept(&mut self, listener: BorrowedFd<'_>) -> io::Result<()> {
        let fd = types::Fd(listener.as_raw_fd());
        let entry = if self.multishot {
            opcode::AcceptMulti::new(fd).build()
        } else {
            opcode::Accept::new(fd, std::ptr::null_mut(), std::ptr::null_mut()).build()
        };
        self.push(entry.user_data(ACCEPT))
    }

    fn slot(&mut self, slot: usize) -> &mut Slot {
        self.slots[slot].as_mut().expect("an open slot")
    }

    /// Receives into the slot's buffer from `from` to its end.
    pub fn recv(&mut self, slot: usize, from: usize) -> io::Result<()> {
        let s = self.slot(slot);
        assert!(!s.in_flight, "one operation per connection at a time");
        let buf = &mut s.buffer[from..];
        let entry = opcode::Recv::new(
            types::Fd(s.fd.as_raw_fd()),
            buf.as_mut_ptr(),
            buf.len() as u32,
        )
        .build()
        .user_data((slot as u64) << 2 | RECV);
        s.in_flight = true;
        self.push(entry)
    }

    /// Sends the slot's buffer from `from` to `to`.
    pub fn send(&mut self, slot: usize, from: usize, to: usize) -> io::Result<()> {
        let s = self.slot(slot);
        assert!(!s.in_flight, "one operation per connection at a time");
        let buf = &s.buffer[from..to];
        let entry = opcode::Send::new(types::Fd(s.fd.as_raw_fd()), buf.as_ptr(), buf.len() as u32)
            .build()
            .user_data((slot as u64) << 2 | SEND);
        s.in_flight = true;
        self.push(entry)
    }

    /// Closes the connection; its slot number and buffer are reused.
    pub fn close(&mut self, slot: usize) {
        let s = self.slots[slot].take().expect("an open slot");
        assert!(
            !s.in_flight,
            "a buffer the kernel may still use is never freed"
        );
        self.free.push(slot);
    }

    /// Takes an accepted connection into a slot with a buffer of its own; returns the slot.
    pub fn adopt(&mut self, fd: OwnedFd) -> usize {
        let slot = Slot {
            fd,
            buffer: vec![0u8; self.buffer_size].into_boxed_slice(),
            in_flight: false,
        };
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        }
    }

    /// Submits what was pushed and waits for at least one completion.
    pub fn submit_and_wait(&mut self) -> io::Result<()> {
        match self.ring.submit_and_wait(1) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The next completion already in the queue, if any.
    pub fn next_completion(&mut self) -> Option<Completion> {
        let cqe = self.ring.completion().next()?;
        Some(self.complete(&cqe))
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        let data = cqe.user_data();
        if data == ACCEPT {
            let more = cqueue::more(cqe.flags());
            if cqe.result() == -libc::EINVAL && self.multishot {
                // The kernel predates multishot accept: fall back to one accept at a time.
                self.multishot = false;
                return Completion::Accepted {
                    fd: Err(io::Error::from_raw_os_error(libc::EINVAL)),
                    rearm: true,
                };
            }
            let fd = result(cqe.result()).map(|fd| {
                // SAFETY: the kernel just returned fd from accept: open and owned by nobody
                // else.
                unsafe { OwnedFd::from_raw_fd(fd as RawFd) }
            });
            return Completion::Accepted { fd, rearm: !more };
        }
        let slot = (data >> 2) as usize;
        self.slot(slot).in_flight = false;
        let bytes = result(cqe.result());
        if data & 3 == RECV {
            Completion::Received { slot, bytes }
        } else {
            Completion::Sent { slot, bytes }
        }
    }
}

impl Drop for EchoRing {
    fn drop(&mut self) {
        // The ring's teardown cancels pending operations asynchronously: a buffer still lent
        // to the kernel is leaked rather than freed under it.
        for slot in self.slots.drain(..).flatten() {
            if slot.in_flight {
                std::mem::forget(slot.buffer);
            }
        }
    }
}

/// Whether io_uring can be used here, or why not.
pub fn supported() -> Result<(), String> {
    match IoUring::new(2) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("io_uring unavailable: io_uring_setup failed: {e}")),
    }
}
