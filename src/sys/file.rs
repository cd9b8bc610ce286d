//! File-serving system calls for `bytepath file`: sendfile(2), splice(2), a read-only mmap(2)
//! of a whole file, mincore(2) (how much of it is resident), posix_fadvise(2) with
//! POSIX_FADV_DONTNEED (drop its clean pages) and statvfs(3) (free space for test files).
use super::cvt;
use super::pages::page_size;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::Path;

/// sendfile(2): up to `count` bytes of `file` from `*offset` to `socket`; the kernel advances
/// `*offset` by what it sent.
pub fn sendfile(
    socket: BorrowedFd<'_>,
    file: BorrowedFd<'_>,
    offset: &mut i64,
    count: usize,
) -> io::Result<usize> {
    let mut off: libc::off_t = *offset;
    // SAFETY: `off` is a valid, writable off_t for the duration of the call; both descriptors
    // are open (borrowed).
    let n = cvt(unsafe { libc::sendfile(socket.as_raw_fd(), file.as_raw_fd(), &mut off, count) })?;
    *offset = off;
    Ok(n as usize)
}

/// splice(2) from a file at `*offset` into a pipe (the kernel advances `*offset`).
pub fn splice_from_file(
    file: BorrowedFd<'_>,
    offset: &mut i64,
    pipe_in: BorrowedFd<'_>,
    count: usize,
) -> io::Result<usize> {
    let mut off: libc::loff_t = *offset;
    // SAFETY: `off` is a valid, writable loff_t for the duration of the call; the output side
    // has no offset (a pipe); both descriptors are open.
    let n = cvt(unsafe {
        libc::splice(
            file.as_raw_fd(),
            &mut off,
            pipe_in.as_raw_fd(),
            std::ptr::null_mut(),
            count,
            libc::SPLICE_F_MOVE,
        )
    })?;
    *offset = off;
    Ok(n as usize)
}

/// splice(2) from a pipe into a socket (neither side has an offset), with SPLICE_F_MORE: the
/// caller has more to send.
pub fn splice_to_socket(
    pipe_out: BorrowedFd<'_>,
    socket: BorrowedFd<'_>,
    count: usize,
) -> io::Result<usize> {
    splice_pipe_to_socket(pipe_out, socket, count, true)
}

/// splice(2) from a pipe into a socket; `more` sets SPLICE_F_MORE (the socket sees MSG_MORE:
/// more data follows, so TCP need not push what it has).
pub fn splice_pipe_to_socket(
    pipe_out: BorrowedFd<'_>,
    socket: BorrowedFd<'_>,
    count: usize,
    more: bool,
) -> io::Result<usize> {
    let flags = libc::SPLICE_F_MOVE | if more { libc::SPLICE_F_MORE } else { 0 };
    // SAFETY: no pointers besides the two null offsets, which splice allows for pipes and
    // sockets; both descriptors are open.
    let n = cvt(unsafe {
        libc::splice(
            pipe_out.as_raw_fd(),
            std::ptr::null_mut(),
            socket.as_raw_fd(),
            std::ptr::null_mut(),
            count,
            flags,
        )
    })?;
    Ok(n as usize)
}

/// A whole file mapped read-only and shared; unmapped on drop. Derefs to its bytes.
pub struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by this value alone; sharing &[u8] across threads
// is as safe as for any immutable slice.
unsafe impl Send for Mapping {}
// SAFETY: as above: only shared reads are possible.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `file` (len > 0: mmap refuses empty mappings).
    ///
    /// The file must not be truncated while mapped (reading past its end raises SIGBUS);
    /// bytepath maps only its own test files or a user file it opened read-only, and says so.
    pub fn of_file(file: &File, len: usize) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map an empty file",
            ));
        }
        // SAFETY: a fresh mapping chosen by the kernel (null hint), read-only, of an open file;
        // no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping { ptr, len })
    }
}

impl std::ops::Deref for Mapping {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is a live PROT_READ mapping until drop; nothing writes to it
        // through this process.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned; no slice borrowed from self outlives it.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

/// (resident pages, total pages) of `file`'s first `len` bytes, as mincore(2) reports them
/// through a temporary read-only mapping (mapping does not fault pages in).
pub fn resident_pages(file: &File, len: u64) -> io::Result<(u64, u64)> {
    if len == 0 {
        return Ok((0, 0));
    }
    let map = Mapping::of_file(file, len as usize)?;
    let pages = (len as usize).div_ceil(page_size());
    let mut vec = vec![0u8; pages];
    // SAFETY: the mapping covers `len` bytes starting at a page-aligned address, and `vec` holds
    // one byte per page of that range.
    cvt(unsafe { libc::mincore(map.ptr, map.len, vec.as_mut_ptr()) })?;
    let resident = vec.iter().filter(|&&b| b & 1 == 1).count() as u64;
    Ok((resident, pages as u64))
}

/// Asks the kernel to drop the file's clean cached pages (POSIX_FADV_DONTNEED over all of it).
/// Dirty pages are not dropped, which is why callers fsync first.
pub fn drop_cached_pages(file: &File) -> io::Result<()> {
    // SAFETY: integer arguments on an open descriptor.
    let ret = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    // posix_fadvise returns the error number instead of setting errno.
    if ret != 0 {
        return Err(io::Error::from_raw_os_error(ret));
    }
    Ok(())
}

/// Bytes an unprivileged user may still write in the file system holding `path` (f_bavail).
pub fn free_space(path: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))?;
    // SAFETY: statvfs is plain old data.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid, writable statvfs.
    cvt(unsafe { libc::statvfs(c.as_ptr(), &mut st) })?;
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(bytes).unwrap();
        f.sync_all().unwrap();
        (dir, File::open(&path).unwrap())
    }

    #[test]
    fn a_mapping_reads_the_files_bytes() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let (_dir, f) = file_of(&data);
        let map = Mapping::of_file(&f, data.len()).unwrap();
        assert_eq!(&map[..], &data[..]);
    }

    #[test]
    fn an_empty_mapping_is_refused_not_attempted() {
        let (_dir, f) = file_of(&[]);
        assert!(Mapping::of_file(&f, 0).is_err());
    }

    #[test]
    fn residency_counts_whole_pages_and_free_space_is_known() {
        let (_dir, f) = file_of(&vec![1u8; 3 * 4096 + 1]);
        let (resident, total) = resident_pages(&f, 3 * 4096 + 1).unwrap();
        assert_eq!(total, 4);
        assert!(resident <= total);
        assert!(free_space(Path::new("/")).unwrap() > 0);
    }
}
