//! A TCP connection from a chosen local IPv4 address: bind(2) before connect(2), which std
//! does not offer (it binds only on connect). Tests stand for other hosts with it on loopback
//! (127.0.0.2, 127.0.0.3 …: all of 127.0.0.0/8 is local), where a server tells sources apart.
use super::cvt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::{AsRawFd, BorrowedFd};

/// A TCP connection to `to` (IPv4) from the local address `from` (any free port).
pub fn connect_from(from: Ipv4Addr, to: SocketAddr) -> io::Result<TcpStream> {
    super::socket::connect_tcp(to, |fd| bind(fd, SocketAddrV4::new(from, 0)))
}

fn bind(fd: BorrowedFd<'_>, local: SocketAddrV4) -> io::Result<()> {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: local.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*local.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sin is a valid sockaddr_in whose size is passed; the kernel only reads it.
    cvt(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn the_connection_comes_from_the_chosen_loopback_address() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let to = listener.local_addr().unwrap();
        let from: Ipv4Addr = "127.0.0.2".parse().unwrap();
        let stream = connect_from(from, to).unwrap();
        assert_eq!(stream.local_addr().unwrap().ip(), from);
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip(), from);
    }
}
