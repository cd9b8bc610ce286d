//! TCP receive zero-copy (tcp(7) TCP_ZEROCOPY_RECEIVE, Linux 4.18; the copy buffer, Linux
//! 5.11; kernel selftest tools/testing/selftests/net/tcp_mmap.c): a read-only MAP_SHARED
//! mapping of the socket, into which getsockopt(TCP_ZEROCOPY_RECEIVE) inserts the pages of
//! the receive queue instead of copying them. The kernel maps only whole, order-0 pages at
//! offset 0 of an skb frag; what it cannot map it copies into a copy buffer (when given) or
//! leaves for recv(2), saying how much in `recv_skip_hint`. Each call first zaps the pages an
//! earlier call left in the range it maps, so one region serves every call.
use super::cvt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

/// `struct tcp_zerocopy_receive` from <linux/tcp.h> (64 bytes; libc does not define it).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct TcpZerocopyReceive {
    pub address: u64,
    pub length: u32,
    pub recv_skip_hint: u32,
    pub inq: u32,
    pub err: i32,
    pub copybuf_address: u64,
    pub copybuf_len: i32,
    pub flags: u32,
    pub msg_control: u64,
    pub msg_controllen: u64,
    pub msg_flags: u32,
    pub reserved: u32,
}

const _: () = assert!(std::mem::size_of::<TcpZerocopyReceive>() == 64);

/// The struct size a kernel with the copy buffer knows at least (offsetofend(copybuf_len)).
const WITH_COPYBUF: libc::socklen_t = 36;

/// getsockopt(TCP_ZEROCOPY_RECEIVE) with `zc` in and out; also returns the struct size the
/// kernel wrote back (smaller on kernels that know fewer fields).
fn zerocopy_getsockopt(fd: RawFd, zc: &mut TcpZerocopyReceive) -> (io::Result<()>, usize) {
    let mut len = std::mem::size_of::<TcpZerocopyReceive>() as libc::socklen_t;
    // SAFETY: zc and len are valid and writable, len holds zc's size. The kernel writes into
    // zc, into the copy buffer zc names (a live &mut [u8] of copybuf_len bytes, or none), and
    // inserts pages only into the socket's own mapping at zc.address (a ZcRegion, or none).
    let ret = cvt(unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_ZEROCOPY_RECEIVE,
            (zc as *mut TcpZerocopyReceive).cast(),
            &mut len,
        )
    });
    (ret.map(drop), len as usize)
}

/// getsockopt(TCP_ZEROCOPY_RECEIVE) with no mapping (address 0, length 0): a kernel with the
/// option answers with the queue state; one without says ENOPROTOOPT (or EINVAL for a struct
/// size it does not know).
pub fn tcp_zerocopy_receive(fd: BorrowedFd<'_>) -> io::Result<TcpZerocopyReceive> {
    let mut zc = TcpZerocopyReceive::default();
    zerocopy_getsockopt(fd.as_raw_fd(), &mut zc).0?;
    Ok(zc)
}

/// What one call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZcOutcome {
    /// Bytes mapped at the start of the region (whole pages).
    pub mapped: usize,
    /// Bytes the kernel copied into the copy buffer.
    pub copied: usize,
    /// Bytes that follow and must be read with recv(2) before mapping can go on.
    pub skip: usize,
}

/// A read-only mapping of one TCP socket that receives are mapped into.
pub struct ZcRegion {
    fd: RawFd,
    addr: *mut u8,
    len: usize,
    /// Bytes at the start of the region the last call mapped: readable until the next call.
    valid: usize,
    copybuf: bool,
}

// SAFETY: the mapping is owned by this struct and only read through &self; it moves with the
// receiver to the thread that uses it.
unsafe impl Send for ZcRegion {}

/// The system page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

