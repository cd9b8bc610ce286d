//! TCP_INFO (tcp(7)): the kernel's own count of a connection's payload bytes, acknowledged by
//! the peer (sent) and received (Linux 4.1 and 4.6), read with one getsockopt(2), for a
//! watcher that checks a run's volume between polls without touching its per-message path.
use super::cvt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Payload bytes the peer acknowledged and bytes received on a TCP socket; `None` on a kernel
/// whose tcp_info is too short to hold them.
pub fn tcp_bytes(fd: BorrowedFd<'_>) -> io::Result<Option<(u64, u64)>> {
    // SAFETY: tcp_info is plain old data; zeroed is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: info and len are valid and writable; the kernel writes at most len bytes.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    })?;
    let needed = std::mem::offset_of!(libc::tcp_info, tcpi_bytes_received) + 8;
    Ok((len as usize >= needed).then_some((info.tcpi_bytes_acked, info.tcpi_bytes_received)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;

    #[test]
    fn the_kernel_counts_what_a_connection_moved() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        client.write_all(&[7u8; 5000]).unwrap();
        let mut got = [0u8; 5000];
        server.read_exact(&mut got).unwrap();
        server.write_all(&[1u8; 300]).unwrap();
        client.read_exact(&mut [0u8; 300]).unwrap();
        let Some((_, received)) = tcp_bytes(server.as_fd()).unwrap() else {
            crate::skip_test(
                None,
                "this kernel's tcp_info has no byte counts (before Linux 4.6)",
            );
            return;
        };
        assert_eq!(received, 5000);
        // The client has read the 300 bytes; their acknowledgement may come a moment later.
        let since = std::time::Instant::now();
        let acked = loop {
            let (acked, _) = tcp_bytes(server.as_fd()).unwrap().unwrap();
            if acked == 300 || since.elapsed() > std::time::Duration::from_secs(2) {
                break acked;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(acked, 300);
    }
}
