//! How the receiving side takes bytes from the kernel (`--recv`): recv(2) into a buffer, an
//! io_uring receive into provided buffers, TCP_ZEROCOPY_RECEIVE (the receive queue mapped into
//! this process), or recv(MSG_TRUNC), which discards the bytes and so only bounds the cost.
//! The receiving itself is `receive::Receiver`'s, with `uring` and `zc`; this file
//! names the paths, probes them once per process and says what each receiver's path did.
use crate::sys::socket;
use crate::sys::zc_receive::ZcRegion;
use crate::transport::{Endpoint, Transport};
use std::io;
use std::os::fd::AsFd;
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecvPath {
    #[default]
    Recv,
    UringRecv,
    ZcRecv,
    Trunc,
}

impl RecvPath {
    pub const ALL: [RecvPath; 4] = [
        RecvPath::Recv,
        RecvPath::UringRecv,
        RecvPath::ZcRecv,
        RecvPath::Trunc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RecvPath::Recv => "recv",
            RecvPath::UringRecv => "uring-recv",
            RecvPath::ZcRecv => "zc-recv",
            RecvPath::Trunc => "trunc",
        }
    }

    /// Whether the received bytes reach this process (trunc discards them in the kernel).
    pub fn delivers_data(self) -> bool {
        self != RecvPath::Trunc
    }

    /// The transports this path can receive from; `None`: any.
    pub fn transports(self) -> Option<&'static [Transport]> {
        match self {
            RecvPath::Recv => None,
            RecvPath::UringRecv => Some(&[Transport::Tcp, Transport::Unix]),
            RecvPath::ZcRecv | RecvPath::Trunc => Some(&[Transport::Tcp]),
        }
    }
}

/// Whether this kernel offers what `path` needs, tried once per process on loopback TCP;
/// `Err` is the reason, in one line.
pub fn supported(path: RecvPath) -> Result<(), String> {
    static PROBED: [OnceLock<Result<(), String>>; 4] = [const { OnceLock::new() }; 4];
    let index = RecvPath::ALL
        .iter()
        .position(|p| *p == path)
        .expect("a known path");
    PROBED[index]
        .get_or_init(|| match path {
            RecvPath::Recv => Ok(()),
            RecvPath::UringRecv => crate::sys::uring_recv::supported().map(drop),
            RecvPath::ZcRecv => probe_zc_recv(),
            RecvPath::Trunc => probe_trunc(),
        })
        .clone()
}

/// Whether this kernel maps a TCP socket and answers TCP_ZEROCOPY_RECEIVE on it. Kept here with
/// the other paths' probes (not in zc.rs), so that the vocabulary every path imports imports
/// none of them.
fn probe_zc_recv() -> Result<(), String> {
    let (_client, server) =
        crate::transport::tcp::probe_pair().map_err(|e| format!("loopback TCP pair: {e}"))?;
    match ZcRegion::new(server.as_fd(), 1) {
        Ok(_) => Ok(()),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENOPROTOOPT) => {
                format!("getsockopt: {e}: this kernel has no TCP_ZEROCOPY_RECEIVE (Linux 4.18+)")
            }
            Some(libc::ENODEV) => format!("mmap of a TCP socket: {e}: not supported here"),
            _ => format!("TCP_ZEROCOPY_RECEIVE on loopback: {e}"),
        }),
    }
}

/// recv(MSG_TRUNC) on TCP must count the bytes and leave the buffer untouched.
fn probe_trunc() -> Result<(), String> {
    use std::io::Write;
    let (mut client, server) =
        crate::transport::tcp::probe_pair().map_err(|e| format!("loopback TCP pair: {e}"))?;
    client.write_all(&[0x55; 8]).map_err(|e| e.to_string())?;
    let ep = Endpoint::socket(server);
    let mut buf = [0xAAu8; 8];
    match recv_truncated(&ep, &mut buf, false) {
        Ok(8) if buf == [0xAA; 8] => Ok(()),
        Ok(n) => Err(format!(
            "recv(MSG_TRUNC) on TCP returned {n} B and {} the buffer: the kernel does not discard",
            if buf == [0xAA; 8] { "left" } else { "wrote" }
        )),
        Err(e) => Err(format!("recv(MSG_TRUNC) on TCP: {e}")),
    }
}

/// recv(2) with MSG_TRUNC: TCP discards up to `buf.len()` bytes in the kernel and says how
/// many; nothing is written to `buf`. With `spin`, busy-polls with MSG_DONTWAIT.
pub(crate) fn recv_truncated(ep: &Endpoint, buf: &mut [u8], spin: bool) -> io::Result<usize> {
    let fd = ep
        .socket_fd()
        .ok_or_else(|| not_a_socket(RecvPath::Trunc))?;
    let flags = libc::MSG_TRUNC | if spin { socket::MSG_DONTWAIT } else { 0 };
    loop {
        match socket::recv(fd, buf, flags) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if spin && e.kind() == io::ErrorKind::WouldBlock => std::hint::spin_loop(),
            Err(e) => return Err(e),
        }
    }
}

pub(crate) fn not_a_socket(path: RecvPath) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("--recv {} needs a socket", path.name()),
    )
}

