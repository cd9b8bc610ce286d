//! The receiving side: recv(2) into a message buffer until a whole message has arrived, or in
//! fixed chunks (`--recv-size`, as netperf reads 128 KiB at a time), counting message
//! boundaries by byte count; or one datagram per call, numbered, counting loss and reordering.
//! With `--verify` every byte is checked against the pattern. How stream bytes leave the
//! kernel is the receive path's (`--recv`): recv(2) into the message buffer, an io_uring into
//! provided buffers (`uring`), pages mapped by TCP_ZEROCOPY_RECEIVE (`zc`), or
//! recv(MSG_TRUNC), which counts bytes the kernel discards. What every path shares (`RecvPath`,
//! its statistics, its probe) is the vocabulary in `path`, which the paths import and which
//! imports none of them.
pub(crate) mod path;

#[cfg(test)]
mod path_tests;
mod source;
mod uring;
mod zc;

use super::buffer::MessageBuffer;
pub use super::verify::{Mismatch, Verifier, KEPT_MISMATCHES};
use crate::transport::datagram::{Framing, RECEIVE_TIMEOUT, SEQ_BYTES};
use crate::transport::Endpoint;
use path::{ReceivePathStats, RecvPath};
use source::Source;
use std::io;
use std::time::Instant;

/// How recv() calls are sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvMode {
    /// Ask for what is left of the current message (at most `max_call` bytes per call).
    WholeMessage { max_call: usize },
    /// Ask for `chunk` bytes every call, whatever the message boundaries.
    Chunks { chunk: usize },
    /// One datagram per call; a message is in when all its numbered parts are.
    Datagrams(Framing),
}

/// What one `receive` call brought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Received {
    /// Whole messages completed by this call.
    pub messages: u64,
    /// The peer closed the connection at a message boundary (or sent the end marker).
    pub eof: bool,
    /// Datagrams: nothing arrived within the receive timeout.
    pub timed_out: bool,
    /// Datagrams: the first sequence number of the completed message.
    pub first_seq: u32,
    /// Datagrams: the completed message's number (the sender's pattern sequence).
    pub message: u64,
}

/// What a datagram receiver saw over the whole run (all phases), with what its side sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DatagramStats {
    /// Datagrams this side sent.
    pub sent: u64,
    pub received: u64,
    /// Arrived after a higher-numbered datagram.
    pub reordered: u64,
    /// Messages of which some part never arrived (split messages only).
    pub incomplete_messages: u64,
    /// rr client: answers to earlier requests, arrived after their round trip was given up.
    pub stale_answers: u64,
    /// Receive timeouts: for the rr client each is a round trip given up as lost.
    pub timeouts: u64,
    /// The flow ended by a timeout after the stop instead of by its end marker.
    pub end_marker_lost: bool,
}

impl DatagramStats {
    /// Sums another flow's figures into these.
    pub fn add(&mut self, other: &DatagramStats) {
        self.sent += other.sent;
        self.received += other.received;
        self.reordered += other.reordered;
        self.incomplete_messages += other.incomplete_messages;
        self.stale_answers += other.stale_answers;
        self.timeouts += other.timeouts;
        self.end_marker_lost |= other.end_marker_lost;
    }
}

/// Numbering state of a datagram receiver.
struct Numbering {
    framing: Framing,
    highest: Option<u32>,
    /// First number and parts seen in a row of the message being assembled.
    first: u32,
    in_row: u32,
    last: u32,
    stats: DatagramStats,
}

impl Numbering {
    fn new(framing: Framing) -> Numbering {
        Numbering {
            framing,
            highest: None,
            first: 0,
            in_row: 0,
            last: 0,
            stats: DatagramStats::default(),
        }
    }

    /// Takes datagram `seq`; returns the first number of the message it completes, if any.
    /// Numbers compare by wrapping distance, so 2^32 datagrams wrap cleanly (parts numbered
    /// within a message assume fewer than 2^32 datagrams per flow).
    fn observe(&mut self, seq: u32) -> Option<u32> {
        self.stats.received += 1;
        match self.highest {
            Some(h) if (seq.wrapping_sub(h) as i32) <= 0 => self.stats.reordered += 1,
            _ => self.highest = Some(seq),
        }
        let parts = self.framing.parts;
        let part = seq % parts;
        if part == 0 {
            (self.first, self.in_row) = (seq, 1);
        } else if self.in_row > 0 && seq == self.last.wrapping_add(1) {
            self.in_row += 1;
        } else {
            self.in_row = 0;
        }
        self.last = seq;
        if part + 1 < parts {
            return None;
        }
        let whole = self.in_row == parts;
        self.in_row = 0;
        if !whole {
            self.stats.incomplete_messages += 1;
        }
        whole.then_some(self.first)
    }
}

