//! `--recv zc-recv`: TCP_ZEROCOPY_RECEIVE (tcp(7); kernel selftest net/tcp_mmap.c). Each call
//! maps the whole pages of what the current message or chunk still needs into a read-only
//! mapping of the socket made once per receiver, and has the kernel copy the rest (the tail
//! short of a page, or what it will not map) into the receiver's buffer; bytes it leaves
//! (`recv_skip_hint`) are read with recv(2). Mapped bytes are verified by reading the mapping.
//! The kernel maps only whole, order-0 pages at offset 0 that no file owns: on loopback that
//! needs segments of whole pages (TCP_MAXSEG, set by the connector) and a sender whose data
//! sits in such pages (see `reason`).
use super::path::{not_a_socket, ReceivePathStats, RecvPath};
use super::Verifier;
use crate::sys::socket;
use crate::sys::zc_receive::{page_size, ZcRegion};
use crate::transport::Endpoint;
use std::io;
use std::os::fd::BorrowedFd;

/// The mapping is never larger than this: a call maps at most this much.
const MAX_REGION: usize = 4 << 20;

pub struct ZcSource {
    region: Option<ZcRegion>,
    region_len: usize,
    page: usize,
    /// poll(2) said readable since the last bytes arrived: an empty call now means EOF or a
    /// shutdown, which only recv(2) can tell.
    readable: bool,
    calls: u64,
    copy_calls: u64,
    /// Calls that asked the kernel to map at least one page.
    map_requests: u64,
    mapped_bytes: u64,
    copied_bytes: u64,
    segment: Option<u32>,
}

impl ZcSource {
    /// A source for receive calls of up to `call_size` bytes: its mapping holds one call's
    /// whole pages (at most 4 MiB).
    pub fn new(call_size: usize) -> Self {
        let page = page_size();
        ZcSource {
            region: None,
            region_len: call_size.div_ceil(page).clamp(1, MAX_REGION / page) * page,
            page,
            readable: false,
            calls: 0,
            copy_calls: 0,
            map_requests: 0,
            mapped_bytes: 0,
            copied_bytes: 0,
            segment: None,
        }
    }

    /// Receives up to `copybuf.len()` bytes (at least 1): whole pages mapped, the rest copied
    /// into `copybuf`; verifies them in stream order. 0: the peer closed the connection.
    pub fn pull(
        &mut self,
        ep: &Endpoint,
        copybuf: &mut [u8],
        spin: bool,
        mut verifier: Option<&mut Verifier>,
    ) -> io::Result<usize> {
        let fd = ep
            .socket_fd()
            .ok_or_else(|| not_a_socket(RecvPath::ZcRecv))?;
        if self.region.is_none() {
            self.map_region(fd)?;
        }
        let want = copybuf.len().min(self.region_len);
        let map = want - want % self.page;
        if map == 0 {
            // Less than a page asked: nothing to map.
            return self.copy(fd, &mut copybuf[..want], spin, verifier, true);
        }
        loop {
            let region = self.region.as_mut().expect("made above");
            self.calls += 1;
            self.map_requests += 1;
            let outcome = match region.receive(map, &mut copybuf[..want - map]) {
                Ok(o) => o,
                // Nothing queued and the peer has closed: recv(2) says EOF.
                Err(e) if e.raw_os_error() == Some(libc::EIO) => Default::default(),
                Err(e) => return Err(e),
            };
            let got = outcome.mapped + outcome.copied;
            if got > 0 {
                if let Some(v) = verifier.as_deref_mut() {
                    v.check(region.mapped());
                    v.check(&copybuf[..outcome.copied]);
                }
                self.mapped_bytes += outcome.mapped as u64;
                self.copied_bytes += outcome.copied as u64;
                self.readable = false;
                return Ok(got);
            }
            if outcome.skip > 0 || self.readable {
                // Bytes the kernel will not map, or an empty answer after poll said readable.
                let n = if outcome.skip > 0 {
                    outcome.skip.min(want)
                } else {
                    want
                };
                match self.copy(fd, &mut copybuf[..n], true, verifier.as_deref_mut(), false) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readable = false,
                    other => return other,
                }
            }
            // Nothing queued: wait for data (the call itself never waits).
            let timeout = if spin { 0 } else { -1 };
            self.readable = socket::poll_one(fd, socket::POLLIN, timeout)? != 0;
            if spin && !self.readable {
                std::hint::spin_loop();
            }
        }
    }

    /// Once, on the first pull: the socket's segment payload and the region its pages are
    /// mapped into.
    fn map_region(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        self.segment = crate::transport::tcp::segment_payload(fd).ok();
        let region = ZcRegion::new(fd, self.region_len).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("mapping the socket for TCP_ZEROCOPY_RECEIVE: {e}"),
            )
        })?;
        self.region = Some(region);
        Ok(())
    }

    /// recv(2) into `buf`, counted as copied; `nonblocking` returns WouldBlock at once unless
    /// `retry` (then it busy-polls, as `--spin` does).
    fn copy(
        &mut self,
        fd: BorrowedFd<'_>,
        buf: &mut [u8],
        nonblocking: bool,
        verifier: Option<&mut Verifier>,
        retry: bool,
    ) -> io::Result<usize> {
        let flags = if nonblocking { socket::MSG_DONTWAIT } else { 0 };
        let n = loop {
            self.copy_calls += 1;
            match socket::recv(fd, buf, flags) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if retry && e.kind() == io::ErrorKind::WouldBlock => std::hint::spin_loop(),
                Err(e) => return Err(e),
            }
        };
        if let Some(v) = verifier {
            v.check(&buf[..n]);
        }
        self.copied_bytes += n as u64;
        if n > 0 {
            self.readable = false;
        }
        Ok(n)
    }

    /// Fills in what the mapping did, and why nothing was mapped when nothing was.
    pub fn stats(&self, stats: &mut ReceivePathStats) {
        stats.calls = self.calls;
        stats.copy_calls = self.copy_calls;
        stats.mapped_bytes = self.mapped_bytes;
        stats.copied_bytes = self.copied_bytes;
        stats.copybuf = self.region.as_ref().map(ZcRegion::has_copybuf);
        stats.segment_bytes = self.segment;
        stats.reason = self.reason();
    }

    fn reason(&self) -> Option<String> {
        if self.mapped_bytes > 0 || self.copied_bytes == 0 {
            return None;
        }
        let page = self.page;
        Some(match self.segment {
            Some(mss) if mss as usize % page != 0 => format!(
                "nothing mapped: segments carried {mss} B of payload, not whole {page} B pages, and the kernel maps only whole pages"
            ),
            _ if self.map_requests == 0 => format!(
                "nothing mapped: every receive asked for less than one {page} B page, so there was nothing to map"
            ),
            _ => "nothing mapped: the kernel declined every page it was asked to map; it maps only whole, order-0 pages at offset 0 that no file owns, and this data was in other pages (on loopback, TCP copies send/sendmsg data into the socket's page-frag compound pages, and splice and sendfile hand over pages that a process or a file still owns, all of which it refuses)".to_string(),
        })
    }
}