/// What one receiver's path did over the whole run (all phases). It crosses the process pipe
/// and the remote protocol as JSON inside the thread's sample.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ReceivePathStats {
    pub path: RecvPath,
    /// Receive operations: recv(2) calls (recv, trunc), getsockopt(TCP_ZEROCOPY_RECEIVE)
    /// calls (zc-recv; its recv(2) calls are `copy_calls`), completions with bytes
    /// (uring-recv).
    pub calls: u64,
    /// Bytes that reached this process (every byte counted, except with trunc: none).
    pub delivered_bytes: u64,
    /// zc-recv: bytes the kernel mapped into this process (no copy).
    pub mapped_bytes: u64,
    /// zc-recv: bytes copied instead (by the kernel into the copy buffer, or by recv(2)).
    pub copied_bytes: u64,
    /// zc-recv: recv(2) calls for bytes there was no page to map.
    pub copy_calls: u64,
    /// trunc: bytes counted and discarded in the kernel, never delivered.
    pub discarded_bytes: u64,
    /// uring-recv: multishot receive (false: single-shot with buffer select, the kernel
    /// refused multishot).
    pub multishot: Option<bool>,
    /// uring-recv: receives armed again after one ended.
    pub rearms: u64,
    /// uring-recv: receives that ended because the buffer ring was empty.
    pub enobufs: u64,
    /// uring-recv: EOFs the kernel did not post (a multishot receive on AF_UNIX that took the
    /// last bytes after the peer closed waits on; found by asking the socket after 100 ms
    /// without a completion).
    pub unreported_eofs: u64,
    /// uring-recv: provided buffers and the bytes of each.
    pub buffers: Option<u32>,
    pub buffer_bytes: Option<u32>,
    /// zc-recv: whether the kernel copied unmappable bytes into the copy buffer (Linux 5.11).
    pub copybuf: Option<bool>,
    /// zc-recv: payload of a full segment on the flow (the MSS in use).
    pub segment_bytes: Option<u32>,
    /// zc-recv with nothing mapped: why.
    pub reason: Option<String>,
}

impl ReceivePathStats {
    pub fn new(path: RecvPath) -> Self {
        ReceivePathStats {
            path,
            ..Default::default()
        }
    }

    /// Sums another receiver's figures into these (same path).
    pub fn add(&mut self, other: &ReceivePathStats) {
        self.calls += other.calls;
        self.delivered_bytes += other.delivered_bytes;
        self.mapped_bytes += other.mapped_bytes;
        self.copied_bytes += other.copied_bytes;
        self.copy_calls += other.copy_calls;
        self.discarded_bytes += other.discarded_bytes;
        self.rearms += other.rearms;
        self.enobufs += other.enobufs;
        self.unreported_eofs += other.unreported_eofs;
        let both = |a: Option<bool>, b: Option<bool>| match (a, b) {
            (Some(a), Some(b)) => Some(a && b),
            (a, b) => a.or(b),
        };
        self.multishot = both(self.multishot, other.multishot);
        self.copybuf = both(self.copybuf, other.copybuf);
        self.buffers = self.buffers.or(other.buffers);
        self.buffer_bytes = self.buffer_bytes.or(other.buffer_bytes);
        self.segment_bytes = self.segment_bytes.or(other.segment_bytes);
        if self.reason.is_none() {
            self.reason.clone_from(&other.reason);
        }
    }

    /// zc-recv: the share of received bytes that were mapped, not copied.
    pub fn mapped_percent(&self) -> Option<f64> {
        let total = self.mapped_bytes + self.copied_bytes;
        (total > 0).then(|| 100.0 * self.mapped_bytes as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused() {
        for p in RecvPath::ALL {
            assert_eq!(p.name().parse::<RecvPath>().unwrap(), p);
        }
        let err = "mmap".parse::<RecvPath>().unwrap_err().0;
        assert!(err.contains("\"mmap\"") && err.contains("zc-recv"));
    }

    #[test]
    fn every_path_probes_ok_on_this_kernel() {
        // Linux 6.18 here: buffer rings, multishot receive, TCP_ZEROCOPY_RECEIVE, MSG_TRUNC.
        for p in RecvPath::ALL {
            assert_eq!(supported(p), Ok(()), "{}", p.name());
        }
    }

    #[test]
    fn trunc_counts_the_bytes_and_writes_nothing() {
        use std::io::Write;
        let (mut client, server) = crate::transport::tcp::probe_pair().unwrap();
        client.write_all(&[1u8; 100]).unwrap();
        drop(client);
        let ep = Endpoint::socket(server);
        let mut buf = [0u8; 64];
        let mut total = 0;
        loop {
            let n = recv_truncated(&ep, &mut buf, false).unwrap();
            if n == 0 {
                break;
            }
            total += n;
        }
        assert_eq!(total, 100);
        assert_eq!(buf, [0u8; 64], "MSG_TRUNC discards in the kernel");
    }

    #[test]
    fn stats_sum_and_give_the_mapped_share() {
        let mut a = ReceivePathStats {
            mapped_bytes: 3,
            copied_bytes: 1,
            multishot: Some(true),
            ..ReceivePathStats::new(RecvPath::ZcRecv)
        };
        let b = ReceivePathStats {
            mapped_bytes: 1,
            copied_bytes: 3,
            multishot: Some(false),
            reason: Some("why".into()),
            ..ReceivePathStats::new(RecvPath::ZcRecv)
        };
        a.add(&b);
        assert_eq!(a.mapped_percent(), Some(50.0));
        assert_eq!(a.multishot, Some(false), "one single-shot receiver shows");
        assert_eq!(a.reason.as_deref(), Some("why"));
        let json = serde_json::to_string(&a).unwrap();
        let back: ReceivePathStats = serde_json::from_str(&json).unwrap();
        assert_eq!(back, a);
        let old: ReceivePathStats = serde_json::from_str("{}").unwrap();
        assert_eq!(old.path, RecvPath::Recv, "missing fields default");
    }
}
