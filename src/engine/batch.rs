//! Timestamps per batch of messages. Reading the clock, deriving the phase from it and
//! recording a latency sample cost ~50 ns, 6 % of a 64 B stream message on the VM this was
//! written on (bench/floor.sh), so the stream sides and the rr server read the clock once per
//! batch: the batch's messages are counted at its closing timestamp (the slice it falls in,
//! the window it closes in), and each gets the batch's interval divided by its count as its
//! latency sample, as messages completed by one recv always were. The rr client still reads
//! the clock once per round trip: there the sample is the figure.
//!
//! A batch ends early where a count must be exact: at the flow's `--messages`/`--bytes` share,
//! the window closes on the message that reaches it. Before the measured phase every message
//! is stamped (warm-up is not measured), so a window opens on the first message after the
//! phase starts, as it did with a timestamp per message: a short phase on a starved CPU
//! still counts what arrived in it.
use std::time::Instant;

/// The most messages between two timestamps: a phase change is seen within this many.
pub const MAX_MESSAGES: u64 = 64;
/// The most payload between two timestamps: large messages get one every few (at 64 KiB, every
/// 4), so a phase change is seen within ~0.1 ms at 20 Gbit/s.
pub const MAX_BYTES: u64 = 256 << 10;

/// Messages per timestamp for a stream side (or rr server) at this message size.
pub fn messages_per_stamp(message_size: usize) -> u64 {
    (MAX_BYTES / message_size.max(1) as u64).clamp(1, MAX_MESSAGES)
}

/// The messages completed since the last timestamp.
#[derive(Debug)]
pub struct Batch {
    per_stamp: u64,
    /// Messages (and their payload bytes) completed since `last`.
    pub messages: u64,
    pub bytes: u64,
    /// Messages after which the next timestamp is due.
    due: u64,
    /// The last timestamp.
    pub last: Instant,
}

impl Batch {
    /// The first batch is one message: every loop starts before its window opens.
    pub fn new(per_stamp: u64, now: Instant) -> Batch {
        Batch {
            per_stamp: per_stamp.max(1),
            messages: 0,
            bytes: 0,
            due: 1,
            last: now,
        }
    }

    /// Adds completed messages; true when a timestamp is due.
    #[inline]
    pub fn add(&mut self, messages: u64, bytes: u64) -> bool {
        self.messages += messages;
        self.bytes += bytes;
        self.messages >= self.due
    }

    /// Starts the next batch at `now`, of at most `most` messages when given (the share still
    /// to count, or 1 while the window waits for the measured phase).
    #[inline]
    pub fn restart(&mut self, now: Instant, most: Option<u64>) {
        self.messages = 0;
        self.bytes = 0;
        self.due = most.map_or(self.per_stamp, |l| l.clamp(1, self.per_stamp));
        self.last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_messages_batch_by_count_and_large_ones_by_bytes() {
        assert_eq!(messages_per_stamp(64), MAX_MESSAGES);
        assert_eq!(messages_per_stamp(4096), 64);
        assert_eq!(messages_per_stamp(16 << 10), 16);
        assert_eq!(messages_per_stamp(64 << 10), 4);
        assert_eq!(messages_per_stamp(1 << 20), 1);
    }

    #[test]
    fn a_stamp_is_due_after_a_batch_and_never_past_the_share() {
        let t = Instant::now();
        let mut b = Batch::new(4, t);
        assert!(b.add(1, 10), "the first message is stamped");
        b.restart(t, None);
        assert!(!b.add(1, 10) && !b.add(2, 20));
        assert!(b.add(1, 10), "the fourth message closes the batch");
        assert_eq!((b.messages, b.bytes), (4, 40));
        b.restart(t, Some(2));
        assert!(!b.add(1, 10));
        assert!(b.add(1, 10), "the share is reached within the batch");
        b.restart(t, Some(0));
        assert!(b.add(1, 10), "a reached share stamps every message");
        b.restart(t, None);
        assert!(!b.add(3, 30) && b.add(1, 10));
    }
}
