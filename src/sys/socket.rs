//! Socket calls with the flags std does not expose: send(2), sendmsg(2), recv(2),
//! setsockopt(2), poll(2), shutdown(2), and connect(2) of a TCP socket set up first.
use super::cvt;
use std::io::{self, IoSlice};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

pub use libc::{MSG_DONTWAIT, MSG_ZEROCOPY};

/// send(2) of one contiguous buffer.
pub fn send(fd: BorrowedFd<'_>, buf: &[u8], flags: i32) -> io::Result<usize> {
    // SAFETY: buf is a valid readable slice of buf.len() bytes for the duration of the call.
    let n = cvt(unsafe {
        libc::send(
            fd.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            flags | libc::MSG_NOSIGNAL,
        )
    })?;
    Ok(n as usize)
}

/// sendmsg(2) of a gather list. `IoSlice` is ABI-compatible with `struct iovec` on Unix.
pub fn sendmsg(fd: BorrowedFd<'_>, iov: &[IoSlice<'_>], flags: i32) -> io::Result<usize> {
    // SAFETY: msghdr is plain old data; a zeroed one has no name and no control data.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = iov.len() as _;
    // SAFETY: msg points at iov.len() valid iovecs (IoSlice guarantees the layout) that stay
    // borrowed for the duration of the call; the kernel only reads them.
    let n = cvt(unsafe { libc::sendmsg(fd.as_raw_fd(), &msg, flags | libc::MSG_NOSIGNAL) })?;
    Ok(n as usize)
}

/// recv(2) into `buf`.
pub fn recv(fd: BorrowedFd<'_>, buf: &mut [u8], flags: i32) -> io::Result<usize> {
    // SAFETY: buf is a valid writable slice of buf.len() bytes for the duration of the call.
    let n = cvt(unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), flags) })?;
    Ok(n as usize)
}

pub fn set_int_option(fd: BorrowedFd<'_>, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: value is a valid i32 whose size is passed; the kernel only reads it.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// SO_LINGER {on, 0 s}: close(2) then resets the connection instead of the FIN handshake, so
/// the closing side keeps no TIME_WAIT (socket(7)).
pub fn set_linger_zero(fd: BorrowedFd<'_>) -> io::Result<()> {
    let value = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: value is a valid struct linger whose size is passed; the kernel only reads it.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&value as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

pub fn get_int_option(fd: BorrowedFd<'_>, level: i32, name: i32) -> io::Result<i32> {
    let mut value: i32 = 0;
    let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
    // SAFETY: value and len are valid and writable; len holds value's size.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut value as *mut i32).cast(),
            &mut len,
        )
    })?;
    Ok(value)
}

/// Enables MSG_ZEROCOPY on the socket (SO_ZEROCOPY); without it the flag is silently ignored.
pub fn enable_zerocopy(fd: BorrowedFd<'_>) -> io::Result<()> {
    set_int_option(fd, libc::SOL_SOCKET, libc::SO_ZEROCOPY, 1)
}

/// A TCP socket(2) connected to `addr` (IPv4) after `setup` ran on it: options that must be
/// in place before the handshake (TCP_MAXSEG is announced in the SYN).
pub fn connect_tcp(
    addr: SocketAddr,
    setup: impl FnOnce(BorrowedFd<'_>) -> io::Result<()>,
) -> io::Result<TcpStream> {
    let SocketAddr::V4(v4) = addr else {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "connect_tcp: IPv4 only",
        ));
    };
    // SAFETY: socket(2) touches no memory of ours.
    let fd = cvt(unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            libc::IPPROTO_TCP,
        )
    })?;
    // SAFETY: socket succeeded: a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    setup(fd.as_fd())?;
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*v4.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sin is a valid sockaddr_in whose size is passed; the kernel only reads it.
    cvt(unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })?;
    Ok(TcpStream::from(fd))
}

/// Readiness bits for `poll`.
pub const POLLIN: i16 = libc::POLLIN;
pub const POLLOUT: i16 = libc::POLLOUT;

/// poll(2) on one descriptor; returns the revents (0 on timeout). EINTR reads as a timeout.
pub fn poll_one(fd: BorrowedFd<'_>, events: i16, timeout_ms: i32) -> io::Result<i16> {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    };
    // SAFETY: pfd is one valid, writable pollfd.
    match cvt(unsafe { libc::poll(&mut pfd, 1, timeout_ms) }) {
        Ok(_) => Ok(pfd.revents),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(e) => Err(e),
    }
}

/// shutdown(2): SHUT_WR sends FIN so the peer's recv returns 0; SHUT_RDWR also wakes a
/// thread blocked on this socket (used by the watchdog).
pub fn shutdown(fd: BorrowedFd<'_>, how: i32) -> io::Result<()> {
    // SAFETY: shutdown has no memory-safety preconditions.
    cvt(unsafe { libc::shutdown(fd.as_raw_fd(), how) })?;
    Ok(())
}

pub use libc::{SHUT_RDWR, SHUT_WR};

/// Attaches a classic BPF socket filter (SO_ATTACH_FILTER): tests use one to drop chosen
/// datagrams on purpose, inside the kernel, so loss accounting can be checked exactly.
#[cfg(test)]
pub fn attach_filter(fd: BorrowedFd<'_>, program: &[libc::sock_filter]) -> io::Result<()> {
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: prog points at program.len() valid instructions that outlive the call; the
    // kernel copies the program before returning.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ATTACH_FILTER,
            (&prog as *const libc::sock_fprog).cast(),
            std::mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
        )
    })?;
    Ok(())
}
