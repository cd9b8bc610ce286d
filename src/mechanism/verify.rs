//! `--verify`: every received byte checked against the pattern its (flow, message, offset)
//! must carry, in a stream cut anywhere or in numbered datagrams; every wrong byte counted,
//! the first few kept with where they were.
use super::pattern;

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

    /// Checks bytes at `offset` of message `message`, outside the running position (datagrams
    /// arrive numbered, not necessarily in order).
    pub fn check_at(&mut self, message: u64, offset: usize, data: &[u8]) {
        let (seq, at) = (self.seq, self.offset);
        (self.seq, self.offset) = (message, offset);
        self.check(data);
        (self.seq, self.offset) = (seq, at);
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// `count` messages of flow `flow`, as the sender writes them.
    pub fn messages(flow: u32, size: usize, count: u64) -> Vec<u8> {
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
}
