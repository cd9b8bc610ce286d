//! Datagram flows: UDP over loopback (two connected sockets) and AF_UNIX datagram socket pairs.
//! Every datagram starts with a 4-byte little-endian sequence number written over the first
//! bytes of its part of the message (as sockperf puts its header inside the message size), so
//! the receiver counts loss and reordering instead of hiding them. A message larger than one
//! datagram is refused, or with `--udp-split` sent as several equal parts, each numbered. A
//! zero-length datagram marks the end of a flow; as it may be lost, receivers also give up
//! after `RECEIVE_TIMEOUT` of silence once the run has stopped.
use super::{Endpoint, FlowConnector, FlowEnds, SocketOptions, Transport};
use crate::sys::socket;
use std::io::{self, IoSlice};
use std::net::{Ipv4Addr, UdpSocket};
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Bytes of sequence number at the start of every datagram.
pub const SEQ_BYTES: usize = 4;
/// The largest UDP payload over IPv4: 65535 minus the 20-byte IP and 8-byte UDP headers.
pub const UDP_MAX_PAYLOAD: usize = 65_507;
/// How long a receiver waits in silence before it asks whether the run is over (stream, rr
/// server) or counts the round trip as lost (rr client).
pub const RECEIVE_TIMEOUT: Duration = Duration::from_millis(200);
/// Most gather entries one datagram part may span (8 fields, plus headroom).
const MAX_PART_IOV: usize = 15;

/// How a message maps onto datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Framing {
    pub message_size: usize,
    /// Bytes of the largest part (parts differ by at most one byte).
    pub part_len: usize,
    pub parts: u32,
}

impl Framing {
    /// Splits `message_size` into the fewest equal parts of at most `limit` bytes, or refuses.
    pub fn new(
        transport: Transport,
        message_size: usize,
        limit: usize,
        split: bool,
    ) -> Result<Framing, String> {
        let name = transport.name();
        if message_size < SEQ_BYTES {
            return Err(format!(
                "{message_size} B with --transport {name}: every datagram starts with a \
                 {SEQ_BYTES}-byte sequence number (loss and reordering are counted); allowed: \
                 {SEQ_BYTES} B and up"
            ));
        }
        let parts = message_size.div_ceil(limit);
        if parts > 1 && !split {
            return Err(format!(
                "{message_size} B with --transport {name}: one datagram carries at most \
                 {limit} B ({}); allowed: up to {limit} B, or add --udp-split to send each \
                 message as {parts} datagrams",
                limit_reason(transport)
            ));
        }
        // Parts differ by at most one byte, so none is too short for its number: the smallest
        // holds more than half the limit.
        Ok(Framing {
            message_size,
            part_len: message_size.div_ceil(parts),
            parts: parts as u32,
        })
    }

    /// The framing a run over `transport` uses, or why the size cannot be carried.
    pub fn for_transport(
        transport: Transport,
        message_size: usize,
        split: bool,
    ) -> Result<Framing, String> {
        Framing::new(transport, message_size, datagram_limit(transport), split)
    }

    /// Byte range of part `part` within the message: the first `size % parts` parts are one
    /// byte longer than the rest.
    pub fn part_range(&self, part: u32) -> Range<usize> {
        let (parts, i) = (self.parts as usize, part as usize);
        let (short, longer) = (self.message_size / parts, self.message_size % parts);
        let start = i * short + i.min(longer);
        start..start + short + usize::from(i < longer)
    }
}

fn limit_reason(transport: Transport) -> &'static str {
    match transport {
        Transport::Udp => "the IPv4 limit: 65535 minus 20 B of IP and 8 B of UDP header",
        _ => "the AF_UNIX datagram limit on this machine: the socket send buffer, net.core.wmem_default, less 32 B",
    }
}

/// The largest datagram `transport` carries here. AF_UNIX's limit follows the send buffer, so it
/// is measured once (a non-blocking send on a fresh pair answers EMSGSIZE when too large).
pub fn datagram_limit(transport: Transport) -> usize {
    static UNIX_LIMIT: OnceLock<usize> = OnceLock::new();
    match transport {
        Transport::UnixDgram => *UNIX_LIMIT.get_or_init(probe_unix_limit),
        _ => UDP_MAX_PAYLOAD,
    }
}

fn probe_unix_limit() -> usize {
    let fits = |len: usize| -> bool {
        let Ok((a, _b)) = UnixDatagram::pair() else {
            return false;
        };
        let _ = a.set_nonblocking(true);
        a.send(&vec![0u8; len]).is_ok()
    };
    let (mut lo, mut hi) = (SEQ_BYTES, 64 << 20);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Fills `out` with the slices of `iov` that cover bytes `range` of their concatenation and
/// returns how many it used, or `None` when that needs more than `out` holds.
pub fn sub_iov<'s>(
    iov: &'s [IoSlice<'_>],
    range: Range<usize>,
    out: &mut [IoSlice<'s>],
) -> Option<usize> {
    let mut used = 0;
    let mut at = 0;
    for slice in iov {
        let bytes: &'s [u8] = slice;
        let start = at;
        at += bytes.len();
        let (lo, hi) = (range.start.max(start), range.end.min(at));
        if lo < hi {
            *out.get_mut(used)? = IoSlice::new(&bytes[lo - start..hi - start]);
            used += 1;
        }
        if at >= range.end {
            break;
        }
    }
    Some(used)
}

