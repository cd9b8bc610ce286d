//! TCP_INFO (tcp(7)): the kernel's own account of one connection, read with one getsockopt(2):
//! the payload bytes acknowledged by the peer (sent) and received (Linux 4.1 and 4.6), for a
//! watcher that checks a run's volume between polls, and the full [`TcpFlowInfo`] (retransmits,
//! window, round-trip time, rates, and how long the flow was busy or limited by the receiver's
//! window or its send buffer, Linux 4.10+) a run samples once per flow per slice, never on the
//! per-message path.
use super::cvt;
use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::{AsRawFd, BorrowedFd};

/// One reading of a connection's tcp_info. Each field is `None` when the length the kernel
/// returned does not reach it (an older kernel's shorter struct), never 0. A `bytepath server`
/// sends its side's readings back in this form.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TcpFlowInfo {
    /// Segments retransmitted over the connection's life (tcpi_total_retrans).
    pub total_retrans: Option<u32>,
    /// Segments the sender currently counts as lost (tcpi_lost).
    pub lost: Option<u32>,
    /// How far the kernel believes segments can be reordered (tcpi_reordering).
    pub reordering: Option<u32>,
    /// Congestion window, in segments (tcpi_snd_cwnd).
    pub snd_cwnd: Option<u32>,
    /// Slow-start threshold, in segments (tcpi_snd_ssthresh; a huge value while unset).
    pub snd_ssthresh: Option<u32>,
    /// Smoothed round-trip time and its variation, microseconds (tcpi_rtt, tcpi_rttvar).
    pub rtt_us: Option<u32>,
    pub rttvar_us: Option<u32>,
    /// The rate the last acknowledged data was delivered at, bytes per second (Linux 4.9).
    pub delivery_rate: Option<u64>,
    /// The pacing rate the kernel would send at, bytes per second (Linux 4.0).
    pub pacing_rate: Option<u64>,
    /// Microseconds the connection had data in flight, and of those the ones it was limited
    /// by the receiver's window or by its own send buffer (Linux 4.10).
    pub busy_time_us: Option<u64>,
    pub rwnd_limited_us: Option<u64>,
    pub sndbuf_limited_us: Option<u64>,
    /// Payload bytes the peer acknowledged, and payload bytes received (Linux 4.1, 4.6).
    pub bytes_acked: Option<u64>,
    pub bytes_received: Option<u64>,
}

/// The struct as the kernel filled it, and how many bytes of it it wrote.
fn read_raw(fd: BorrowedFd<'_>) -> io::Result<(libc::tcp_info, usize)> {
    // SAFETY: tcp_info is plain old data; zeroed is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
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
    Ok((info, len as usize))
}

/// Payload bytes the peer acknowledged and bytes received on a TCP socket; `None` on a kernel
/// whose tcp_info is too short to hold them.
pub fn tcp_bytes(fd: BorrowedFd<'_>) -> io::Result<Option<(u64, u64)>> {
    let info = tcp_flow_info(fd)?;
    Ok(info.bytes_acked.zip(info.bytes_received))
}

/// Everything [`TcpFlowInfo`] holds, from one getsockopt(2).
pub fn tcp_flow_info(fd: BorrowedFd<'_>) -> io::Result<TcpFlowInfo> {
    let (info, len) = read_raw(fd)?;
    Ok(TcpFlowInfo::from_raw(&info, len))
}

/// `$field` of `$info` when the kernel's `$len` bytes cover it.
macro_rules! within {
    ($info:expr, $len:expr, $field:ident) => {{
        let end = offset_of!(libc::tcp_info, $field) + size_of_val(&$info.$field);
        ($len >= end).then_some($info.$field)
    }};
}

impl TcpFlowInfo {
    /// The fields of `info` that the `len` bytes the kernel wrote reach.
    pub fn from_raw(info: &libc::tcp_info, len: usize) -> TcpFlowInfo {
        TcpFlowInfo {
            total_retrans: within!(info, len, tcpi_total_retrans),
            lost: within!(info, len, tcpi_lost),
            reordering: within!(info, len, tcpi_reordering),
            snd_cwnd: within!(info, len, tcpi_snd_cwnd),
            snd_ssthresh: within!(info, len, tcpi_snd_ssthresh),
            rtt_us: within!(info, len, tcpi_rtt),
            rttvar_us: within!(info, len, tcpi_rttvar),
            delivery_rate: within!(info, len, tcpi_delivery_rate),
            pacing_rate: within!(info, len, tcpi_pacing_rate),
            busy_time_us: within!(info, len, tcpi_busy_time),
            rwnd_limited_us: within!(info, len, tcpi_rwnd_limited),
            sndbuf_limited_us: within!(info, len, tcpi_sndbuf_limited),
            bytes_acked: within!(info, len, tcpi_bytes_acked),
            bytes_received: within!(info, len, tcpi_bytes_received),
        }
    }
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

    #[test]
    fn a_field_is_there_only_when_the_kernels_length_reaches_it() {
        // SAFETY: tcp_info is plain old data; zeroed is a valid value.
        let mut raw: libc::tcp_info = unsafe { std::mem::zeroed() };
        raw.tcpi_total_retrans = 3;
        raw.tcpi_busy_time = 900;
        raw.tcpi_rwnd_limited = 400;
        let full = TcpFlowInfo::from_raw(&raw, size_of::<libc::tcp_info>());
        assert_eq!(full.total_retrans, Some(3));
        assert_eq!(full.rwnd_limited_us, Some(400));
        // A Linux 4.9 struct ends after tcpi_delivery_rate: no busy or limited times.
        let v4_9 = offset_of!(libc::tcp_info, tcpi_busy_time);
        let old = TcpFlowInfo::from_raw(&raw, v4_9);
        assert_eq!(old.total_retrans, Some(3));
        assert!(old.delivery_rate.is_some());
        assert_eq!(old.busy_time_us, None);
        assert_eq!(old.rwnd_limited_us, None);
        // One byte short of the end of busy_time: still absent, not half-read.
        let short = TcpFlowInfo::from_raw(&raw, v4_9 + 7);
        assert_eq!(short.busy_time_us, None);
        assert_eq!(
            TcpFlowInfo::from_raw(&raw, v4_9 + 8).busy_time_us,
            Some(900)
        );
        assert_eq!(TcpFlowInfo::from_raw(&raw, 0), TcpFlowInfo::default());
    }

    #[test]
    fn a_sender_that_moved_data_has_a_window_a_round_trip_and_busy_time() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let reader = std::thread::spawn(move || {
            std::io::copy(&mut server, &mut std::io::sink()).unwrap();
        });
        // The kernel counts busy time in jiffies (up to 10 ms each): keep it busy for longer.
        let since = std::time::Instant::now();
        while since.elapsed() < std::time::Duration::from_millis(100) {
            client.write_all(&[5u8; 1 << 16]).unwrap();
        }
        let info = tcp_flow_info(client.as_fd()).unwrap();
        client.shutdown(std::net::Shutdown::Write).unwrap();
        reader.join().unwrap();
        assert!(info.snd_cwnd.unwrap() > 0, "{info:?}");
        assert!(info.rtt_us.unwrap() > 0, "{info:?}");
        assert!(info.bytes_acked.unwrap() > 0, "{info:?}");
        match info.busy_time_us {
            Some(busy) => assert!(busy > 0, "{info:?}"),
            None => crate::skip_test(
                None,
                "this kernel's tcp_info has no busy time (before 4.10)",
            ),
        }
    }
}
