//! How a message maps onto datagrams, and the datagrams onto sends: without GSO the fewest
//! equal parts a datagram can carry (`--udp-split`), one send each; with UDP GSO (`--gso`,
//! UDP_SEGMENT) parts of exactly the segment size, which the kernel cuts each send into. Every
//! part starts with its 4-byte sequence number, so the receiver numbers what it gets the same
//! way whichever framing sent it. The limits of this machine (the AF_UNIX datagram size, the
//! segments a GSO send may carry) are tried once.
use super::Transport;
use crate::sys::mmsg::set_gso_segment;
use std::net::{Ipv4Addr, UdpSocket};
use std::ops::Range;
use std::os::fd::AsFd;
use std::os::unix::net::UnixDatagram;
use std::sync::OnceLock;
use std::time::Duration;

/// Bytes of sequence number at the start of every datagram.
pub const SEQ_BYTES: usize = 4;
/// The largest UDP payload over IPv4: 65535 minus the 20-byte IP and 8-byte UDP headers.
pub const UDP_MAX_PAYLOAD: usize = 65_507;
/// The most segments one GSO send may carry on any kernel (UDP_MAX_SEGMENTS is 64 before
/// Linux 6.13 and 128 since; `gso_max_segments` says which this one takes).
pub const MAX_GSO_SEGMENTS: usize = 128;

/// How a message maps onto datagrams, and the datagrams onto sends (system calls or io_uring
/// entries): one send per datagram, or with UDP GSO one send per run of up to `per_send`
/// segments, which the kernel cuts apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Framing {
    pub message_size: usize,
    /// Bytes of the largest part (without GSO parts differ by at most one byte).
    pub part_len: usize,
    /// Datagrams per message.
    pub parts: u32,
    /// UDP GSO: every datagram of a message but the last carries exactly `segment` bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gso: Option<Gso>,
}

