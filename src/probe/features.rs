//! Which zero-copy and batching paths this kernel offers, each tried once on loopback:
//! MSG_ZEROCOPY (SO_ZEROCOPY, socket(7)), io_uring_setup(2), sendfile(2), splice(2),
//! TCP_ZEROCOPY_RECEIVE (tcp(7)); and the limits that shape them (optmem_max, pipe-max-size,
//! RLIMIT_MEMLOCK and RLIMIT_NOFILE from getrlimit(2)).
use crate::mechanism::MechanismKind;
use crate::sys::socket::{enable_zerocopy, get_int_option};
use crate::sys::support::{self, Limit};
use crate::transport::tcp::probe_pair;
use serde::Serialize;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::net::TcpStream;
use std::os::fd::AsFd;

/// Bytes each data-moving probe sends and checks.
const PROBE_BYTES: usize = 4096;

#[derive(Debug, Clone, Serialize)]
pub struct Features {
    pub msg_zerocopy: Feature,
    pub io_uring: Feature,
    pub sendfile: Feature,
    pub splice: Feature,
    pub tcp_zerocopy_receive: Feature,
    /// UDP GSO (`--gso`): UDP_SEGMENT accepted and a send cut into segments.
    pub udp_gso: Feature,
    /// MSG_ZEROCOPY on a UDP socket (zerocopy over udp): a send and its completion.
    pub udp_zerocopy: Feature,
    /// Each sending mechanism and receive path, by the probe a run makes before it starts.
    pub paths: Vec<PathFeature>,
}

/// One `--mechanism` or `--recv` choice and whether this kernel runs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathFeature {
    pub flag: &'static str,
    pub name: &'static str,
    #[serde(flatten)]
    pub feature: Feature,
}

/// The run-time probe of every mechanism of `mechanisms` (production: `MechanismKind::ALL`)
/// and of every receive path.
pub(crate) fn paths(mechanisms: &[MechanismKind]) -> Vec<PathFeature> {
    use crate::mechanism::{self, receive::path as recv_path};
    const TRIED: &str = "the probe a run makes before it starts";
    let mechanisms = mechanisms.iter().map(|&m| PathFeature {
        flag: "--mechanism",
        name: m.name(),
        feature: Feature::from_result(TRIED, mechanism::supported(m)),
    });
    let receive = recv_path::RecvPath::ALL.into_iter().map(|p| PathFeature {
        flag: "--recv",
        name: p.name(),
        feature: Feature::from_result(TRIED, recv_path::supported(p)),
    });
    mechanisms.chain(receive).collect()
}

/// Whether a feature worked when tried, and what was tried.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Feature {
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    pub tried: &'static str,
}

