//! The receiving side: recv(2) into a message buffer until a whole message has arrived, or in
//! fixed chunks (`--recv-size`, as netperf reads 128 KiB at a time), counting message
//! boundaries by byte count. With `--verify` every byte is checked against the pattern.
use super::pattern;
use crate::transport::Endpoint;
use std::io;

/// How recv() calls are sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvMode {
    /// Ask for what is left of the current message (at most `max_call` bytes per call).
    WholeMessage { max_call: usize },
    /// Ask for `chunk` bytes every call, whatever the message boundaries.
    Chunks { chunk: usize },
}

/// One wrong byte found by `--verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mismatch {
    pub flow: u32,
    /// Message sequence number within the flow.
    pub message: u64,
    /// Byte offset within that message.
    pub offset: usize,
    pub expected: u8,
    pub got: u8,
}

/// The first mismatches are kept for the report; all are counted.
pub const KEPT_MISMATCHES: usize = 8;

/// Streaming checker: keeps its own (message, offset) position across recv calls.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Verifier {
    flow: u32,
    seq: u64,
    offset: usize,
    message_size: usize,
    pub checked_bytes: u64,
    pub wrong_bytes: u64,
    pub first: Vec<Mismatch>,
}

impl Verifier {
    pub fn new(flow: u32, message_size: usize) -> Self {
        Verifier {
            flow,
            seq: 0,
            offset: 0,
            message_size,
            checked_bytes: 0,
            wrong_bytes: 0,
            first: Vec::with_capacity(KEPT_MISMATCHES),
        }
    }

    pub fn check(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let take = (self.message_size - self.offset).min(data.len());
            let seed = pattern::message_seed(self.flow, self.seq);
            if let Some((at, wrong)) = pattern::check(seed, self.offset, &data[..take]) {
                self.wrong_bytes += wrong;
                if self.first.len() < KEPT_MISMATCHES {
                    self.first.push(Mismatch {
                        flow: self.flow,
                        message: self.seq,
                        offset: self.offset + at,
                        expected: pattern::expected_byte(seed, self.offset + at),
                        got: data[at],
                    });
                }
            }
            self.checked_bytes += take as u64;
            self.offset += take;
            if self.offset == self.message_size {
                self.offset = 0;
                self.seq += 1;
            }
            data = &data[take..];
        }
    }
}

/// What one `receive` call brought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Whole messages completed by this call.
    pub messages: u64,
    /// The peer closed the connection at a message boundary.
    pub eof: bool,
}

pub struct Receiver {
    buf: Vec<u8>,
    mode: RecvMode,
    message_size: usize,
    /// Bytes of the current message already in.
    pos: usize,
    spin: bool,
    pub bytes_total: u64,
    pub verifier: Option<Verifier>,
}

impl Receiver {
    pub fn new(flow: u32, message_size: usize, mode: RecvMode, spin: bool, verify: bool) -> Self {
        let len = match mode {
            RecvMode::WholeMessage { .. } => message_size,
            RecvMode::Chunks { chunk } => chunk,
        };
        Receiver {
            buf: vec![0u8; len],
            mode,
            message_size,
            pos: 0,
            spin,
            bytes_total: 0,
            verifier: verify.then(|| Verifier::new(flow, message_size)),
        }
    }

    /// Receives until at least one message completes (whole-message mode) or one chunk arrives.
    pub fn receive(&mut self, ep: &Endpoint) -> io::Result<Received> {
        match self.mode {
            RecvMode::WholeMessage { max_call } => self.receive_message(ep, max_call),
            RecvMode::Chunks { chunk } => self.receive_chunk(ep, chunk),
        }
    }

    fn receive_message(&mut self, ep: &Endpoint, max_call: usize) -> io::Result<Received> {
        loop {
            let want = (self.message_size - self.pos).min(max_call);
            let range = self.pos..self.pos + want;
            let n = recv_once(ep, &mut self.buf[range], self.spin)?;
            if n == 0 {
                return self.at_eof();
            }
            self.take(self.pos, n);
            self.pos += n;
            if self.pos == self.message_size {
                self.pos = 0;
                return Ok(Received {
                    messages: 1,
                    eof: false,
                });
            }
        }
    }

    fn receive_chunk(&mut self, ep: &Endpoint, chunk: usize) -> io::Result<Received> {
        let n = recv_once(ep, &mut self.buf[..chunk], self.spin)?;
        if n == 0 {
            return self.at_eof();
        }
        self.take(0, n);
        let total = self.pos + n;
        self.pos = total % self.message_size;
        Ok(Received {
            messages: (total / self.message_size) as u64,
            eof: false,
        })
    }

    fn take(&mut self, start: usize, n: usize) {
        self.bytes_total += n as u64;
        if let Some(v) = self.verifier.as_mut() {
            v.check(&self.buf[start..start + n]);
        }
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
            messages: 0,
            eof: true,
        })
    }
}

/// One recv(2) or read(2); with `spin`, busy-polls non-blocking calls instead of sleeping in
/// the kernel.
fn recv_once(ep: &Endpoint, buf: &mut [u8], spin: bool) -> io::Result<usize> {
    loop {
        match ep.read(buf, spin) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if spin && e.kind() == io::ErrorKind::WouldBlock => std::hint::spin_loop(),
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(flow: u32, size: usize, count: u64) -> Vec<u8> {
        let mut out = vec![0u8; size * count as usize];
        for (seq, msg) in out.chunks_exact_mut(size).enumerate() {
            pattern::fill(pattern::message_seed(flow, seq as u64), 0, msg);
        }
        out
    }

    #[test]
    fn verifier_accepts_a_stream_cut_anywhere() {
        let data = messages(2, 24, 5);
        let mut v = Verifier::new(2, 24);
        for piece in data.chunks(7) {
            v.check(piece);
        }
        assert_eq!((v.checked_bytes, v.wrong_bytes), (120, 0));
    }

    #[test]
    fn verifier_reports_flow_message_and_offset_of_a_wrong_byte() {
        let mut data = messages(1, 16, 3);
        data[16 + 5] ^= 1;
        let mut v = Verifier::new(1, 16);
        v.check(&data);
        assert_eq!(v.wrong_bytes, 1);
        let m = v.first[0];
        assert_eq!((m.flow, m.message, m.offset), (1, 1, 5));
        assert_eq!(m.got, m.expected ^ 1);
    }

    #[test]
    fn a_reordered_message_is_caught() {
        let data = messages(0, 16, 2);
        let mut swapped = data[16..].to_vec();
        swapped.extend_from_slice(&data[..16]);
        let mut v = Verifier::new(0, 16);
        v.check(&swapped);
        assert!(v.wrong_bytes > 0);
    }

    #[test]
    fn chunked_receive_counts_message_boundaries_over_a_socket() {
        use std::io::Write;
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let b = Endpoint::socket(b);
        let data = messages(0, 40, 10);
        a.write_all(&data).unwrap();
        drop(a);
        let mut r = Receiver::new(0, 40, RecvMode::Chunks { chunk: 128 }, false, true);
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

    #[test]
    fn eof_inside_a_message_is_an_error() {
        use std::io::Write;
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let b = Endpoint::socket(b);
        a.write_all(&[0u8; 10]).unwrap();
        drop(a);
        let mut r = Receiver::new(0, 16, RecvMode::WholeMessage { max_call: 16 }, false, false);
        let err = r.receive(&b).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