/// One side's datagram socket. Only this side's sending thread writes the counters (relaxed
/// loads and stores, no read-modify-write); they are atomics because the endpoint is shared
/// with the thread that may abort it.
pub struct DatagramSocket {
    fd: OwnedFd,
    framing: Framing,
    next_seq: AtomicU32,
    sent: AtomicU64,
}

impl DatagramSocket {
    pub fn new(fd: OwnedFd, framing: Framing) -> DatagramSocket {
        DatagramSocket {
            fd,
            framing,
            next_seq: AtomicU32::new(0),
            sent: AtomicU64::new(0),
        }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    pub fn number_from(&self, first: u32) {
        self.next_seq.store(first, Ordering::Relaxed);
    }

    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Sends one message as its datagrams, each with its sequence number over its first bytes.
    pub fn send(&self, iov: &[IoSlice<'_>]) -> io::Result<usize> {
        let total: usize = iov.iter().map(|s| s.len()).sum();
        if total != self.framing.message_size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a datagram flow carries whole {} B messages, not {total} B",
                    self.framing.message_size
                ),
            ));
        }
        let mut seq = self.next_seq.load(Ordering::Relaxed);
        for part in 0..self.framing.parts {
            let range = self.framing.part_range(part);
            self.send_part(iov, seq, range.start + SEQ_BYTES..range.end)?;
            seq = seq.wrapping_add(1);
        }
        self.next_seq.store(seq, Ordering::Relaxed);
        let sent = self.sent.load(Ordering::Relaxed);
        self.sent
            .store(sent + u64::from(self.framing.parts), Ordering::Relaxed);
        Ok(total)
    }

    fn send_part(&self, iov: &[IoSlice<'_>], seq: u32, payload: Range<usize>) -> io::Result<()> {
        let header = seq.to_le_bytes();
        let mut list = [IoSlice::new(&[]); MAX_PART_IOV + 1];
        list[0] = IoSlice::new(&header);
        let used = sub_iov(iov, payload, &mut list[1..]).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a datagram may span at most {MAX_PART_IOV} gather entries"),
            )
        })?;
        loop {
            match socket::sendmsg(self.fd.as_fd(), &list[..=used], 0) {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The zero-length datagram that ends a flow. A peer already gone is no error: it has
    /// stopped listening, which is what the marker asks of it.
    pub fn send_end_marker(&self) -> io::Result<()> {
        match socket::send(self.fd.as_fd(), &[], 0) {
            Err(e) if e.kind() != io::ErrorKind::ConnectionRefused => Err(e),
            _ => Ok(()),
        }
    }
}

fn framing(options: &SocketOptions) -> io::Result<Framing> {
    options.framing.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a datagram transport needs the run's framing",
        )
    })
}

pub fn send_buffer(fd: BorrowedFd<'_>) -> io::Result<usize> {
    Ok(socket::get_int_option(fd, libc::SOL_SOCKET, libc::SO_SNDBUF)?.max(0) as usize)
}

/// Opens `flows` flows from `pair`, which makes two connected sockets with their receive
/// timeout set.
fn datagram_flows<S: AsFd + Into<OwnedFd>>(
    flows: usize,
    options: &SocketOptions,
    pair: impl Fn() -> io::Result<(S, S)>,
) -> io::Result<Vec<FlowEnds>> {
    let framing = framing(options)?;
    (0..flows)
        .map(|_| {
            let (a, b) = pair()?;
            Ok(FlowEnds {
                send_buffer: send_buffer(a.as_fd())?,
                sender: Endpoint::datagram(a, framing),
                receiver: Endpoint::datagram(b, framing),
            })
        })
        .collect()
}

/// Opens `flows` UDP flows: each a sender socket from `bind_sender` and a receiver socket from
/// `bind_receiver`, connected to each other. Every placement shares this; only where the two
/// sockets are created differs.
pub fn udp_flows(
    flows: usize,
    options: &SocketOptions,
    bind_sender: impl Fn() -> io::Result<UdpSocket>,
    bind_receiver: impl Fn() -> io::Result<UdpSocket>,
) -> io::Result<Vec<FlowEnds>> {
    datagram_flows(flows, options, || {
        let a = bind_sender()?;
        let b = bind_receiver()?;
        a.connect(b.local_addr()?)?;
        b.connect(a.local_addr()?)?;
        a.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
        b.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
        Ok((a, b))
    })
}

pub struct UdpLoopback;

