//! The one copy loop every memcpy roofline figure times (`roofline`, `roofline_threads`).
use std::hint::black_box;

/// A source and a destination of one size, every page touched and copied once untimed, so no
/// timed copy pays a page fault. The one copy loop every roofline figure times.
pub struct CopyBuffers {
    src: Vec<u8>,
    dst: Vec<u8>,
}

impl CopyBuffers {
    pub fn new(bytes: usize) -> CopyBuffers {
        let mut buffers = CopyBuffers {
            src: vec![0x5A; bytes],
            dst: vec![0xA5; bytes],
        };
        buffers.copy(1);
        buffers
    }

    /// `copies` back-to-back copies of the source into the destination.
    pub fn copy(&mut self, copies: usize) {
        for _ in 0..copies {
            self.dst.copy_from_slice(black_box(&self.src));
            black_box(&mut self.dst);
        }
    }
}
