//! `sendfile`: the page-cache path. The message is written once into a memfd
//! (memfd_create(2)) at setup; every message is then sendfile(2)d from offset 0 of it. The
//! socket references the memfd's page-cache pages instead of copying user memory (man 2
//! sendfile), which is what this path is compared with the user-memory paths for.
use super::descriptor::{two_messages, Crossover, MechanismDescriptor, MechanismKind};
use super::descriptor::{Patterns, Reuse, Transports};
use super::page_refs::{self, moved, socket_of, SpliceStats};
use super::{pattern, FlowContext, SendMechanism};
use crate::sys::file::sendfile;
use crate::sys::pages::{memfd_create, page_size, punch_hole};
use crate::transport::Endpoint;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileExt;

pub struct Sendfile {
    memfd: File,
    /// Where `--verify` builds each message before pwrite(2) puts it in the memfd; empty
    /// without it.
    staging: Vec<u8>,
    /// Bytes punched out before each refill: the message rounded up to whole pages.
    hole: usize,
    ctx: FlowContext,
    stats: SpliceStats,
    /// Test knob: rewrite the memfd's pages in place (what the real code must not do).
    #[cfg(test)]
    reuse_pages: bool,
}

static DESCRIPTOR: MechanismDescriptor = MechanismDescriptor {
    name: "sendfile",
    help: "from a memfd",
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
        question: "From which message size does sendfile from a memfd beat send()?",
        always: false,
    }),
};

impl MechanismKind {
    /// `sendfile`: sendfile(2) from a memfd holding the message (the page-cache path).
    pub const SENDFILE: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}

fn build(ctx: FlowContext) -> io::Result<Box<dyn SendMechanism>> {
    Ok(Box::new(Sendfile::new(ctx)?))
}

impl Sendfile {
    pub fn new(ctx: FlowContext) -> io::Result<Sendfile> {
        let memfd = File::from(memfd_create(c"bytepath-sendfile")?);
        let mut message = vec![0u8; ctx.message_size];
        pattern::fill(pattern::message_seed(ctx.flow, 0), 0, &mut message);
        memfd.write_all_at(&message, 0)?;
        if !ctx.fill_pattern {
            message = Vec::new();
        }
        Ok(Sendfile {
            memfd,
            staging: message,
            hole: ctx.message_size.div_ceil(page_size()) * page_size(),
            ctx,
            stats: SpliceStats::default(),
            #[cfg(test)]
            reuse_pages: false,
        })
    }

    /// Writes message `seq` into the memfd, in fresh pages. Earlier messages' page-cache pages
    /// may still be referenced by skbs the receiver has not read yet (on loopback, until it
    /// reads them): pwrite into them would change bytes in flight. Punching a hole takes them
    /// out of the page cache (a referenced page lives on, unchanged, until its last reference
    /// goes), so the pwrite lands in newly allocated pages. The hole covers whole pages: a
    /// hole that ends inside a page zeroes that part of the page in place instead of dropping
    /// it, which corrupts the unread bytes just the same (seen at 8 B and 4 KiB + 24 B).
    fn refill(&mut self, seq: u64) -> io::Result<()> {
        if !self.reuses_pages() {
            punch_hole(self.memfd.as_fd(), 0, self.hole as u64)?;
            self.stats.fresh_page_messages += 1;
        }
        let seed = pattern::message_seed(self.ctx.flow, seq);
        pattern::fill(seed, 0, &mut self.staging);
        self.memfd.write_all_at(&self.staging, 0)
    }

    #[cfg(test)]
    fn reuses_pages(&self) -> bool {
        self.reuse_pages
    }

    #[cfg(not(test))]
    fn reuses_pages(&self) -> bool {
        false
    }
}

impl SendMechanism for Sendfile {
    fn send_message(&mut self, ep: &Endpoint, seq: u64) -> io::Result<()> {
        let socket = socket_of(ep)?;
        if self.ctx.fill_pattern {
            self.refill(seq)?;
        }
        let size = self.ctx.message_size;
        let memfd = self.memfd.as_fd();
        // An explicit offset: the memfd's own file offset is never used or moved.
        let mut offset = 0i64;
        while (offset as usize) < size {
            moved(socket, &mut self.stats, || {
                let left = size - offset as usize;
                sendfile(socket, memfd, &mut offset, left)
            })?;
        }
        self.stats.messages += 1;
        Ok(())
    }

    fn splice_stats(&self) -> Option<SpliceStats> {
        Some(self.stats)
    }
}

/// Whether memfd_create and sendfile from a memfd to a socket work here: tried once per
/// process on a loopback TCP pair, the bytes checked.
fn supported() -> Result<(), String> {
    page_refs::probe_on_loopback(probe_send)
}

fn probe_send(socket: BorrowedFd<'_>, data: &[u8]) -> Result<(), String> {
    let memfd =
        File::from(memfd_create(c"bytepath-probe").map_err(|e| format!("memfd_create: {e}"))?);
    memfd
        .write_all_at(data, 0)
        .map_err(|e| format!("writing the memfd: {e}"))?;
    let mut offset = 0i64;
    while (offset as usize) < data.len() {
        let left = data.len() - offset as usize;
        match sendfile(socket, memfd.as_fd(), &mut offset, left) {
            Ok(0) => return Err("sendfile from a memfd moved nothing".into()),
            Ok(_) => {}
            Err(e) => return Err(format!("sendfile from a memfd to a TCP socket: {e}")),
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
                let mut mech = Sendfile::new(context(size)).unwrap();
                let n = messages_for(size);
                let v = deliver(&mut mech, pair, size, n, Reader::default());
                assert_eq!(v.wrong_bytes, 0, "{what}: {:?}", v.first);
                assert_eq!(v.checked_bytes, n * size as u64, "{what}");
                let s = mech.stats;
                assert_eq!((s.messages, s.fresh_page_messages), (n, n), "{what}");
                assert!(s.calls >= n, "{what}");
                assert_eq!((s.pieces, s.gifted_messages, s.pipe_bytes), (0, 0, 0));
            }
        }
    }

    #[test]
    fn the_memfd_offset_is_never_moved_and_holds_the_message() {
        let mut mech = Sendfile::new(context(4096 + 24)).unwrap();
        deliver(&mut mech, Pair::Unix, 4096 + 24, 3, Reader::default());
        use std::io::Seek;
        assert_eq!(mech.memfd.stream_position().unwrap(), 0);
        assert_eq!(mech.memfd.metadata().unwrap().len(), 4096 + 24);
    }

    /// The page-lifetime rule: a receiver that reads 200 ms late gets wrong bytes when the
    /// sender rewrites the memfd's pages in place, and none when it punches a hole first.
    #[test]
    fn rewriting_in_place_corrupts_unread_bytes_and_a_punched_hole_does_not() {
        let size = 64 << 10;
        let reader = Reader {
            delay: Duration::from_millis(200),
            rcvbuf: Some(16 << 10),
        };
        for pair in [Pair::Tcp, Pair::Unix] {
            for reuse in [true, false] {
                let mut mech = Sendfile::new(context(size)).unwrap();
                mech.reuse_pages = reuse;
                let v = deliver(&mut mech, pair, size, 16, reader);
                assert_eq!(v.checked_bytes, 16 * size as u64);
                if reuse {
                    assert!(
                        v.wrong_bytes > 0,
                        "{pair:?}: in-place rewrite went unnoticed"
                    );
                } else {
                    assert_eq!(v.wrong_bytes, 0, "{pair:?}: {:?}", v.first);
                }
            }
        }
    }
}
