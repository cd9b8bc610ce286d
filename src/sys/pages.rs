//! Pages handed to the kernel by reference, for the `splice` and `sendfile` senders:
//! an anonymous page-aligned buffer (mmap(2)) that madvise(2) MADV_DONTNEED swaps for fresh
//! pages, vmsplice(2) of it into a pipe, memfd_create(2) and fallocate(2) with
//! FALLOC_FL_PUNCH_HOLE (drop a memfd range's pages so the next write gets new ones).
//!
//! Neither vmsplice nor sendfile copies: the pipe, and then the socket's skbs, hold references
//! to the very pages written here until the data is acknowledged and, on loopback, read by the
//! receiver. That is not a memory-safety matter (a referenced page outlives any unmapping, the
//! kernel keeps it), but it is a data matter: writing those pages again changes what the
//! receiver gets. `PageBuffer::discard` and `punch_hole` are how callers write into new pages
//! instead.
use super::cvt;
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

pub use libc::SPLICE_F_GIFT;

/// The system's page size (sysconf(_SC_PAGESIZE)).
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// `len` bytes of private anonymous memory starting on a page boundary, mapped in whole pages;
/// unmapped on drop. Derefs to its `len` bytes.
pub struct PageBuffer {
    ptr: *mut libc::c_void,
    len: usize,
    /// Mapped bytes: `len` rounded up to whole pages.
    mapped: usize,
}

// SAFETY: the mapping is owned by this value alone; moving it to another thread moves the only
// handle to it, and &/&mut access follows Rust's borrow rules like any owned buffer.
unsafe impl Send for PageBuffer {}

impl PageBuffer {
    /// Maps `len` (> 0) zeroed bytes.
    pub fn new(len: usize) -> io::Result<PageBuffer> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map an empty buffer",
            ));
        }
        let mapped = len.div_ceil(page_size()) * page_size();
        // SAFETY: a fresh private anonymous mapping chosen by the kernel (null hint); no
        // existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(PageBuffer { ptr, len, mapped })
    }

    /// Gives the buffer's pages back (MADV_DONTNEED): the next access faults in new zeroed
    /// pages, while any page the kernel still references (a pipe buffer, an skb) lives on,
    /// unchanged, until that reference is dropped.
    pub fn discard(&mut self) -> io::Result<()> {
        // SAFETY: ptr/mapped is exactly our mapping, and `&mut self` means no slice into it is
        // borrowed; on a private anonymous mapping MADV_DONTNEED leaves the range mapped and
        // reading as zeros, so the memory stays valid for later access.
        cvt(unsafe { libc::madvise(self.ptr, self.mapped, libc::MADV_DONTNEED) })?;
        Ok(())
    }
}

impl std::ops::Deref for PageBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len lies in a live read-write mapping owned by self until drop.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl std::ops::DerefMut for PageBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for deref; `&mut self` makes this the only borrow of the mapping.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for PageBuffer {
    fn drop(&mut self) {
        // SAFETY: ptr/mapped are exactly what mmap returned; no slice borrowed from self
        // outlives it. Pages the kernel still references survive the unmapping.
        unsafe {
            libc::munmap(self.ptr, self.mapped);
        }
    }
}

/// vmsplice(2) of `buf` into the pipe `pipe_in` (its write end); returns the bytes taken.
/// The pipe references `buf`'s pages instead of copying them (see the module note on what
/// that means for rewriting them). `flags` may hold SPLICE_F_GIFT, which the caller may pass
/// only for whole, page-aligned pages it will never write again.
pub fn vmsplice(pipe_in: BorrowedFd<'_>, buf: &[u8], flags: u32) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: one valid iovec over a readable slice that stays borrowed for the call; the
    // kernel takes page references for what it keeps, so nothing dangles after we return.
    let n = cvt(unsafe { libc::vmsplice(pipe_in.as_raw_fd(), &iov, 1, flags) })?;
    Ok(n as usize)
}

/// memfd_create(2) with MFD_CLOEXEC: an anonymous file in memory (shmem page cache).
pub fn memfd_create(name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a NUL-terminated string that the kernel only reads.
    let fd = cvt(unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) })?;
    // SAFETY: on success the kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// fallocate(2) FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE over `[offset, offset + len)`: the
