//! Measurement slices. The measured phase is cut into equal slices counted from its start; the
//! measured side (stream receiver, rr client) adds each completed message to the slice its
//! timestamp falls in, and publishes a slice to the shared board when it passes the slice's end
//! (one atomic add per slice and thread, nothing per message). The controller reads the board to
//! decide when the confidence interval is tight enough; the final figures are read after every
//! worker has joined, so they are exact whatever the controller saw.
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Per-slice totals of one side, summed over its threads.
pub struct SliceBoard {
    bytes: Vec<AtomicU64>,
    messages: Vec<AtomicU64>,
    /// How many threads have published each slice.
    publishers: Vec<AtomicU32>,
}

impl SliceBoard {
    pub fn new(slices: usize) -> SliceBoard {
        SliceBoard {
            bytes: (0..slices).map(|_| AtomicU64::new(0)).collect(),
            messages: (0..slices).map(|_| AtomicU64::new(0)).collect(),
            publishers: (0..slices).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn add(&self, slice: usize, bytes: u64, messages: u64) {
        if slice < self.bytes.len() {
            self.bytes[slice].fetch_add(bytes, Ordering::Relaxed);
            self.messages[slice].fetch_add(messages, Ordering::Relaxed);
            // Release: a reader that sees the count also sees the totals added before it.
            self.publishers[slice].fetch_add(1, Ordering::Release);
        }
    }

    /// Leading slices (of the first `upto`) that all `threads` have published: the ones whose
    /// totals are final while the run goes on.
    pub fn complete(&self, upto: usize, threads: usize) -> usize {
        self.publishers[..upto.min(self.publishers.len())]
            .iter()
            .take_while(|p| p.load(Ordering::Acquire) as usize >= threads)
            .count()
    }

    /// Totals of the first `used` slices: (bytes, messages) per slice.
    pub fn read(&self, used: usize) -> (Vec<u64>, Vec<u64>) {
        let used = used.min(self.bytes.len());
        let get = |v: &[AtomicU64]| {
            v[..used]
                .iter()
                .map(|a| a.load(Ordering::Relaxed))
                .collect()
        };
        (get(&self.bytes), get(&self.messages))
    }
}

/// One slice of the measured side that every thread has published, as the controller sees it
/// while the run goes on (for `--json-stream`; the record's slices are read after the join).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceSeen {
    pub index: usize,
    pub length: Duration,
    pub bytes: u64,
    pub messages: u64,
}

/// Who is told of each slice as it completes, if anyone: called by the controller thread,
/// never by a worker.
pub type SliceWatch<'a> = Option<&'a dyn Fn(SliceSeen)>;

impl SliceBoard {
    /// Tells `watch` of slices `from..upto` (complete ones), each with its totals.
    pub fn tell(&self, watch: &dyn Fn(SliceSeen), length: Duration, from: usize, upto: usize) {
        for index in from..upto.min(self.bytes.len()) {
            watch(SliceSeen {
                index,
                length,
                bytes: self.bytes[index].load(Ordering::Relaxed),
                messages: self.messages[index].load(Ordering::Relaxed),
            });
        }
    }
}

/// One worker's running slice.
pub struct SliceClock {
    board: Arc<SliceBoard>,
    length: Duration,
    index: usize,
    ends_at: Instant,
    bytes: u64,
    messages: u64,
}

impl SliceClock {
    /// Slices start at `measure_from`.
    pub fn new(board: Arc<SliceBoard>, measure_from: Instant, length: Duration) -> SliceClock {
        SliceClock {
            board,
            length,
            index: 0,
            ends_at: measure_from + length,
            bytes: 0,
            messages: 0,
        }
    }

    /// Adds messages completed at `now` to the slice `now` falls in.
    #[inline]
    pub fn add(&mut self, now: Instant, messages: u64, bytes: u64) {
        self.pass(now);
        self.bytes += bytes;
        self.messages += messages;
    }

    /// Publishes every slice that ended at or before `now`.
    #[inline]
    pub fn pass(&mut self, now: Instant) {
        while now >= self.ends_at && self.index < self.board.len() {
            self.board.add(self.index, self.bytes, self.messages);
            self.bytes = 0;
            self.messages = 0;
            self.index += 1;
            self.ends_at += self.length;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_land_in_the_slice_of_their_timestamp() {
        let board = Arc::new(SliceBoard::new(4));
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut a = SliceClock::new(board.clone(), t0, ms(10));
        let mut b = SliceClock::new(board.clone(), t0, ms(10));
        a.add(t0 + ms(1), 1, 100);
        a.add(t0 + ms(9), 1, 100);
        b.add(t0 + ms(5), 2, 50);
        a.add(t0 + ms(25), 1, 7); // slice 2; slice 1 had nothing from a
        assert_eq!(board.complete(4, 2), 0, "b has not passed slice 0 yet");
        b.pass(t0 + ms(40));
        assert_eq!(
            board.complete(4, 2),
            2,
            "a has published slices 0 and 1 only"
        );
        a.pass(t0 + ms(40));
        assert_eq!(board.complete(4, 2), 4);
        let (bytes, messages) = board.read(4);
        assert_eq!(bytes, vec![250, 0, 7, 0]);
        assert_eq!(messages, vec![4, 0, 1, 0]);
    }

    #[test]
    fn an_unfinished_slice_is_not_published() {
        let board = Arc::new(SliceBoard::new(2));
        let t0 = Instant::now();
        let mut c = SliceClock::new(board.clone(), t0, Duration::from_millis(10));
        c.add(t0 + Duration::from_millis(12), 1, 9);
        assert_eq!(board.read(2).0, vec![0, 0]);
    }
}
