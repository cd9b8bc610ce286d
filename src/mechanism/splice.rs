//! `splice`: the message lives in a page-aligned anonymous buffer; every message is
//! vmsplice(2)d into a pipe the flow owns, then splice(2)d from the pipe to the socket until
//! the pipe is empty. Nothing is copied in user space and vmsplice copies nothing either: the
//! pipe, then the socket, reference the buffer's pages (man 2 vmsplice, man 2 splice).
//!
//! The pipe is sized (F_SETPIPE_SZ, fcntl(2)) to cover the message up to `MAX_PIECE`; a larger
//! message goes through in pipe-sized pieces.
use super::descriptor::{two_messages, Crossover, MechanismDescriptor, MechanismKind};
use super::descriptor::{Patterns, Reuse, Transports};
use super::page_refs::{self, moved, socket_of, SpliceStats};
use super::{pattern, FlowContext, SendMechanism};
use crate::sys::fdio;
use crate::sys::file::splice_pipe_to_socket;
use crate::sys::pages::{page_size, vmsplice, PageBuffer, SPLICE_F_GIFT};
use crate::transport::Endpoint;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// SPLICE_F_MORE (the socket sees MSG_MORE) on every piece of a message but the last: TCP then
/// need not push a short segment at each piece boundary, since the next piece follows at
/// once. The last piece goes without it so the message leaves whole at once (rr waits for
/// it). Within one splice call the kernel already sets MSG_MORE while the pipe holds more.
/// Measured on loopback TCP with 1 MiB pieces (2 and 4 MiB messages, --pin cross): no
/// difference beyond run-to-run noise either way; kept because it is the true hint, costs
/// nothing, and a boundary every piece weighs more when pipe-max-size is small. AF_UNIX
/// ignores it.
const MORE_BETWEEN_PIECES: bool = true;

/// The largest piece: 64 KiB, the kernel's default pipe. Pipes sized to the whole message
/// were slower on loopback TCP (--pin cross, 3 alternating rounds): 25-28 against 48-50 Gbit/s
/// at 256 KiB, 20-24 against 30-45 at 512 KiB, 23-25 against 26-27 at 1 MiB, with the sender's
/// CPU per byte lower in 64 KiB pieces every time. The cause is not established.
const MAX_PIECE: usize = 64 << 10;

/// pipe-max-size when /proc does not say (the kernel's default).
const DEFAULT_PIPE_MAX: usize = 1 << 20;

pub struct Splice {
    buf: PageBuffer,
    pipe_read: OwnedFd,
    pipe_write: OwnedFd,
    /// The most bytes one piece may have: the pipe's granted size.
    piece: usize,
    /// vmsplice with SPLICE_F_GIFT: the message is whole pages.
    gift: bool,
    ctx: FlowContext,
    stats: SpliceStats,
    /// Test knob: refill the message in the same pages (what the real code must not do).
    #[cfg(test)]
    reuse_pages: bool,
}

static DESCRIPTOR: MechanismDescriptor = MechanismDescriptor {
    name: "splice",
    help: "vmsplice into a pipe, splice to the socket",
    transports: Transports::Only {
        transports: page_refs::STREAM_SOCKETS,
        because: page_refs::STREAM_SOCKETS_ONLY,
    },
    patterns: Patterns {
        crr: Err(page_refs::CRR_REFUSAL),
        bidir: false,
    },
    probe: supported,
    build,
    reuse: Reuse::FreshPages,
    buffers: two_messages,
    zerocopy_socket: false,
    nodelay: false,
    uses_queue_depth: false,
    zero_copy: None,
    datagram_sends: crate::mechanism::descriptor::any_send,
    crossover: Some(Crossover {
        against: MechanismKind::SEND,
        question: "From which message size does vmsplice+splice beat send()?",
        always: false,
    }),
};

impl MechanismKind {
    /// `splice`: vmsplice(2) of the message into a pipe, then splice(2) from the pipe to the socket.
    pub const SPLICE: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}

fn build(ctx: FlowContext) -> io::Result<Box<dyn SendMechanism>> {
    Ok(Box::new(Splice::new(ctx)?))
}

