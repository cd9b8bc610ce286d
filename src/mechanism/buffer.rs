//! Message buffers the kernel copies into or out of once per message (the receiver's, the
//! `send` and `copy` senders'): page aligned and alone on their pages. Two plain heap buffers
//! made one after the other share a cache line (the sender's last bytes, the receiver's
//! first); the receiver writes its line on every message and the sender reads it, so the line
//! crossed between the CPUs on every message and `send` at 4 KiB ran at 0.85x the bare loop
//! (bench/floor.sh). A page boundary also puts every run's copies at the same offset in the
//! page, whatever was allocated before.
use std::ops::{Deref, DerefMut};

const PAGE: usize = 4096;

pub struct MessageBuffer {
    /// Zeroed storage with room to start on a page boundary and end on one.
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl MessageBuffer {
    /// `len` zeroed bytes starting on a page boundary, the rest of the last page unused.
    pub fn new(len: usize) -> MessageBuffer {
        if len == 0 {
            return MessageBuffer {
                storage: Vec::new(),
                start: 0,
                len: 0,
            };
        }
        let storage = vec![0u8; len.next_multiple_of(PAGE) + PAGE - 1];
        let start = storage.as_ptr().align_offset(PAGE);
        MessageBuffer {
            storage,
            start,
            len,
        }
    }
}

impl Deref for MessageBuffer {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }
}

impl DerefMut for MessageBuffer {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_start_on_a_page_and_share_no_page_with_the_next_allocation() {
        for len in [1, 64, 256, 4095, 4096, 4097, 65536] {
            let a = MessageBuffer::new(len);
            let b = MessageBuffer::new(len);
            assert_eq!(a.len(), len);
            assert!(a.iter().all(|&x| x == 0));
            for buf in [&a, &b] {
                assert_eq!(buf.as_ptr() as usize % PAGE, 0, "{len} B");
            }
            let (a_end, b_start) = (a.as_ptr() as usize + len, b.as_ptr() as usize);
            let (b_end, a_start) = (b_start + len, a.as_ptr() as usize);
            assert!(
                a_end.next_multiple_of(PAGE) <= b_start || b_end.next_multiple_of(PAGE) <= a_start,
                "{len} B: the two buffers share a page"
            );
        }
    }

    #[test]
    fn an_empty_buffer_allocates_nothing() {
        let b = MessageBuffer::new(0);
        assert!(b.is_empty());
        assert_eq!(b.storage.capacity(), 0);
    }
}