/// file keeps its size, the range reads as zeros, and the pages wholly inside it leave the page
/// cache, so the next write there gets new pages; a page that a pipe or an skb still
/// references lives on, unchanged, until that reference is dropped. A page only partly inside
/// the range is zeroed in place instead: give whole pages to get fresh ones.
pub fn punch_hole(file: BorrowedFd<'_>, offset: u64, len: u64) -> io::Result<()> {
    // SAFETY: integer arguments on an open descriptor; no memory of ours is touched.
    cvt(unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            len as libc::off_t,
        )
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::Read;
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_page_buffer_is_page_aligned_zeroed_and_writable() {
        let mut buf = PageBuffer::new(5000).unwrap();
        assert_eq!(buf.len(), 5000);
        assert_eq!(buf.as_ptr() as usize % page_size(), 0);
        assert!(buf.iter().all(|&b| b == 0));
        buf.fill(7);
        assert!(buf.iter().all(|&b| b == 7));
        assert!(PageBuffer::new(0).is_err());
    }

    #[test]
    fn discarding_a_buffer_zeroes_it_but_pages_in_a_pipe_keep_their_bytes() {
        let mut buf = PageBuffer::new(page_size()).unwrap();
        buf.fill(0xAB);
        let (r, w) = super::super::fdio::pipe().unwrap();
        assert_eq!(vmsplice(w.as_fd(), &buf, 0).unwrap(), page_size());
        buf.discard().unwrap();
        assert!(buf.iter().all(|&b| b == 0), "fresh pages read as zeros");
        buf.fill(0xCD);
        drop(w);
        let mut got = Vec::new();
        File::from(r).read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), page_size());
        assert!(got.iter().all(|&b| b == 0xAB), "the pipe kept the old page");
    }

    #[test]
    fn without_discarding_a_rewrite_reaches_bytes_already_in_the_pipe() {
        let mut buf = PageBuffer::new(page_size()).unwrap();
        buf.fill(0xAB);
        let (r, w) = super::super::fdio::pipe().unwrap();
        vmsplice(w.as_fd(), &buf, 0).unwrap();
        buf.fill(0xCD);
        drop(w);
        let mut got = Vec::new();
        File::from(r).read_to_end(&mut got).unwrap();
        assert!(
            got.iter().all(|&b| b == 0xCD),
            "vmsplice referenced, not copied"
        );
    }

    /// What a memfd page spliced into a pipe reads as after a hole is punched over it.
    fn pipe_after_punching(hole: u64) -> Vec<u8> {
        let file = File::from(memfd_create(c"bytepath-test").unwrap());
        file.write_all_at(&vec![0xABu8; page_size()], 0).unwrap();
        let (r, w) = super::super::fdio::pipe().unwrap();
        let mut offset = 0;
        let n = super::super::file::splice_from_file(file.as_fd(), &mut offset, w.as_fd(), 8);
        assert_eq!(n.unwrap(), 8);
        punch_hole(file.as_fd(), 0, hole).unwrap();
        file.write_all_at(&[0xCDu8; 8], 0).unwrap();
        drop(w);
        let mut got = Vec::new();
        File::from(r).read_to_end(&mut got).unwrap();
        got
    }

    #[test]
    fn a_whole_page_hole_keeps_referenced_bytes_and_a_partial_one_does_not() {
        assert_eq!(pipe_after_punching(page_size() as u64), [0xAB; 8]);
        assert_ne!(
            pipe_after_punching(8),
            [0xAB; 8],
            "a hole inside a page rewrites it in place"
        );
    }

    #[test]
    fn a_punched_memfd_keeps_its_size_and_reads_zeros() {
        let file = File::from(memfd_create(c"bytepath-test").unwrap());
        file.write_all_at(&[9u8; 8192], 0).unwrap();
        punch_hole(file.as_fd(), 0, 4096).unwrap();
        assert_eq!(file.metadata().unwrap().len(), 8192);
        let mut got = vec![1u8; 8192];
        file.read_exact_at(&mut got, 0).unwrap();
        assert!(got[..4096].iter().all(|&b| b == 0));
        assert!(got[4096..].iter().all(|&b| b == 9));
    }
}