pub struct Receiver {
    /// The message (or chunk) buffer: recv(2) fills it, zc-recv copies into it what it does
    /// not map, trunc passes it without it being written; uring-recv has its own buffers.
    buf: MessageBuffer,
    source: Source,
    mode: RecvMode,
    message_size: usize,
    /// Bytes of the current message already in.
    pos: usize,
    spin: bool,
    /// Whole messages taken in (the message number of stream transports).
    messages_total: u64,
    pub bytes_total: u64,
    pub verifier: Option<Verifier>,
    numbering: Option<Numbering>,
}

impl Receiver {
    /// A receiver taking bytes by `path` (datagrams always arrive by recv(2); config refuses
    /// other paths for them). Kernel objects a path needs are made on the first receive, in
    /// the thread that receives.
    pub fn new(
        flow: u32,
        message_size: usize,
        mode: RecvMode,
        spin: bool,
        verify: bool,
        path: RecvPath,
    ) -> Self {
        let len = match mode {
            // recv(2) assembles the whole message in the buffer; the other paths take at most
            // one call's worth at a time.
            RecvMode::WholeMessage { .. } if path == RecvPath::Recv => message_size,
            RecvMode::WholeMessage { max_call } => message_size.min(max_call),
            RecvMode::Chunks { chunk } => chunk,
            RecvMode::Datagrams(framing) => framing.part_len,
        };
        let source = match mode {
            RecvMode::Datagrams(_) => Source::new(RecvPath::Recv, len),
            _ => Source::new(path, len),
        };
        Receiver {
            buf: MessageBuffer::new(if source.uses_buffer() { len } else { 0 }),
            source,
            mode,
            message_size,
            pos: 0,
            spin,
            messages_total: 0,
            bytes_total: 0,
            verifier: verify.then(|| Verifier::new(flow, message_size)),
            numbering: match mode {
                RecvMode::Datagrams(framing) => Some(Numbering::new(framing)),
                _ => None,
            },
        }
    }

    /// uring-recv with `count` provided buffers of `len` bytes (tests shrink the ring).
    #[cfg(test)]
    pub(crate) fn with_uring_buffers(mut self, count: u16, len: u32) -> Self {
        assert!(!self.source.uses_buffer(), "a uring-recv receiver");
        self.source = Source::Uring(uring::UringSource::with_geometry(count, len));
        self
    }

    /// The message buffer (tests check that trunc leaves it unwritten).
    #[cfg(test)]
    pub(crate) fn buffer(&self) -> &[u8] {
        &self.buf
    }

    /// What the datagram numbering saw (datagram transports only).
    pub fn datagram_stats(&self) -> Option<DatagramStats> {
        self.numbering.as_ref().map(|n| n.stats)
    }

    /// The flow ended by silence after the stop: its end marker never came.
    pub fn end_marker_lost(&mut self) {
        if let Some(n) = self.numbering.as_mut() {
            n.stats.end_marker_lost = true;
        }
    }

    /// rr client: waits for the answer to request number `request`, dropping late answers to
    /// earlier requests. `Ok(false)`: no answer within the receive timeout (the round trip is
    /// lost; only datagram transports time out).
    pub fn receive_answer(&mut self, ep: &Endpoint, request: u64) -> io::Result<bool> {
        loop {
            let got = self.receive(ep)?;
            if got.eof {
                return Err(closed_before_answer());
            }
            if got.timed_out {
                return Ok(false);
            }
            match self.numbering.as_mut() {
                Some(n) if got.first_seq != (request as u32).wrapping_mul(n.framing.parts) => {
                    n.stats.stale_answers += 1;
                }
                _ => return Ok(true),
            }
        }
    }

    /// Receives until at least one message completes (whole-message mode) or one chunk arrives.
    pub fn receive(&mut self, ep: &Endpoint) -> io::Result<Received> {
        match self.mode {
            RecvMode::WholeMessage { max_call } => self.receive_message(ep, max_call),
            RecvMode::Chunks { chunk } => self.receive_chunk(ep, chunk),
            RecvMode::Datagrams(framing) => self.receive_datagram(ep, framing),
        }
    }

