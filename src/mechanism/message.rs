//! The seeds' message: 8 fields, each allocated separately on the heap, `size / 8` bytes each.
use super::pattern;
use crate::sys::uring_send::BoxedParts;
use std::io::IoSlice;

pub const FIELDS: usize = 8;

pub struct Message {
    fields: [Box<[u8]>; FIELDS],
}

impl Message {
    /// Allocates the 8 fields (each its own heap allocation) and fills them with message 0.
    pub fn new(size: usize, flow: u32) -> Message {
        assert!(size >= FIELDS && size % FIELDS == 0, "validated in config");
        let field_size = size / FIELDS;
        let mut msg = Message {
            fields: std::array::from_fn(|_| vec![0u8; field_size].into_boxed_slice()),
        };
        msg.fill(pattern::message_seed(flow, 0));
        msg
    }

    pub fn field_size(&self) -> usize {
        self.fields[0].len()
    }

    #[cfg(test)]
    pub fn size(&self) -> usize {
        self.field_size() * FIELDS
    }

    /// Writes the pattern of message `seed` across the fields, as if they were contiguous.
    pub fn fill(&mut self, seed: u64) {
        let field_size = self.field_size();
        for (i, field) in self.fields.iter_mut().enumerate() {
            pattern::fill(seed, i * field_size, field);
        }
    }

    /// Writes `bytes` at `offset` of the message, as if its fields were contiguous: a
    /// datagram's sequence number over the first bytes of its part (a few bytes a datagram).
    pub fn write_at(&mut self, offset: usize, bytes: &[u8]) {
        let field_size = self.field_size();
        for (at, &byte) in (offset..).zip(bytes) {
            self.fields[at / field_size][at % field_size] = byte;
        }
    }

    /// Serializes the fields into `out` (the two-copy path's first copy).
    pub fn serialize_into(&self, out: &mut [u8]) {
        for (field, dst) in self
            .fields
            .iter()
            .zip(out.chunks_exact_mut(self.field_size()))
        {
            dst.copy_from_slice(field);
        }
    }

    /// The gather list over the 8 fields.
    pub fn iov(&self) -> [IoSlice<'_>; FIELDS] {
        std::array::from_fn(|i| IoSlice::new(&self.fields[i]))
    }
}

/// io_uring sends lend a message's eight fields to the kernel as they are.
impl BoxedParts for Message {
    fn boxed_parts(&self) -> &[Box<[u8]>] {
        &self.fields
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_separate_and_serialize_to_the_pattern() {
        let mut msg = Message::new(64, 1);
        let seed = pattern::message_seed(1, 5);
        msg.fill(seed);
        let mut out = vec![0u8; 64];
        msg.serialize_into(&mut out);
        assert_eq!(pattern::check(seed, 0, &out), None);
        let iov = msg.iov();
        assert_eq!(iov.len(), 8);
        assert!(iov.iter().all(|s| s.len() == 8));
        assert_ne!(iov[0].as_ptr(), iov[1].as_ptr());
    }

    #[test]
    fn bytes_written_at_an_offset_land_there_across_fields() {
        let mut msg = Message::new(16, 0);
        msg.write_at(3, &[9, 8, 7, 6]);
        let mut out = vec![0u8; 16];
        msg.serialize_into(&mut out);
        assert_eq!(
            out[3..7],
            [9, 8, 7, 6],
            "fields of 2 B: the bytes span three of them"
        );
        let mut fresh = vec![0u8; 16];
        Message::new(16, 0).serialize_into(&mut fresh);
        assert_eq!((&out[..3], &out[7..]), (&fresh[..3], &fresh[7..]));
    }

    #[test]
    fn one_byte_fields_work() {
        let msg = Message::new(8, 0);
        assert_eq!(msg.field_size(), 1);
        assert_eq!(msg.size(), 8);
    }
}
