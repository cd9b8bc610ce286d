//! Where a stream receiver's bytes come from (`--recv`): the one `match` over receive paths.
//! recv(2) reads into the receiver's buffer; uring-recv reads completions in place
//! (`uring`); zc-recv maps pages and copies the rest into the buffer (`zc`); trunc
//! counts what recv(MSG_TRUNC) discards.
use super::path::{recv_truncated, ReceivePathStats, RecvPath};
use super::uring::UringSource;
use super::zc::ZcSource;
use super::Verifier;
use crate::transport::Endpoint;
use std::io;

pub(crate) enum Source {
    /// recv(2) calls so far.
    Recv(u64),
    Uring(UringSource),
    Zc(ZcSource),
    /// recv(MSG_TRUNC) calls so far.
    Trunc(u64),
}

impl Source {
    /// The source of `path` for calls of up to `call_size` bytes.
    pub(crate) fn new(path: RecvPath, call_size: usize) -> Source {
        match path {
            RecvPath::Recv => Source::Recv(0),
            RecvPath::UringRecv => Source::Uring(UringSource::new(call_size)),
            RecvPath::ZcRecv => Source::Zc(ZcSource::new(call_size)),
            RecvPath::Trunc => Source::Trunc(0),
        }
    }

    /// Whether bytes pass through the receiver's buffer (uring-recv has its own).
    pub(crate) fn uses_buffer(&self) -> bool {
        !matches!(self, Source::Uring(_))
    }

    /// Takes up to `want` bytes (at least 1) and verifies them; recv(2) reads them into
    /// `buf[at..]`, zc-recv copies what it does not map into `buf`. 0: the peer closed.
    pub(crate) fn pull(
        &mut self,
        ep: &Endpoint,
        buf: &mut [u8],
        (at, want): (usize, usize),
        spin: bool,
        verifier: Option<&mut Verifier>,
    ) -> io::Result<usize> {
        match self {
            Source::Recv(calls) => {
                *calls += 1;
                let n = recv_once(ep, &mut buf[at..at + want], spin)?;
                if let Some(v) = verifier {
                    v.check(&buf[at..at + n]);
                }
                Ok(n)
            }
            Source::Uring(source) => source.pull(ep, want, spin, verifier),
            Source::Zc(source) => source.pull(ep, &mut buf[..want], spin, verifier),
            Source::Trunc(calls) => {
                *calls += 1;
                recv_truncated(ep, &mut buf[..want], spin)
            }
        }
    }

    /// What the path did, for a receiver that took `bytes` in all.
    pub(crate) fn stats(&self, bytes: u64) -> ReceivePathStats {
        let mut stats = match self {
            Source::Recv(calls) => ReceivePathStats {
                calls: *calls,
                ..ReceivePathStats::new(RecvPath::Recv)
            },
            Source::Uring(source) => {
                let mut s = ReceivePathStats::new(RecvPath::UringRecv);
                source.stats(&mut s);
                s
            }
            Source::Zc(source) => {
                let mut s = ReceivePathStats::new(RecvPath::ZcRecv);
                source.stats(&mut s);
                s
            }
            Source::Trunc(calls) => ReceivePathStats {
                calls: *calls,
                discarded_bytes: bytes,
                ..ReceivePathStats::new(RecvPath::Trunc)
            },
        };
        if stats.path.delivers_data() {
            stats.delivered_bytes = bytes;
        }
        stats
    }
}

/// One recv(2) or read(2); with `spin`, busy-polls non-blocking calls instead of sleeping in
/// the kernel.
pub(crate) fn recv_once(ep: &Endpoint, buf: &mut [u8], spin: bool) -> io::Result<usize> {
    loop {
        match ep.read(buf, spin) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if spin && e.kind() == io::ErrorKind::WouldBlock => std::hint::spin_loop(),
            Err(e) => return Err(e),
        }
    }
}
