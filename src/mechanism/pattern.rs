//! The deterministic byte pattern of a message: derived from (flow, sequence) and the byte's
//! offset in the message, so the receiver can check every byte wherever the stream was cut.
//! Words are 8 bytes at message offsets that are multiples of 8, so a field or chunk that
//! starts mid-word still gets the right bytes.

/// splitmix64: a fast, well-mixed 64-bit finalizer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of one message.
#[inline]
pub fn message_seed(flow: u32, seq: u64) -> u64 {
    mix(((flow as u64) << 48) ^ seq)
}

#[inline]
fn word(seed: u64, word_index: u64) -> u64 {
    seed ^ word_index.wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

/// Writes the pattern of bytes `[offset, offset + buf.len())` of message `seed` into `buf`.
pub fn fill(seed: u64, offset: usize, buf: &mut [u8]) {
    let mut pos = offset;
    let mut rest = buf;
    while pos % 8 != 0 && !rest.is_empty() {
        rest[0] = word(seed, (pos / 8) as u64).to_le_bytes()[pos % 8];
        rest = &mut rest[1..];
        pos += 1;
    }
    let mut words = rest.chunks_exact_mut(8);
    let mut w = (pos / 8) as u64;
    for chunk in &mut words {
        chunk.copy_from_slice(&word(seed, w).to_le_bytes());
        w += 1;
    }
    let tail = words.into_remainder();
    let bytes = word(seed, w).to_le_bytes();
    tail.copy_from_slice(&bytes[..tail.len()]);
}

/// Checks `buf` against bytes `[offset, …)` of message `seed`. Returns the index in `buf` of the
/// first wrong byte and how many bytes are wrong, or `None` when all match.
pub fn check(seed: u64, offset: usize, buf: &[u8]) -> Option<(usize, u64)> {
    if fast_equal(seed, offset, buf) {
        return None;
    }
    let mut first = None;
    let mut wrong = 0u64;
    for (i, &b) in buf.iter().enumerate() {
        let pos = offset + i;
        if b != word(seed, (pos / 8) as u64).to_le_bytes()[pos % 8] {
            first.get_or_insert(i);
            wrong += 1;
        }
    }
    first.map(|i| (i, wrong))
}

/// The expected byte at `offset` (for mismatch reports).
pub fn expected_byte(seed: u64, offset: usize) -> u8 {
    word(seed, (offset / 8) as u64).to_le_bytes()[offset % 8]
}

fn fast_equal(seed: u64, offset: usize, buf: &[u8]) -> bool {
    let head = ((8 - offset % 8) % 8).min(buf.len());
    let (start, rest) = buf.split_at(head);
    if start
        .iter()
        .enumerate()
        .any(|(i, &b)| b != expected_byte(seed, offset + i))
    {
        return false;
    }
    let mut w = ((offset + head) / 8) as u64;
    let mut words = rest.chunks_exact(8);
    for chunk in &mut words {
        if u64::from_le_bytes(chunk.try_into().expect("8-byte chunk")) != word(seed, w) {
            return false;
        }
        w += 1;
    }
    let tail = words.remainder();
    tail == &word(seed, w).to_le_bytes()[..tail.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn different_messages_have_different_bytes() {
        let mut a = [0u8; 64];
        let mut b = [0u8; 64];
        fill(message_seed(0, 1), 0, &mut a);
        fill(message_seed(0, 2), 0, &mut b);
        assert_ne!(a, b);
        fill(message_seed(1, 1), 0, &mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn a_flipped_byte_is_found_at_its_index() {
        let seed = message_seed(3, 9);
        let mut buf = vec![0u8; 1000];
        fill(seed, 5, &mut buf);
        assert_eq!(check(seed, 5, &buf), None);
        buf[517] ^= 0x40;
        assert_eq!(check(seed, 5, &buf), Some((517, 1)));
    }

    proptest! {
        #[test]
        fn pieces_filled_separately_equal_the_whole(len in 1usize..300, cut in 0usize..300) {
            let seed = message_seed(7, 42);
            let cut = cut.min(len);
            let mut whole = vec![0u8; len];
            fill(seed, 0, &mut whole);
            let mut pieces = vec![0u8; len];
            let (a, b) = pieces.split_at_mut(cut);
            fill(seed, 0, a);
            fill(seed, cut, b);
            prop_assert_eq!(&whole, &pieces);
            prop_assert_eq!(check(seed, cut, &whole[cut..]), None);
        }
    }
}