/// /proc/sys/fs/pipe-max-size: the largest pipe an unprivileged process may ask for.
fn pipe_max_size() -> usize {
    std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(DEFAULT_PIPE_MAX)
}

impl Splice {
    pub fn new(ctx: FlowContext) -> io::Result<Splice> {
        let mut buf = PageBuffer::new(ctx.message_size)?;
        pattern::fill(pattern::message_seed(ctx.flow, 0), 0, &mut buf);
        let (pipe_read, pipe_write) = fdio::pipe()?;
        let want = ctx
            .message_size
            .min(MAX_PIECE)
            .min(pipe_max_size())
            .max(page_size());
        let piece = fdio::set_pipe_size(pipe_write.as_fd(), want).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "F_SETPIPE_SZ to {want} B for splice failed: {e} (fs.pipe-user-pages-soft \
                     bounds the pipe memory of one user)"
                ),
            )
        })?;
        // vmsplice(2): gifted pages must be page-aligned in memory and length. The buffer is
        // page-aligned and pieces are whole pipes (whole pages), so the message size decides.
        let gift = ctx.message_size % page_size() == 0;
        let stats = SpliceStats {
            pipe_bytes: piece,
            ..Default::default()
        };
        Ok(Splice {
            buf,
            pipe_read,
            pipe_write,
            piece,
            gift,
            ctx,
            stats,
            #[cfg(test)]
            reuse_pages: false,
        })
    }

    /// Writes message `seq` into the buffer, in fresh pages. Earlier messages' pages may still
    /// be referenced by the pipe or by skbs the receiver has not read yet (on loopback, until
    /// it reads them): writing them in place would change bytes in flight, and gifted pages
    /// may never be written again (man 2 vmsplice). MADV_DONTNEED hands them to the kernel,
    /// which frees each when its last reference goes; the fill faults in new zeroed pages.
    fn refill(&mut self, seq: u64) -> io::Result<()> {
        if !self.reuses_pages() {
            self.buf.discard()?;
            self.stats.fresh_page_messages += 1;
        }
        pattern::fill(pattern::message_seed(self.ctx.flow, seq), 0, &mut self.buf);
        Ok(())
    }

    #[cfg(test)]
    fn reuses_pages(&self) -> bool {
        self.reuse_pages
    }

    #[cfg(not(test))]
    fn reuses_pages(&self) -> bool {
        false
    }

    /// Bytes `[start, end)` of the message (at most one pipe) into the pipe, then all of them
    /// out to the socket: the pipe is empty again when this returns.
    fn piece_through(
        &mut self,
        socket: BorrowedFd<'_>,
        start: usize,
        end: usize,
        more: bool,
    ) -> io::Result<()> {
        let flags = if self.gift { SPLICE_F_GIFT } else { 0 };
        let mut at = start;
        while at < end {
            let piece = &self.buf[at..end];
            at += moved(socket, &mut self.stats, || {
                vmsplice(self.pipe_write.as_fd(), piece, flags)
            })?;
        }
        let mut in_pipe = end - start;
        while in_pipe > 0 {
            in_pipe -= moved(socket, &mut self.stats, || {
                splice_pipe_to_socket(self.pipe_read.as_fd(), socket, in_pipe, more)
            })?;
        }
        self.stats.pieces += 1;
        Ok(())
    }
}

impl SendMechanism for Splice {
    fn send_message(&mut self, ep: &Endpoint, seq: u64) -> io::Result<()> {
        let socket = socket_of(ep)?;
        if self.ctx.fill_pattern {
            self.refill(seq)?;
        }
        let size = self.buf.len();
        let mut done = 0;
        while done < size {
            let end = (done + self.piece).min(size);
            self.piece_through(socket, done, end, MORE_BETWEEN_PIECES && end < size)?;
            done = end;
        }
        self.stats.messages += 1;
        self.stats.gifted_messages += u64::from(self.gift);
        Ok(())
    }

    fn splice_stats(&self) -> Option<SpliceStats> {
        Some(self.stats)
    }
}

