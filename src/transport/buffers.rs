//! `--rcvbuf` / `--sndbuf`: the socket buffers a tcp flow asks the kernel for (SO_RCVBUF,
//! SO_SNDBUF). They are set on the listener before any flow's SYN arrives and on each
//! connecting socket before connect(2), so the window the handshake announces (its scale
//! among it) follows the buffer. Linux doubles what is asked (tcp(7): the other half is its
//! bookkeeping) and caps it at net.core.rmem_max / wmem_max, so the record keeps both what was
//! asked and what getsockopt(2) reads back. Setting either turns the kernel's autotuning of
//! that buffer off for the socket.
use crate::sys::socket;
use std::io;
use std::os::fd::BorrowedFd;

/// The buffers asked for, in bytes; `None` leaves the kernel's autotuning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SocketBuffers {
    pub rcvbuf: Option<usize>,
    pub sndbuf: Option<usize>,
}

impl SocketBuffers {
    /// The smallest and largest buffer a flow may ask for, in bytes (the kernel raises a
    /// smaller one to its floor, so the request would not mean what it says).
    pub const BOUNDS: (usize, usize) = (1 << 10, 1 << 30);

    pub fn is_set(&self) -> bool {
        self.rcvbuf.is_some() || self.sndbuf.is_some()
    }

    /// Sets what was asked on `fd` (a listener, or a socket not yet connected).
    pub fn apply(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        for (value, name, flag) in [
            (self.rcvbuf, libc::SO_RCVBUF, "SO_RCVBUF"),
            (self.sndbuf, libc::SO_SNDBUF, "SO_SNDBUF"),
        ] {
            if let Some(bytes) = value {
                let bytes = i32::try_from(bytes).unwrap_or(i32::MAX);
                socket::set_int_option(fd, libc::SOL_SOCKET, name, bytes).map_err(|e| {
                    io::Error::new(e.kind(), format!("setting {flag} {bytes}: {e}"))
                })?;
            }
        }
        Ok(())
    }
}

/// What a socket's buffers are now, as getsockopt(2) reads them back: (SO_RCVBUF, SO_SNDBUF).
pub fn granted(fd: BorrowedFd<'_>) -> io::Result<(usize, usize)> {
    let read = |name| socket::get_int_option(fd, libc::SOL_SOCKET, name).map(|v| v.max(0) as usize);
    Ok((read(libc::SO_RCVBUF)?, read(libc::SO_SNDBUF)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn the_kernel_doubles_what_is_asked_and_a_listener_passes_it_on() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let asked = SocketBuffers {
            rcvbuf: Some(16 << 10),
            sndbuf: Some(32 << 10),
        };
        asked.apply(listener.as_fd()).unwrap();
        let addr = listener.local_addr().unwrap();
        let client = socket::connect_tcp(addr, |fd| asked.apply(fd)).unwrap();
        let (server, _) = listener.accept().unwrap();
        for end in [client.as_fd(), server.as_fd()] {
            assert_eq!(granted(end).unwrap(), (32 << 10, 64 << 10));
        }
        assert!(!SocketBuffers::default().is_set());
    }
}
