//! Plain file-descriptor I/O for endpoints that are not sockets (pipes): read(2), write(2),
//! writev(2), pipe2(2), fcntl(2) for O_NONBLOCK and F_GETPIPE_SZ/F_SETPIPE_SZ, and dup2(2) to
//! retire one end of a pipe while its descriptor number stays valid.
use super::cvt;
use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

pub fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: buf is a valid writable slice of buf.len() bytes for the duration of the call.
    let n = cvt(unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) })?;
    Ok(n as usize)
}

pub fn write(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is a valid readable slice of buf.len() bytes for the duration of the call.
    let n = cvt(unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) })?;
    Ok(n as usize)
}

/// writev(2); `IoSlice` is ABI-compatible with `struct iovec` on Unix.
pub fn writev(fd: BorrowedFd<'_>, iov: &[IoSlice<'_>]) -> io::Result<usize> {
    let count = iov.len().min(libc::c_int::MAX as usize) as libc::c_int;
    // SAFETY: iov points at `count` valid iovecs that stay borrowed during the call.
    let n = cvt(unsafe { libc::writev(fd.as_raw_fd(), iov.as_ptr().cast(), count) })?;
    Ok(n as usize)
}

/// A pipe as (read end, write end), close-on-exec.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid array of two ints for pipe2 to fill.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

pub fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fcntl on a valid descriptor with integer arguments only.
    let flags = cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) })?;
    // SAFETY: as above.
    cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) })?;
    Ok(())
}

/// The pipe's buffer size in bytes (F_GETPIPE_SZ).
pub fn pipe_size(fd: BorrowedFd<'_>) -> io::Result<usize> {
    // SAFETY: fcntl on a valid descriptor with no pointer arguments.
    Ok(cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ) })? as usize)
}

/// Asks for a pipe buffer of `bytes` (F_SETPIPE_SZ); returns the size the kernel granted.
pub fn set_pipe_size(fd: BorrowedFd<'_>, bytes: usize) -> io::Result<usize> {
    let want = bytes.min(libc::c_int::MAX as usize) as libc::c_int;
    // SAFETY: fcntl on a valid descriptor with an integer argument.
    Ok(cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, want) })? as usize)
}

/// Replaces the open file behind `fd` with /dev/null: the pipe end it held is closed (its peer
/// sees EOF or EPIPE) while the number stays valid, so a thread still using it cannot reach a
/// descriptor the process has since reused.
pub fn retire(fd: BorrowedFd<'_>) -> io::Result<()> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    // SAFETY: both descriptors are open; dup2 atomically closes fd's file and re-points it.
    cvt(unsafe { libc::dup2(null.as_raw_fd(), fd.as_raw_fd()) })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn bytes_written_to_a_pipe_are_read_back_and_retiring_the_writer_is_eof() {
        let (r, w) = pipe().unwrap();
        let a = [1u8, 2, 3];
        let b = [4u8, 5];
        assert_eq!(
            writev(w.as_fd(), &[IoSlice::new(&a), IoSlice::new(&b)]).unwrap(),
            5
        );
        let mut buf = [0u8; 8];
        assert_eq!(read(r.as_fd(), &mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], &[1, 2, 3, 4, 5]);
        retire(w.as_fd()).unwrap();
        assert_eq!(
            read(r.as_fd(), &mut buf).unwrap(),
            0,
            "EOF once the write end is gone"
        );
    }

    #[test]
    fn pipe_size_can_be_raised() {
        let (r, _w) = pipe().unwrap();
        let granted = set_pipe_size(r.as_fd(), 256 << 10).unwrap();
        assert!(granted >= 256 << 10);
        assert_eq!(pipe_size(r.as_fd()).unwrap(), granted);
    }
}