impl ZcRegion {
    /// Maps `len` bytes (rounded up to pages) of `fd`, a connected TCP socket, and learns
    /// whether the kernel takes a copy buffer.
    pub fn new(fd: BorrowedFd<'_>, len: usize) -> io::Result<ZcRegion> {
        let page = page_size();
        let len = len.max(1).div_ceil(page) * page;
        // SAFETY: a fresh shared read-only mapping of the socket at an address the kernel
        // picks; TCP's mmap only reserves the range (pages are inserted by the getsockopt).
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut region = ZcRegion {
            fd: fd.as_raw_fd(),
            addr: addr.cast(),
            len,
            valid: 0,
            copybuf: false,
        };
        // Nothing to map yet (length 0): the answer's size says which fields the kernel knows.
        let mut zc = TcpZerocopyReceive {
            address: region.addr as u64,
            ..Default::default()
        };
        let (ret, size) = zerocopy_getsockopt(region.fd, &mut zc);
        match ret {
            Err(e) if e.raw_os_error() != Some(libc::EIO) => return Err(e),
            _ => region.copybuf = size >= WITH_COPYBUF as usize,
        }
        Ok(region)
    }

    /// Whether the kernel copies what it cannot map into a copy buffer (Linux 5.11).
    pub fn has_copybuf(&self) -> bool {
        self.copybuf
    }

    /// One getsockopt(TCP_ZEROCOPY_RECEIVE): maps up to `map` bytes (whole pages, at most
    /// `len()`), then copies up to `copybuf.len()` bytes that follow into `copybuf` (if the
    /// kernel has the copy buffer). Does not wait for data. EIO: nothing queued and the peer
    /// has closed.
    pub fn receive(&mut self, map: usize, copybuf: &mut [u8]) -> io::Result<ZcOutcome> {
        assert!(map <= self.len, "a receive maps inside the region");
        let copy_len = if self.copybuf { copybuf.len() } else { 0 };
        let mut zc = TcpZerocopyReceive {
            address: self.addr as u64,
            length: map as u32,
            copybuf_address: if copy_len > 0 {
                copybuf.as_mut_ptr() as u64
            } else {
                0
            },
            copybuf_len: copy_len.min(i32::MAX as usize) as i32,
            ..Default::default()
        };
        self.valid = 0;
        zerocopy_getsockopt(self.fd, &mut zc).0?;
        if zc.err != 0 {
            return Err(io::Error::from_raw_os_error(zc.err.abs()));
        }
        let mapped = (zc.length as usize).min(map);
        self.valid = mapped;
        Ok(ZcOutcome {
            mapped,
            copied: (zc.copybuf_len.max(0) as usize).min(copy_len),
            skip: zc.recv_skip_hint as usize,
        })
    }

    /// The bytes the last `receive` mapped, read in place.
    pub fn mapped(&self) -> &[u8] {
        // SAFETY: the first `valid` bytes of the region hold pages the last getsockopt
        // inserted; they stay mapped, read-only and unchanged until the next getsockopt on
        // this region or munmap, and both need &mut self, which this borrow excludes.
        unsafe { std::slice::from_raw_parts(self.addr, self.valid) }
    }
}

impl Drop for ZcRegion {
    fn drop(&mut self) {
        // SAFETY: addr and len are the mapping made in `new`; no slice of it outlives self.
        unsafe { libc::munmap(self.addr.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn an_empty_queue_maps_nothing_and_the_kernel_takes_the_copy_buffer() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let mut region = ZcRegion::new(server.as_fd(), 3 * page_size() - 1).unwrap();
        assert_eq!(region.len, 3 * page_size());
        assert!(region.has_copybuf(), "Linux 5.11+ takes a copy buffer");
        let mut buf = [0u8; 64];
        let got = region.receive(page_size(), &mut buf).unwrap();
        assert_eq!(got, ZcOutcome::default());
        // Less than a page queued and a copy buffer that holds it: the kernel copies it.
        client.write_all(b"twelve bytes").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let got = region.receive(page_size(), &mut buf).unwrap();
        assert_eq!((got.mapped, got.copied), (0, 12));
        assert_eq!(&buf[..12], b"twelve bytes");
        assert!(region.mapped().is_empty());
    }
}