/// Whether vmsplice into a pipe and splice from it to a socket work here: tried once per
/// process on a loopback TCP pair, the bytes checked.
fn supported() -> Result<(), String> {
    page_refs::probe_on_loopback(probe_send)
}

fn probe_send(socket: BorrowedFd<'_>, data: &[u8]) -> Result<(), String> {
    let mut buf = PageBuffer::new(data.len()).map_err(|e| format!("mmap: {e}"))?;
    buf.copy_from_slice(data);
    // The probe is a few pages: it fits the default 64 KiB pipe whole.
    let (pipe_read, pipe_write) = fdio::pipe().map_err(|e| format!("pipe2: {e}"))?;
    let mut at = 0;
    while at < buf.len() {
        match vmsplice(pipe_write.as_fd(), &buf[at..], 0) {
            Ok(0) => return Err("vmsplice took nothing".into()),
            Ok(n) => at += n,
            Err(e) => return Err(format!("vmsplice: {e}")),
        }
    }
    let mut left = buf.len();
    while left > 0 {
        match splice_pipe_to_socket(pipe_read.as_fd(), socket, left, false) {
            Ok(0) => return Err("splice to a TCP socket moved nothing".into()),
            Ok(n) => left -= n,
            Err(e) => return Err(format!("splice to a TCP socket: {e}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::page_refs::testing::{context, deliver, messages_for, Pair, Reader, SIZES};
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_probe_passes_on_this_kernel() {
        assert_eq!(supported(), Ok(()));
    }

    #[test]
    fn every_size_arrives_whole_and_in_order_over_tcp_and_unix() {
        for pair in [Pair::Tcp, Pair::Unix] {
            for size in SIZES {
                let what = format!("{pair:?} {size} B");
                let mut mech = Splice::new(context(size)).unwrap();
                let n = messages_for(size);
                let v = deliver(&mut mech, pair, size, n, Reader::default());
                assert_eq!(v.wrong_bytes, 0, "{what}: {:?}", v.first);
                assert_eq!(v.checked_bytes, n * size as u64, "{what}");
                let s = mech.stats;
                assert_eq!((s.messages, s.fresh_page_messages), (n, n), "{what}");
                let pieces = size.div_ceil(s.pipe_bytes) as u64;
                assert_eq!(s.pieces, n * pieces, "{what}");
                let whole_pages = size % page_size() == 0;
                assert_eq!(s.gifted_messages, if whole_pages { n } else { 0 }, "{what}");
                assert!(
                    s.calls >= 2 * s.pieces,
                    "{what}: a vmsplice and a splice a piece"
                );
            }
        }
    }

    #[test]
    fn the_pipe_covers_the_message_up_to_one_piece() {
        let pipe = |size| Splice::new(context(size)).unwrap().stats.pipe_bytes;
        assert_eq!(pipe(8), page_size(), "never below one page");
        assert_eq!(pipe(4096 + 24), 2 * page_size());
        assert_eq!(pipe(64 << 10), MAX_PIECE);
        assert_eq!(
            pipe(512 << 10),
            MAX_PIECE,
            "capped: 512 KiB goes in 8 pieces"
        );
    }

    /// The page-lifetime rule: a receiver that reads 200 ms late gets wrong bytes when the
    /// sender refills the same pages, and none when it refills fresh ones.
    #[test]
    fn refilling_in_place_corrupts_unread_bytes_and_fresh_pages_do_not() {
        let size = 64 << 10;
        let reader = Reader {
            delay: Duration::from_millis(200),
            rcvbuf: Some(16 << 10),
        };
        for pair in [Pair::Tcp, Pair::Unix] {
            for reuse in [true, false] {
                let mut mech = Splice::new(context(size)).unwrap();
                mech.reuse_pages = reuse;
                let v = deliver(&mut mech, pair, size, 16, reader);
                assert_eq!(v.checked_bytes, 16 * size as u64);
                if reuse {
                    assert!(
                        v.wrong_bytes > 0,
                        "{pair:?}: in-place refill went unnoticed"
                    );
                } else {
                    assert_eq!(v.wrong_bytes, 0, "{pair:?}: {:?}", v.first);
                }
            }
        }
    }
}