    fn receive_datagram(&mut self, ep: &Endpoint, framing: Framing) -> io::Result<Received> {
        loop {
            let Some(n) = self.recv_datagram(ep)? else {
                return Ok(Received {
                    timed_out: true,
                    ..Received::default()
                });
            };
            if n == 0 {
                return Ok(Received {
                    eof: true,
                    ..Received::default()
                });
            }
            if n < SEQ_BYTES {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a {n} B datagram carries no {SEQ_BYTES}-byte sequence number"),
                ));
            }
            let seq = u32::from_le_bytes(self.buf[..SEQ_BYTES].try_into().expect("4 bytes"));
            self.bytes_total += n as u64;
            let message = u64::from(seq / framing.parts);
            if let Some(v) = self.verifier.as_mut() {
                let offset = framing.part_range(seq % framing.parts).start + SEQ_BYTES;
                v.check_at(message, offset, &self.buf[SEQ_BYTES..n]);
            }
            let numbering = self.numbering.as_mut().expect("datagram mode numbers");
            if let Some(first_seq) = numbering.observe(seq) {
                return Ok(Received {
                    messages: 1,
                    first_seq,
                    message,
                    ..Received::default()
                });
            }
        }
    }

    /// One datagram's length, or `None` after the receive timeout (SO_RCVTIMEO when blocking;
    /// when spinning, the clock is read every few thousand empty polls).
    fn recv_datagram(&mut self, ep: &Endpoint) -> io::Result<Option<usize>> {
        let mut empty_polls = 0u32;
        let mut deadline = None;
        loop {
            match ep.read(&mut self.buf, self.spin) {
                Ok(n) => return Ok(Some(n)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    empty_polls = empty_polls.wrapping_add(1);
                    if !self.spin || empty_polls % 4096 == 0 {
                        let now = Instant::now();
                        if !self.spin || now >= *deadline.get_or_insert(now + RECEIVE_TIMEOUT) {
                            let numbering = self.numbering.as_mut().expect("datagram mode");
                            numbering.stats.timeouts += 1;
                            return Ok(None);
                        }
                    }
                    std::hint::spin_loop();
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn receive_message(&mut self, ep: &Endpoint, max_call: usize) -> io::Result<Received> {
        loop {
            let want = (self.message_size - self.pos).min(max_call);
            let n = self.pull(ep, self.pos, want)?;
            if n == 0 {
                return self.at_eof();
            }
            if let Some(done) = self.advance(n) {
                return Ok(done);
            }
        }
    }

    /// Counts `n` bytes of the message in progress; the completed message when they end it.
    fn advance(&mut self, n: usize) -> Option<Received> {
        self.pos += n;
        if self.pos < self.message_size {
            return None;
        }
        self.pos = 0;
        self.messages_total += 1;
        Some(Received {
            messages: 1,
            message: self.messages_total - 1,
            ..Received::default()
        })
    }

    /// crr client: the whole answer on a fresh connection, and when its first bytes arrived.
    /// One clock read more than `receive_answer`, so only the crr pattern pays it; crr always
    /// receives whole messages (no chunks, no datagrams).
    pub fn receive_answer_timed(&mut self, ep: &Endpoint) -> io::Result<Instant> {
        let RecvMode::WholeMessage { max_call } = self.mode else {
            return Err(io::Error::other(
                "a timed answer needs whole-message receiving",
            ));
        };
        let want = (self.message_size - self.pos).min(max_call);
        let n = self.pull(ep, self.pos, want)?;
        let first = Instant::now();
        let done = if n == 0 { None } else { self.advance(n) };
        let whole = match done {
            Some(done) => done,
            None if n == 0 => self.at_eof()?,
            None => self.receive_message(ep, max_call)?,
        };
        if whole.eof {
            return Err(closed_before_answer());
        }
        Ok(first)
    }

    fn receive_chunk(&mut self, ep: &Endpoint, chunk: usize) -> io::Result<Received> {
        let n = self.pull(ep, 0, chunk)?;
        if n == 0 {
            return self.at_eof();
        }
        let total = self.pos + n;
        self.pos = total % self.message_size;
        let messages = (total / self.message_size) as u64;
        self.messages_total += messages;
        Ok(Received {
            messages,
            message: self.messages_total.saturating_sub(1),
            ..Received::default()
        })
    }

    /// Takes up to `want` bytes (at least 1) of the stream by the receive path, verifies and
    /// counts them; recv(2) reads them into the buffer at `at`. 0: the peer closed.
    fn pull(&mut self, ep: &Endpoint, at: usize, want: usize) -> io::Result<usize> {
        let verifier = self.verifier.as_mut();
        let n = self
            .source
            .pull(ep, &mut self.buf, (at, want), self.spin, verifier)?;
        self.bytes_total += n as u64;
        Ok(n)
    }

    /// What this receiver's path did over the run.
    pub fn path_stats(&self) -> ReceivePathStats {
        self.source.stats(self.bytes_total)
    }

    fn at_eof(&self) -> io::Result<Received> {
        if self.pos != 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "peer closed the connection {} bytes into a message",
                    self.pos
                ),
            ));
        }
        Ok(Received {
            eof: true,
            ..Received::default()
        })
    }
}

