//! Accounting of MSG_ZEROCOPY completions (Documentation/networking/msg_zerocopy.rst).
//! Each successful zero-copy send call takes the next number of a 32-bit per-socket counter
//! that wraps; the kernel reports completions as inclusive `[first, last]` ranges that it may
//! merge. The tracker widens those to 64-bit send ids, knows exactly which sends are done, and
//! refuses a range that is unknown or already counted, so nothing is lost or counted twice.
use crate::sys::zerocopy::CompletionRange;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    #[error("completion range [{first}, {last}] names sends that were never made")]
    Unknown { first: u32, last: u32 },
    #[error("completion range [{first}, {last}] overlaps sends already completed")]
    Duplicate { first: u32, last: u32 },
}

#[derive(Debug)]
pub struct CompletionTracker {
    /// Ids handed out so far; the next send gets this id.
    issued: u64,
    /// Every id below this is complete.
    done_below: u64,
    /// Completed ranges above `done_below`, sorted and disjoint (out-of-order arrivals).
    ahead: Vec<(u64, u64)>,
    completed: u64,
    copied: u64,
}

impl Default for CompletionTracker {
    fn default() -> Self {
        Self::starting_at(0)
    }
}

impl CompletionTracker {
    /// A tracker whose first send gets id `first_id` (tests use this to cross the 32-bit wrap).
    pub fn starting_at(first_id: u64) -> Self {
        CompletionTracker {
            issued: first_id,
            done_below: first_id,
            ahead: Vec::with_capacity(64),
            completed: 0,
            copied: 0,
        }
    }

    /// Records one successful zero-copy send call and returns its id.
    pub fn issue(&mut self) -> u64 {
        let id = self.issued;
        self.issued += 1;
        id
    }

    pub fn issued_ids(&self) -> u64 {
        self.issued
    }

    pub fn completed(&self) -> u64 {
        self.completed
    }

    pub fn copied(&self) -> u64 {
        self.copied
    }

    /// Sends still waiting for their completion.
    pub fn outstanding(&self) -> u64 {
        self.issued - self.done_below - self.ahead.iter().map(|(a, b)| b - a + 1).sum::<u64>()
    }

    pub fn is_complete(&self, id: u64) -> bool {
        id < self.done_below || self.ahead.iter().any(|&(a, b)| (a..=b).contains(&id))
    }

    /// Applies one notification; returns how many sends it completed.
    pub fn complete(&mut self, range: CompletionRange) -> Result<u64, RangeError> {
        let (first, last) = self.widen(range)?;
        let count = last - first + 1;
        if first == self.done_below {
            self.done_below = last + 1;
            while let Some(&(a, b)) = self.ahead.first() {
                if a != self.done_below {
                    break;
                }
                self.done_below = b + 1;
                self.ahead.remove(0);
            }
        } else {
            let at = self.ahead.partition_point(|&(a, _)| a < first);
            let overlaps_prev = at > 0 && self.ahead[at - 1].1 >= first;
            let overlaps_next = at < self.ahead.len() && self.ahead[at].0 <= last;
            if overlaps_prev || overlaps_next {
                return Err(RangeError::Duplicate {
                    first: range.first,
                    last: range.last,
                });
            }
            self.ahead.insert(at, (first, last));
        }
        self.completed += count;
        if range.copied {
            self.copied += count;
        }
        Ok(count)
    }

    /// Maps a 32-bit range onto the 64-bit ids in flight (`done_below .. issued`).
    fn widen(&self, range: CompletionRange) -> Result<(u64, u64), RangeError> {
        let unknown = RangeError::Unknown {
            first: range.first,
            last: range.last,
        };
        let duplicate = RangeError::Duplicate {
            first: range.first,
            last: range.last,
        };
        let in_flight = self.issued - self.done_below;
        let first_off = range.first.wrapping_sub(self.done_below as u32) as u64;
        let count = range.last.wrapping_sub(range.first) as u64 + 1;
        if first_off >= in_flight {
            // Either ids not yet issued, or ids just below done_below (already counted).
            let behind = (self.done_below as u32).wrapping_sub(range.first) as u64;
            return Err(if behind <= self.done_below && behind > 0 {
                duplicate
            } else {
                unknown
            });
        }
        if first_off + count > in_flight {
            return Err(unknown);
        }
        let first = self.done_below + first_off;
        Ok((first, first + count - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(first: u32, last: u32) -> CompletionRange {
        CompletionRange {
            first,
            last,
            copied: false,
        }
    }

    fn issue(t: &mut CompletionTracker, n: u64) {
        for _ in 0..n {
            t.issue();
        }
    }

    #[test]
    fn a_merged_range_completes_every_send_in_it() {
        let mut t = CompletionTracker::default();
        issue(&mut t, 8);
        assert_eq!(t.complete(range(0, 7)).unwrap(), 8);
        assert_eq!(t.outstanding(), 0);
        assert!(t.is_complete(7));
    }

    #[test]
    fn ranges_after_a_gap_wait_until_the_gap_closes() {
        let mut t = CompletionTracker::default();
        issue(&mut t, 10);
        t.complete(range(5, 9)).unwrap();
        assert!(!t.is_complete(0) && t.is_complete(6));
        assert_eq!(t.outstanding(), 5);
        t.complete(range(0, 4)).unwrap();
        assert_eq!(t.outstanding(), 0);
        assert_eq!(t.completed(), 10);
    }

    #[test]
    fn the_32_bit_counter_wraps_without_losing_count() {
        let mut t = CompletionTracker::starting_at(u32::MAX as u64 - 2);
        issue(&mut t, 6); // ids 2^32-3 ..= 2^32+2: 32-bit values 4294967293..=2
        let n = t.complete(range(u32::MAX - 2, 2)).unwrap();
        assert_eq!(n, 6);
        assert_eq!(t.outstanding(), 0);
        assert!(t.is_complete(u32::MAX as u64 + 3 - 1));
    }

    #[test]
    fn a_range_counted_twice_is_refused() {
        let mut t = CompletionTracker::default();
        issue(&mut t, 4);
        t.complete(range(0, 1)).unwrap();
        assert!(matches!(
            t.complete(range(0, 1)),
            Err(RangeError::Duplicate { .. })
        ));
        t.complete(range(3, 3)).unwrap();
        assert!(matches!(
            t.complete(range(3, 3)),
            Err(RangeError::Duplicate { .. })
        ));
        assert_eq!(t.completed(), 3);
    }

    #[test]
    fn a_range_for_sends_never_made_is_refused() {
        let mut t = CompletionTracker::default();
        issue(&mut t, 2);
        assert!(matches!(
            t.complete(range(2, 2)),
            Err(RangeError::Unknown { .. })
        ));
        assert!(matches!(
            t.complete(range(1, 5)),
            Err(RangeError::Unknown { .. })
        ));
        assert_eq!(t.completed(), 0);
    }

    #[test]
    fn copied_ranges_are_counted_separately() {
        let mut t = CompletionTracker::default();
        issue(&mut t, 5);
        t.complete(CompletionRange {
            first: 0,
            last: 2,
            copied: true,
        })
        .unwrap();
        t.complete(range(3, 4)).unwrap();
        assert_eq!((t.completed(), t.copied()), (5, 3));
    }
}
