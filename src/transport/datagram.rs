//! Datagram flows: UDP over loopback (two connected sockets) and AF_UNIX datagram socket pairs.
//! Every datagram starts with a 4-byte little-endian sequence number written over the first
//! bytes of its part of the message (as sockperf puts its header inside the message size), so
//! the receiver counts loss and reordering instead of hiding them. A message larger than one
//! datagram is refused, or with `--udp-split` sent as several equal parts, each numbered. With
//! UDP GSO (`--gso`, UDP_SEGMENT) the kernel cuts each send into datagrams of the segment size
//! itself, so the sender numbers every segment inside the payload it hands over: the datagrams
//! the receiver gets carry their own numbers, exactly as without GSO. A zero-length datagram
//! marks the end of a flow; as it may be lost, receivers also give up after `RECEIVE_TIMEOUT`
//! of silence once the run has stopped.
pub use super::framing::{Framing, MAX_GSO_SEGMENTS, SEQ_BYTES};
use super::{Endpoint, FlowConnector, FlowEnds, SocketOptions};
use crate::sys::socket;
use std::io::{self, IoSlice};
use std::net::{Ipv4Addr, UdpSocket};
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// How long a receiver waits in silence before it asks whether the run is over (stream, rr
/// server) or counts the round trip as lost (rr client).
pub const RECEIVE_TIMEOUT: Duration = Duration::from_millis(200);
/// Most gather entries one datagram part may span (8 fields, plus headroom).
const MAX_PART_IOV: usize = 15;
/// Most gather entries of one GSO send: a header and a payload entry per segment, and one more
/// wherever a field of the message ends inside the send.
const MAX_SEND_IOV: usize = 2 * MAX_GSO_SEGMENTS + MAX_PART_IOV + 1;

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

/// The gather list of send `send` of the message whose bytes `iov` holds: for each part the
/// send carries, its number from `headers` (one per part, in order) and the part's bytes after
/// the number's. Returns how many entries of `out` it filled, or `None` when it needs more.
pub fn send_iov<'s>(
    framing: &Framing,
    iov: &'s [IoSlice<'_>],
    send: u32,
    headers: &'s [[u8; SEQ_BYTES]],
    out: &mut [IoSlice<'s>],
) -> Option<usize> {
    let mut used = 0;
    for (header, part) in headers.iter().zip(framing.send_parts(send)) {
        *out.get_mut(used)? = IoSlice::new(header);
        used += 1;
        let range = framing.part_range(part);
        used += sub_iov(
            iov,
            range.start + SEQ_BYTES..range.end,
            out.get_mut(used..)?,
        )?;
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

    /// Numbers the next message's datagrams: returns the first number, and the message after
    /// it starts after its last. The senders that write numbers into their own memory
    /// (`Framing::number_parts`) take them here.
    #[inline]
    pub fn number_message(&self) -> u32 {
        let first = self.next_seq.load(Ordering::Relaxed);
        let next = first.wrapping_add(self.framing.parts);
        self.next_seq.store(next, Ordering::Relaxed);
        first
    }

    /// Counts `datagrams` the kernel took.
    #[inline]
    pub fn count_sent(&self, datagrams: u32) {
        let sent = self.sent.load(Ordering::Relaxed);
        self.sent
            .store(sent + u64::from(datagrams), Ordering::Relaxed);
    }

    pub fn framing(&self) -> &Framing {
        &self.framing
    }

    /// Sends one message as its datagrams, each with its sequence number over its first bytes:
    /// a header of its own in the gather list of the send that carries it.
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
        let first = self.next_seq.load(Ordering::Relaxed);
        for send in 0..self.framing.sends() {
            // Without GSO a send is one part: a short list to build, as before GSO existed.
            match self.framing.gso {
                None => self.send_one::<1, { MAX_PART_IOV + 1 }>(iov, first, send)?,
                Some(_) => self.send_one::<MAX_GSO_SEGMENTS, MAX_SEND_IOV>(iov, first, send)?,
            }
        }
        self.number_message();
        self.count_sent(self.framing.parts);
        Ok(total)
    }

    /// One send of message `iov`, whose first datagram is numbered `first`: `H` headers and
    /// `N` gather entries at most, on the stack.
    fn send_one<const H: usize, const N: usize>(
        &self,
        iov: &[IoSlice<'_>],
        first: u32,
        send: u32,
    ) -> io::Result<()> {
        let parts = self.framing.send_parts(send);
        let mut headers = [[0u8; SEQ_BYTES]; H];
        for (header, part) in headers.iter_mut().zip(parts.clone()) {
            *header = first.wrapping_add(part).to_le_bytes();
        }
        let mut list = [IoSlice::new(&[]); N];
        let headers = &headers[..parts.len()];
        let used = send_iov(&self.framing, iov, send, headers, &mut list).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a send may span at most {N} gather entries"),
            )
        })?;
        loop {
            match socket::sendmsg(self.fd.as_fd(), &list[..used], 0) {
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

/// What a UDP socket of a run needs before its first send: SO_ZEROCOPY where its side sends
/// with MSG_ZEROCOPY (without it the flag is silently ignored and no completion ever comes),
/// and UDP_SEGMENT where the framing has GSO (both sides: an rr server answers in the same
/// framing). Every placement that makes UDP flows calls this.
pub fn udp_options(fd: BorrowedFd<'_>, options: &SocketOptions, zerocopy: bool) -> io::Result<()> {
    if zerocopy {
        socket::enable_zerocopy(fd)?;
    }
    if let Some(gso) = options.framing.and_then(|f| f.gso) {
        let segment = u16::try_from(gso.segment).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "a GSO segment is below 64 KiB")
        })?;
        crate::sys::mmsg::set_gso_segment(fd, segment)?;
    }
    Ok(())
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
        udp_options(a.as_fd(), options, options.zerocopy_sender)?;
        udp_options(b.as_fd(), options, options.zerocopy_receiver)?;
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
    use crate::transport::Transport;
    use proptest::prelude::*;

    proptest! {
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
