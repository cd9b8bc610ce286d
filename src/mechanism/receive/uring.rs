//! `--recv uring-recv`: one io_uring per receiver, receiving into provided buffers (a
//! registered buffer ring) with a multishot receive, or single-shot receives with buffer
//! select where the kernel refuses multishot (io_uring_register_buf_ring(3),
//! io_uring_prep_recv_multishot(3)). Each completion's bytes are counted and verified in
//! place, then its buffer goes back to the ring. The ring is made on the first receive, in the
//! thread (and process, with `--processes`) that uses it.
use super::path::{not_a_socket, ReceivePathStats, RecvPath};
use super::Verifier;
use crate::sys::uring_recv::RecvRing;
use crate::transport::Endpoint;
use std::io;

/// Bytes of provided buffers per receiver, at most (fewer, larger buffers for large calls).
const RING_BYTES: usize = 4 << 20;
const MIN_BUFFER: usize = 4 << 10;
const MAX_BUFFER: usize = 1 << 20;

pub struct UringSource {
    /// Boxed: the ring is large and made once, on the first receive.
    ring: Option<Box<RecvRing>>,
    count: u16,
    len: u32,
}

impl UringSource {
    /// Buffers sized for receive calls of `call_size` bytes (the message, or `--recv-size`):
    /// one buffer holds one call's worth, between 4 KiB and 1 MiB; as many as fit in 4 MiB,
    /// from 4 to 64.
    pub fn new(call_size: usize) -> Self {
        let len = call_size.clamp(MIN_BUFFER, MAX_BUFFER);
        let fit = (RING_BYTES / len).clamp(4, 64);
        let count = 1u16 << fit.ilog2();
        UringSource::with_geometry(count, len as u32)
    }

    /// `count` buffers (a power of two) of `len` bytes.
    pub fn with_geometry(count: u16, len: u32) -> Self {
        UringSource {
            ring: None,
            count,
            len,
        }
    }

    /// Takes up to `want` bytes from the current completion, waiting for one when every byte
    /// of the last is taken; verifies them in place. 0: the peer closed the connection.
    pub fn pull(
        &mut self,
        ep: &Endpoint,
        want: usize,
        spin: bool,
        verifier: Option<&mut Verifier>,
    ) -> io::Result<usize> {
        let ring = match &mut self.ring {
            Some(ring) => ring,
            None => {
                let fd = ep
                    .socket_fd()
                    .ok_or_else(|| not_a_socket(RecvPath::UringRecv))?;
                let ring = RecvRing::new(fd, self.count, self.len, true).map_err(|e| {
                    io::Error::new(e.kind(), format!("setting up the io_uring receive: {e}"))
                })?;
                self.ring.insert(Box::new(ring))
            }
        };
        if ring.fill(spin)? == 0 {
            return Ok(0);
        }
        let bytes = ring.take(want);
        if let Some(v) = verifier {
            v.check(bytes);
        }
        Ok(bytes.len())
    }

    /// Fills in what the ring did.
    pub fn stats(&self, stats: &mut ReceivePathStats) {
        stats.buffers = Some(u32::from(self.count));
        stats.buffer_bytes = Some(self.len);
        if let Some(ring) = &self.ring {
            let counts = ring.counts();
            stats.calls = counts.completions;
            stats.rearms = counts.rearms;
            stats.enobufs = counts.enobufs;
            stats.unreported_eofs = counts.unreported_eofs;
            stats.multishot = Some(ring.multishot());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_sized_by_the_call_and_bounded() {
        let g = |size| {
            let s = UringSource::new(size);
            (s.count, s.len)
        };
        assert_eq!(g(64 << 10), (64, 64 << 10));
        assert_eq!(g(100), (64, 4096));
        assert_eq!(g(1 << 20), (4, 1 << 20));
        assert_eq!(g(8 << 20), (4, 1 << 20));
        assert_eq!(g(300_000), (8, 300_000));
    }
}
