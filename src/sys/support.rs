//! What this kernel supports, learnt by one-shot system calls (for `bytepath probe`): syscall(2)
//! (raw getpid/getuid, bypassing any libc cache), io_uring_setup(2), sendfile(2), splice(2),
//! pipe2(2), getsockopt(2) with TCP_ZEROCOPY_RECEIVE (tcp(7)) and getrlimit(2).
use super::cvt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// syscall(SYS_getpid): always enters the kernel (glibc has not cached getpid since 2.25, and
/// this bypasses glibc entirely).
#[inline]
pub fn raw_getpid() -> i64 {
    // SAFETY: getpid takes no arguments, touches no memory and cannot fail.
    unsafe { libc::syscall(libc::SYS_getpid) }
}

/// syscall(SYS_getuid): always enters the kernel.
#[inline]
pub fn raw_getuid() -> i64 {
    // SAFETY: getuid takes no arguments, touches no memory and cannot fail.
    unsafe { libc::syscall(libc::SYS_getuid) }
}

/// `struct io_uring_params` (120 bytes); all zero asks for a plain ring with no flags.
#[repr(C)]
struct IoUringParams([u64; 15]);

/// io_uring_setup(2) with a ring of `entries`; the ring goes away when the descriptor drops
/// (nothing is mapped).
pub fn io_uring_setup(entries: u32) -> io::Result<OwnedFd> {
    let mut params = IoUringParams([0; 15]);
    // SAFETY: params is a valid, writable io_uring_params of the size the kernel expects; the
    // kernel writes the ring geometry into it and keeps no reference after returning.
    let fd = cvt(unsafe {
        libc::syscall(
            libc::SYS_io_uring_setup,
            entries,
            &mut params as *mut IoUringParams,
        )
    })?;
    // SAFETY: on success the kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// pipe2(2) with O_CLOEXEC: (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid, writable array of two ints.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: pipe2 succeeded, so both are new descriptors that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// sendfile(2) of up to `count` bytes from `input`'s file offset to `output`.
pub fn sendfile(output: BorrowedFd<'_>, input: BorrowedFd<'_>, count: usize) -> io::Result<usize> {
    // SAFETY: both descriptors are borrowed open files; a null offset uses (and advances) the
    // input's own file offset, so no memory of ours is touched.
    let n = cvt(unsafe {
        libc::sendfile(
            output.as_raw_fd(),
            input.as_raw_fd(),
            std::ptr::null_mut(),
            count,
        )
    })?;
    Ok(n as usize)
}

/// splice(2) of up to `len` bytes between two descriptors, one of which must be a pipe.
pub fn splice(input: BorrowedFd<'_>, output: BorrowedFd<'_>, len: usize) -> io::Result<usize> {
    // SAFETY: both descriptors are borrowed open files; null offsets use the files' own
    // offsets, so no memory of ours is touched.
    let n = cvt(unsafe {
        libc::splice(
            input.as_raw_fd(),
            std::ptr::null_mut(),
            output.as_raw_fd(),
            std::ptr::null_mut(),
            len,
            0,
        )
    })?;
    Ok(n as usize)
}

/// TCP_ZEROCOPY_RECEIVE lives with the receive path that uses it.
pub use super::zc_receive::tcp_zerocopy_receive;

/// A resource limit's soft and hard values; `None` is RLIM_INFINITY (unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// getrlimit(RLIMIT_MEMLOCK), in bytes.
pub fn memlock_limit() -> io::Result<Limit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: lim is a valid, writable rlimit.
    cvt(unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) })?;
    Ok(limit(lim))
}

/// getrlimit(RLIMIT_NOFILE), in descriptors.
pub fn open_file_limit() -> io::Result<Limit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: lim is a valid, writable rlimit.
    cvt(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) })?;
    Ok(limit(lim))
}

fn limit(lim: libc::rlimit) -> Limit {
    // rlim_t is u32 on 32-bit targets.
    #[allow(clippy::unnecessary_cast)]
    let value = |v: libc::rlim_t| (v != libc::RLIM_INFINITY).then_some(v as u64);
    Limit {
        soft: value(lim.rlim_cur),
        hard: value(lim.rlim_max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn raw_getpid_matches_std() {
        assert_eq!(raw_getpid(), i64::from(std::process::id()));
    }

    #[test]
    fn a_pipe_carries_bytes_through_splice_to_another_pipe() {
        use std::io::{Read, Write};
        let (r1, w1) = pipe().unwrap();
        let (r2, w2) = pipe().unwrap();
        std::fs::File::from(w1).write_all(b"bytes").unwrap();
        assert_eq!(splice(r1.as_fd(), w2.as_fd(), 5).unwrap(), 5);
        drop(w2);
        let mut got = String::new();
        std::fs::File::from(r2).read_to_string(&mut got).unwrap();
        assert_eq!(got, "bytes");
    }

    #[test]
    fn infinite_limits_read_as_none() {
        let l = limit(libc::rlimit {
            rlim_cur: 64,
            rlim_max: libc::RLIM_INFINITY,
        });
        assert_eq!(
            l,
            Limit {
                soft: Some(64),
                hard: None
            }
        );
        assert!(open_file_limit().unwrap().soft.is_some());
    }
}