impl Feature {
    fn from_result(tried: &'static str, result: Result<(), String>) -> Feature {
        Feature {
            available: result.is_ok(),
            unavailable_reason: result.err(),
            tried,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct KernelLimits {
    pub io_uring_disabled: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_uring_disabled_unavailable_reason: Option<String>,
    pub optmem_max_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optmem_max_bytes_unavailable_reason: Option<String>,
    pub pipe_max_size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipe_max_size_bytes_unavailable_reason: Option<String>,
    pub rlimit_memlock_soft_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rlimit_memlock_soft_bytes_unavailable_reason: Option<String>,
    pub rlimit_memlock_hard_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rlimit_memlock_hard_bytes_unavailable_reason: Option<String>,
    pub rlimit_nofile_soft: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rlimit_nofile_soft_unavailable_reason: Option<String>,
    pub rlimit_nofile_hard: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rlimit_nofile_hard_unavailable_reason: Option<String>,
}

pub fn measure() -> Features {
    Features {
        msg_zerocopy: Feature::from_result(
            "setsockopt(SO_ZEROCOPY, 1) on a connected loopback TCP socket, read back",
            msg_zerocopy(),
        ),
        io_uring: Feature::from_result(
            "io_uring_setup(2) of a 4-entry ring, then close",
            io_uring(),
        ),
        sendfile: Feature::from_result(
            "sendfile(2) of 4 KiB from a file to a loopback TCP socket, bytes checked",
            sendfile(),
        ),
        splice: Feature::from_result(
            "splice(2) of 4 KiB file -> pipe -> loopback TCP socket, bytes checked",
            splice(),
        ),
        tcp_zerocopy_receive: Feature::from_result(
            "getsockopt(TCP_ZEROCOPY_RECEIVE) with the 64-byte struct, nothing mapped, on a \
             connected loopback TCP socket",
            tcp_zerocopy_receive(),
        ),
        udp_gso: Feature::from_result(
            "setsockopt(UDP_SEGMENT, 1000) on a loopback UDP socket, one send of 3500 B, \
             datagrams of 1000, 1000, 1000 and 500 B expected",
            udp_gso(),
        ),
        udp_zerocopy: Feature::from_result(
            "SO_ZEROCOPY on a loopback UDP socket, one MSG_ZEROCOPY send of 4 KiB, its \
             completion read from the error queue",
            udp_zerocopy(),
        ),
        paths: paths(MechanismKind::ALL),
    }
}

fn udp_gso() -> Result<(), String> {
    let want = [1000, 1000, 1000, 500];
    match crate::transport::framing::gso_send(1000, 3500) {
        Ok(got) if got == want => Ok(()),
        Ok(got) => Err(format!(
            "the kernel delivered datagrams of {got:?} B, not {want:?}"
        )),
        Err(e) => Err(format!("UDP_SEGMENT: {e}")),
    }
}

fn udp_zerocopy() -> Result<(), String> {
    use crate::sys::socket::{poll_one, sendmsg, MSG_ZEROCOPY};
    use crate::sys::zerocopy::{read_error_queue, ErrorQueueEntry};
    use std::net::{Ipv4Addr, UdpSocket};
    let bind = || UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(context("loopback UDP"));
    let (sender, receiver) = (bind()?, bind()?);
    let address = receiver.local_addr().map_err(context("getsockname"))?;
    sender.connect(address).map_err(context("connect"))?;
    enable_zerocopy(sender.as_fd()).map_err(context("setsockopt(SO_ZEROCOPY)"))?;
    let bytes = [7u8; PROBE_BYTES];
    sendmsg(sender.as_fd(), &[io::IoSlice::new(&bytes)], MSG_ZEROCOPY)
        .map_err(context("sendmsg(MSG_ZEROCOPY)"))?;
    // The completion is queued as the datagram is delivered; POLLERR says it is there.
    poll_one(sender.as_fd(), 0, 1000).map_err(context("poll for the completion"))?;
    match read_error_queue(sender.as_fd()).map_err(context("recvmsg(MSG_ERRQUEUE)"))? {
        Some(ErrorQueueEntry::Completion(range)) if range.first == 0 => Ok(()),
        Some(other) => Err(format!(
            "the error queue held {other:?}, not send 0's completion"
        )),
        None => Err("no completion within 1 s of the send".into()),
    }
}

fn context(what: &str) -> impl Fn(io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

fn msg_zerocopy() -> Result<(), String> {
    let (client, _server) = probe_pair().map_err(context("loopback TCP pair"))?;
    enable_zerocopy(client.as_fd()).map_err(context("setsockopt(SO_ZEROCOPY)"))?;
    match get_int_option(client.as_fd(), libc::SOL_SOCKET, libc::SO_ZEROCOPY) {
        Ok(1) => Ok(()),
        Ok(v) => Err(format!("SO_ZEROCOPY reads back as {v} after setting 1")),
        Err(e) => Err(format!("getsockopt(SO_ZEROCOPY): {e}")),
    }
}

fn io_uring() -> Result<(), String> {
    let ring = support::io_uring_setup(4);
    match ring {
        Ok(fd) => {
            drop(fd);
            Ok(())
        }
        Err(e) => {
            let disabled = read_number("/proc/sys/kernel/io_uring_disabled")
                .map_or(String::new(), |d| {
                    format!(" (kernel.io_uring_disabled={d})")
                });
            Err(format!("io_uring_setup: {e}{disabled}"))
        }
    }
}

/// A file of PROBE_BYTES known bytes, unlinked at once, its offset at 0.
fn pattern_file() -> io::Result<File> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = std::env::temp_dir().join(format!("bytepath-probe-{}-{nanos}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    file.write_all(&pattern())?;
    file.rewind()?;
    Ok(file)
}

fn pattern() -> Vec<u8> {
    (0..PROBE_BYTES).map(|i| (i % 251) as u8).collect()
}

/// Reads PROBE_BYTES from the receiving socket and checks them against the pattern.
fn check_arrival(mut server: TcpStream) -> Result<(), String> {
    let mut got = vec![0u8; PROBE_BYTES];
    server
        .set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .map_err(context("SO_RCVTIMEO"))?;
    server
        .read_exact(&mut got)
        .map_err(context("receiving what was sent"))?;
    if got == pattern() {
        Ok(())
    } else {
        Err("the bytes that arrived differ from the file".into())
    }
}

/// Calls `step` until it has moved PROBE_BYTES in total (short transfers are legal).
fn move_all(what: &str, mut step: impl FnMut(usize) -> io::Result<usize>) -> Result<(), String> {
    let mut moved = 0;
    while moved < PROBE_BYTES {
        match step(PROBE_BYTES - moved).map_err(context(what))? {
            0 => return Err(format!("{what}: moved nothing after {moved} bytes")),
            n => moved += n,
        }
    }
    Ok(())
}

fn sendfile() -> Result<(), String> {
    let file = pattern_file().map_err(context("temporary file"))?;
    let (client, server) = probe_pair().map_err(context("loopback TCP pair"))?;
    move_all("sendfile", |left| {
        support::sendfile(client.as_fd(), file.as_fd(), left)
    })?;
    check_arrival(server)
}

fn splice() -> Result<(), String> {
    let file = pattern_file().map_err(context("temporary file"))?;
    let (client, server) = probe_pair().map_err(context("loopback TCP pair"))?;
    let (pipe_out, pipe_in) = support::pipe().map_err(context("pipe2"))?;
    // A pipe holds 64 KiB by default: the whole probe fits, so fill it, then drain it.
    move_all("splice file -> pipe", |left| {
        support::splice(file.as_fd(), pipe_in.as_fd(), left)
    })?;
    move_all("splice pipe -> socket", |left| {
        support::splice(pipe_out.as_fd(), client.as_fd(), left)
    })?;
    check_arrival(server)
}

fn tcp_zerocopy_receive() -> Result<(), String> {
    let (_client, server) = probe_pair().map_err(context("loopback TCP pair"))?;
    match support::tcp_zerocopy_receive(server.as_fd()) {
        Ok(_) => Ok(()),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENOPROTOOPT) => {
                format!("getsockopt: {e}: this kernel has no TCP_ZEROCOPY_RECEIVE (Linux 4.18+)")
            }
            Some(libc::EINVAL) => {
                format!("getsockopt: {e}: the kernel refused the 64-byte tcp_zerocopy_receive")
            }
            _ => format!("getsockopt(TCP_ZEROCOPY_RECEIVE): {e}"),
        }),
    }
}

fn read_number(path: &str) -> Result<u64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    text.trim()
        .parse()
        .map_err(|e| format!("{path}: {:?}: {e}", text.trim()))
}

/// (value, reason): a limit's soft or hard value, or why there is none (RLIM_INFINITY or an
/// error).
fn limit_values(limit: &io::Result<Limit>) -> [(Option<u64>, Option<String>); 2] {
    let unlimited = || (None, Some("unlimited (RLIM_INFINITY)".to_string()));
    match limit {
        Ok(l) => [l.soft, l.hard].map(|v| v.map_or_else(unlimited, |n| (Some(n), None))),
        Err(e) => [(), ()].map(|_| (None, Some(format!("getrlimit: {e}")))),
    }
}

fn split<T>(r: Result<T, String>) -> (Option<T>, Option<String>) {
    match r {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    }
}

pub fn limits() -> KernelLimits {
    let (io_uring_disabled, io_uring_reason) =
        split(read_number("/proc/sys/kernel/io_uring_disabled"));
    let (optmem, optmem_reason) = split(read_number("/proc/sys/net/core/optmem_max"));
    let (pipe_max, pipe_reason) = split(read_number("/proc/sys/fs/pipe-max-size"));
    let [(memlock_soft, memlock_soft_reason), (memlock_hard, memlock_hard_reason)] =
        limit_values(&support::memlock_limit());
    let [(nofile_soft, nofile_soft_reason), (nofile_hard, nofile_hard_reason)] =
        limit_values(&support::open_file_limit());
    KernelLimits {
        io_uring_disabled,
        io_uring_disabled_unavailable_reason: io_uring_reason,
        optmem_max_bytes: optmem,
        optmem_max_bytes_unavailable_reason: optmem_reason,
        pipe_max_size_bytes: pipe_max,
        pipe_max_size_bytes_unavailable_reason: pipe_reason,
        rlimit_memlock_soft_bytes: memlock_soft,
        rlimit_memlock_soft_bytes_unavailable_reason: memlock_soft_reason,
        rlimit_memlock_hard_bytes: memlock_hard,
        rlimit_memlock_hard_bytes_unavailable_reason: memlock_hard_reason,
        rlimit_nofile_soft: nofile_soft,
        rlimit_nofile_soft_unavailable_reason: nofile_soft_reason,
        rlimit_nofile_hard: nofile_hard,
        rlimit_nofile_hard_unavailable_reason: nofile_hard_reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unlimited_limit_is_null_with_a_reason() {
        let values = limit_values(&Ok(Limit {
            soft: Some(8),
            hard: None,
        }));
        assert_eq!(values[0], (Some(8), None));
        assert_eq!(values[1].0, None);
        assert!(values[1].1.as_deref().unwrap().contains("unlimited"));
    }

    #[test]
    fn a_failed_feature_keeps_its_reason() {
        let f = Feature::from_result("tried", Err("ENOSYS".into()));
        assert!(!f.available);
        assert_eq!(f.unavailable_reason.as_deref(), Some("ENOSYS"));
    }

    #[test]
    fn sendfile_and_splice_deliver_the_file_over_loopback() {
        // Both exist on every kernel bytepath supports; a failure here is a probe bug.
        assert_eq!(sendfile(), Ok(()));
        assert_eq!(splice(), Ok(()));
    }

    #[test]
    fn a_missing_proc_file_gives_a_reason_naming_it() {
        let e = read_number("/proc/no/such/file").unwrap_err();
        assert!(e.starts_with("/proc/no/such/file"), "{e}");
    }
}