/// UDP GSO's framing (`--gso`): the segment size the kernel cuts sends at, and how many
/// segments one send carries (the kernel takes at most 65507 B and `gso_max_segments` of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Gso {
    pub segment: usize,
    pub per_send: u32,
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
            gso: None,
        })
    }

    /// UDP GSO: `message_size` in datagrams of `segment` bytes (the last one shorter), sent
    /// `max_segments` at most to a send (the kernel's UDP_MAX_SEGMENTS), or why it cannot be.
    pub fn segmented(
        message_size: usize,
        segment: usize,
        max_segments: u32,
        split: bool,
    ) -> Result<Framing, String> {
        let said = format!("{message_size} B with --gso {segment}");
        if !(SEQ_BYTES..=UDP_MAX_PAYLOAD).contains(&segment) {
            return Err(format!(
                "{said}: a segment is one datagram's payload, its {SEQ_BYTES}-byte sequence \
                 number included; allowed: {SEQ_BYTES} to {UDP_MAX_PAYLOAD} B"
            ));
        }
        let parts = message_size.div_ceil(segment).max(1);
        let last = message_size - (parts - 1) * segment;
        if last < SEQ_BYTES {
            return Err(format!(
                "{said}: the last datagram would carry {last} B, too few for its {SEQ_BYTES}-byte \
                 sequence number; allowed: sizes that leave 0 or at least {SEQ_BYTES} B over a \
                 multiple of {segment}"
            ));
        }
        let per_send = (UDP_MAX_PAYLOAD / segment)
            .min(max_segments as usize)
            .max(1);
        let sends = parts.div_ceil(per_send);
        if sends > 1 && !split {
            return Err(format!(
                "{said}: one send carries at most {per_send} segments, {} B (the kernel takes \
                 {max_segments} segments and {UDP_MAX_PAYLOAD} B at most); allowed: up to {} B, \
                 or add --udp-split to send each message as {sends} sends",
                per_send * segment,
                per_send * segment
            ));
        }
        Ok(Framing {
            message_size,
            part_len: segment.min(message_size),
            parts: parts as u32,
            gso: Some(Gso {
                segment,
                per_send: per_send as u32,
            }),
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

    /// The framing of a run: with `gso` (UDP only) segments of that size, sent as many to a
    /// send as this kernel takes; without, the transport's datagrams.
    pub fn for_run(
        transport: Transport,
        message_size: usize,
        split: bool,
        gso: Option<usize>,
    ) -> Result<Framing, String> {
        match gso {
            Some(segment) => Framing::segmented(message_size, segment, gso_max_segments(), split),
            None => Framing::for_transport(transport, message_size, split),
        }
    }

    /// Byte range of part `part` within the message. Without GSO the first `size % parts`
    /// parts are one byte longer than the rest; with it every part but the last is a segment.
    pub fn part_range(&self, part: u32) -> Range<usize> {
        let (parts, i) = (self.parts as usize, part as usize);
        if let Some(gso) = self.gso {
            let start = i * gso.segment;
            return start..(start + gso.segment).min(self.message_size);
        }
        let (short, longer) = (self.message_size / parts, self.message_size % parts);
        let start = i * short + i.min(longer);
        start..start + short + usize::from(i < longer)
    }

    /// Sends per message: one per datagram, or with GSO one per run of `per_send` segments.
    pub fn sends(&self) -> u32 {
        match self.gso {
            Some(gso) => self.parts.div_ceil(gso.per_send),
            None => self.parts,
        }
    }

    /// The parts send `send` carries.
    pub fn send_parts(&self, send: u32) -> Range<u32> {
        match self.gso {
            Some(gso) => send * gso.per_send..((send + 1) * gso.per_send).min(self.parts),
            None => send..send + 1,
        }
    }

    /// Byte range of send `send` within the message.
    pub fn send_range(&self, send: u32) -> Range<usize> {
        let parts = self.send_parts(send);
        self.part_range(parts.start).start..self.part_range(parts.end - 1).end
    }

    /// Writes the numbers of a message's datagrams, `first` on, each over the first bytes of
    /// its part: `write(offset, bytes)` puts them into the message's own memory (the senders
    /// that lend it to the kernel, whose datagrams carry no separate header).
    #[inline]
    pub fn number_parts(&self, first: u32, mut write: impl FnMut(usize, [u8; SEQ_BYTES])) {
        for part in 0..self.parts {
            let at = self.part_range(part).start;
            write(at, first.wrapping_add(part).to_le_bytes());
        }
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

/// How many segments one GSO send may carry on this kernel (UDP_MAX_SEGMENTS: 128 since
/// Linux 6.13, 64 before), found once by a send of 128 eight-byte segments on loopback.
pub fn gso_max_segments() -> u32 {
    static MAX: OnceLock<u32> = OnceLock::new();
    *MAX.get_or_init(|| {
        let most = MAX_GSO_SEGMENTS as u32;
        if gso_send(8, most as usize * 8).is_ok() {
            most
        } else {
            64
        }
    })
}

/// One GSO send of `len` bytes in `segment`-byte datagrams over a loopback UDP pair; returns
/// the lengths of the datagrams that arrived (within 200 ms of silence).
pub fn gso_send(segment: u16, len: usize) -> std::io::Result<Vec<usize>> {
    let sender = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
    let receiver = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
    sender.connect(receiver.local_addr()?)?;
    receiver.set_read_timeout(Some(Duration::from_millis(200)))?;
    set_gso_segment(sender.as_fd(), segment)?;
    sender.send(&vec![0u8; len])?;
    let mut got = Vec::new();
    let mut buf = vec![0u8; UDP_MAX_PAYLOAD];
    while let Ok(n) = receiver.recv(&mut buf) {
        got.push(n);
    }
    Ok(got)
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

    #[test]
    fn gso_cuts_a_message_into_segments_and_sends_of_at_most_the_kernels_count() {
        let f = Framing::segmented(64_000, 1472, 64, false).unwrap();
        assert_eq!((f.parts, f.part_len, f.sends()), (44, 1472, 1));
        assert_eq!(f.part_range(43), 43 * 1472..64_000);
        assert_eq!(f.send_range(0), 0..64_000);
        // 1 MiB: 713 segments, 44 to a send (44 x 1472 B fit 65507 B, 45 do not).
        let f = Framing::segmented(1 << 20, 1472, 128, true).unwrap();
        assert_eq!((f.parts, f.sends()), (713, 17));
        assert_eq!(f.send_parts(16), 704..713);
        assert_eq!(f.send_range(16), 704 * 1472..1 << 20);
        // Small segments: the kernel's segment count binds first.
        let f = Framing::segmented(64 << 10, 256, 64, true).unwrap();
        assert_eq!((f.parts, f.sends()), (256, 4));
        let f = Framing::segmented(64, 1472, 64, false).unwrap();
        assert_eq!((f.parts, f.part_len, f.sends()), (1, 64, 1));
    }

    #[test]
    fn gso_sizes_that_cannot_be_numbered_or_sent_at_once_are_refused_with_the_reason() {
        let e = Framing::segmented(1472 + 2, 1472, 64, false).unwrap_err();
        assert!(e.contains("last datagram would carry 2 B"), "{e}");
        let e = Framing::segmented(1 << 20, 1472, 64, false).unwrap_err();
        assert!(e.contains("at most 44 segments, 64768 B"), "{e}");
        assert!(
            e.contains("--udp-split") && e.contains("as 17 sends"),
            "{e}"
        );
        for segment in [0, 3, 65_508] {
            let e = Framing::segmented(4096, segment, 64, false).unwrap_err();
            assert!(e.contains("allowed: 4 to 65507 B"), "{e}");
        }
    }

    #[test]
    fn numbers_go_over_the_first_bytes_of_every_part() {
        let f = Framing::segmented(2500, 1000, 64, false).unwrap();
        let mut at = Vec::new();
        f.number_parts(u32::MAX, |offset, bytes| at.push((offset, bytes)));
        let seq = |n: u32| n.to_le_bytes();
        assert_eq!(at, [(0, seq(u32::MAX)), (1000, seq(0)), (2000, seq(1))]);
    }

    #[test]
    fn this_kernel_cuts_a_gso_send_as_the_framing_says() {
        let max = gso_max_segments();
        assert!(max == 64 || max == 128, "{max}");
        let f = Framing::segmented(10_000, 3000, max, false).unwrap();
        let lengths: Vec<usize> = (0..f.parts).map(|p| f.part_range(p).len()).collect();
        assert_eq!(gso_send(3000, 10_000).unwrap(), lengths);
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
        fn gso_sends_cover_the_parts_once_each_in_order(
            size in 4usize..300_000,
            segment in 4usize..9000,
            max in prop_oneof![Just(64u32), Just(128u32)],
        ) {
            let Ok(f) = Framing::segmented(size, segment, max, true) else {
                // Only a last segment too short for its number is refused with --udp-split.
                prop_assert!(size % segment != 0 && size % segment < SEQ_BYTES);
                return Ok(());
            };
            let mut at = 0;
            let mut next_part = 0;
            for send in 0..f.sends() {
                let parts = f.send_parts(send);
                prop_assert_eq!(parts.start, next_part);
                prop_assert!(parts.len() as u32 <= max && f.send_range(send).len() <= UDP_MAX_PAYLOAD);
                prop_assert_eq!(f.send_range(send).start, at);
                at = f.send_range(send).end;
                next_part = parts.end;
            }
            prop_assert_eq!((at, next_part), (size, f.parts));
        }
    }
}