/// The rr and crr client's error when the server closes instead of answering.
fn closed_before_answer() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "server closed the flow before answering",
    )
}

#[cfg(test)]
mod tests {
    use super::super::verify::tests::messages;
    use super::*;

    #[test]
    fn chunked_receive_counts_message_boundaries_over_a_socket() {
        use std::io::Write;
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let b = Endpoint::socket(b);
        let data = messages(0, 40, 10);
        a.write_all(&data).unwrap();
        drop(a);
        let mut r = Receiver::new(
            0,
            40,
            RecvMode::Chunks { chunk: 128 },
            false,
            true,
            RecvPath::Recv,
        );
        // One recv of 128 bytes completes three 40-byte messages and keeps 8 bytes of the fourth:
        // a receiver reading one message per call would report 1 here.
        let first = r.receive(&b).unwrap();
        assert_eq!(first.messages, 3);
        assert_eq!(r.bytes_total, 128);
        let mut total = first.messages;
        loop {
            let got = r.receive(&b).unwrap();
            if got.eof {
                break;
            }
            total += got.messages;
        }
        assert_eq!(total, 10);
        assert_eq!(r.bytes_total, 400);
        assert_eq!(r.verifier.unwrap().wrong_bytes, 0);
    }

    fn eight_byte_datagrams() -> Framing {
        Framing::new(crate::transport::Transport::Udp, 8, 65_507, false).unwrap()
    }

    /// A datagram receiving endpoint over UDP, and a plain socket that sends it hand-made
    /// datagrams.
    fn datagram_pair() -> (std::net::UdpSocket, Endpoint) {
        let raw = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let mine = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        raw.connect(mine.local_addr().unwrap()).unwrap();
        mine.connect(raw.local_addr().unwrap()).unwrap();
        mine.set_read_timeout(Some(RECEIVE_TIMEOUT)).unwrap();
        (raw, Endpoint::datagram(mine, eight_byte_datagrams()))
    }

    fn datagram(seq: u32) -> [u8; 8] {
        let mut d = [0u8; 8];
        d[..4].copy_from_slice(&seq.to_le_bytes());
        d
    }

    #[test]
    fn datagrams_arriving_out_of_order_are_counted_reordered_not_lost() {
        let (raw, ep) = datagram_pair();
        let mut r = Receiver::new(
            0,
            8,
            RecvMode::Datagrams(eight_byte_datagrams()),
            false,
            false,
            RecvPath::Recv,
        );
        for seq in [0, 1, 3, 2, 4] {
            raw.send(&datagram(seq)).unwrap();
        }
        raw.send(&[]).unwrap();
        let mut messages = 0;
        loop {
            let got = r.receive(&ep).unwrap();
            if got.eof {
                break;
            }
            messages += got.messages;
        }
        let stats = r.datagram_stats().unwrap();
        assert_eq!(messages, 5);
        assert_eq!((stats.received, stats.reordered), (5, 1));
    }

    #[test]
    fn a_late_answer_is_discarded_and_silence_gives_the_round_trip_up() {
        let (raw, ep) = datagram_pair();
        let mut r = Receiver::new(
            0,
            8,
            RecvMode::Datagrams(eight_byte_datagrams()),
            false,
            false,
            RecvPath::Recv,
        );
        raw.send(&datagram(3)).unwrap();
        raw.send(&datagram(5)).unwrap();
        assert!(r.receive_answer(&ep, 5).unwrap(), "the answer to request 5");
        assert!(!r.receive_answer(&ep, 6).unwrap(), "no answer to request 6");
        let stats = r.datagram_stats().unwrap();
        assert_eq!((stats.stale_answers, stats.timeouts), (1, 1));
    }

    #[test]
    fn eof_inside_a_message_is_an_error() {
        use std::io::Write;
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let b = Endpoint::socket(b);
        a.write_all(&[0u8; 10]).unwrap();
        drop(a);
        let mut r = Receiver::new(
            0,
            16,
            RecvMode::WholeMessage { max_call: 16 },
            false,
            false,
            RecvPath::Recv,
        );
        let err = r.receive(&b).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