impl FlowConnector for UdpLoopback {
    fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowEnds>> {
        let bind = || UdpSocket::bind((Ipv4Addr::LOCALHOST, 0));
        udp_flows(flows, &options, bind, bind)
    }

    fn describe(&self) -> String {
        "two connected UDP sockets on loopback (127.0.0.1), both sides in one process".into()
    }
}

pub struct UnixDgramPair;

impl FlowConnector for UnixDgramPair {
    fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowEnds>> {
        datagram_flows(flows, &options, || {
            let (a, b) = UnixDatagram::pair()?;
            a.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
            b.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
            Ok((a, b))
        })
    }

    fn describe(&self) -> String {
        "AF_UNIX datagram socket pair, both sides in one process".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_a_datagram_cannot_carry_are_refused_or_split() {
        let e = Framing::new(Transport::Udp, 3, UDP_MAX_PAYLOAD, false).unwrap_err();
        assert!(
            e.starts_with("3 B with --transport udp") && e.contains("4 B and up"),
            "{e}"
        );
        let e = Framing::new(Transport::Udp, 65_508, UDP_MAX_PAYLOAD, false).unwrap_err();
        assert!(
            e.contains("at most 65507 B") && e.contains("--udp-split"),
            "{e}"
        );
        assert!(e.contains("as 2 datagrams"), "{e}");
        let whole = Framing::new(Transport::Udp, 65_507, UDP_MAX_PAYLOAD, false).unwrap();
        assert_eq!((whole.parts, whole.part_len), (1, 65_507));
        let split = Framing::new(Transport::Udp, 65_508, UDP_MAX_PAYLOAD, true).unwrap();
        assert_eq!((split.parts, split.part_len), (2, 32_754));
    }

    proptest! {
        #[test]
        fn split_parts_cover_the_message_once_each_within_the_limit(
            size in 4usize..2_000_000,
            limit in 8usize..70_000,
        ) {
            let f = Framing::new(Transport::Udp, size, limit, true).unwrap();
            let mut at = 0;
            for part in 0..f.parts {
                let r = f.part_range(part);
                prop_assert_eq!(r.start, at);
                prop_assert!(r.len() <= limit && r.len() >= SEQ_BYTES);
                at = r.end;
            }
            prop_assert_eq!(at, size);
        }

        #[test]
        fn sub_iov_covers_exactly_the_asked_range(
            lens in proptest::collection::vec(0usize..40, 1..9),
            a in 0usize..400,
            b in 0usize..400,
        ) {
            let data: Vec<u8> = (0..lens.iter().sum::<usize>()).map(|i| i as u8).collect();
            let mut slices = Vec::new();
            let mut at = 0;
            for len in &lens {
                slices.push(IoSlice::new(&data[at..at + len]));
                at += len;
            }
            let (lo, hi) = (a.min(b).min(at), a.max(b).min(at));
            let mut out = [IoSlice::new(&[]); 16];
            let used = sub_iov(&slices, lo..hi, &mut out).unwrap();
            let joined: Vec<u8> = out[..used].iter().flat_map(|s| s.iter().copied()).collect();
            prop_assert_eq!(&joined[..], &data[lo..hi]);
            prop_assert!(out[..used].iter().all(|s| !s.is_empty()));
        }
    }

    #[test]
    fn the_measured_unix_limit_is_the_largest_datagram_that_goes_through() {
        let limit = datagram_limit(Transport::UnixDgram);
        let (a, _b) = UnixDatagram::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        a.send(&vec![0u8; limit]).unwrap();
        let too_big = a.send(&vec![0u8; limit + 1]).unwrap_err();
        assert_eq!(too_big.raw_os_error(), Some(libc::EMSGSIZE));
    }

    #[test]
    fn a_split_message_goes_out_as_numbered_parts_of_the_payload() {
        let framing = Framing::new(Transport::Udp, 20, 8, true).unwrap();
        assert_eq!((framing.parts, framing.part_len), (3, 7));
        assert_eq!(
            framing.part_range(2),
            14..20,
            "the last part is the short one"
        );
        let options = SocketOptions {
            framing: Some(framing),
            ..SocketOptions::default()
        };
        let flow = UdpLoopback.connect(1, options).unwrap().remove(0);
        let message: Vec<u8> = (100..120).collect();
        let (head, tail) = message.split_at(9);
        flow.sender
            .write_vectored(&[IoSlice::new(head), IoSlice::new(tail)])
            .unwrap();
        let mut buf = [0u8; 16];
        for (seq, range) in [(0u8, 0..7), (1, 7..14), (2, 14..20)] {
            let n = flow.receiver.read(&mut buf, false).unwrap();
            assert_eq!(n, range.len());
            assert_eq!(
                buf[..4],
                [seq, 0, 0, 0],
                "the sequence number leads each part"
            );
            assert_eq!(buf[4..n], message[range.start + 4..range.end]);
        }
        assert_eq!(flow.sender.datagrams_sent(), Some(3));
    }
}
