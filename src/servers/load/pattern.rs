//! The bytes of each request: a pattern unique to its connection and request number, so an
//! echo sent to the wrong connection or left over from an earlier request is caught.

/// Fills `buf` with request `seq` of connection `id`.
pub(super) fn fill(buf: &mut [u8], id: usize, seq: u64) {
    let seed = (id as u64)
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(seq.wrapping_mul(40503));
    for (i, b) in buf.iter_mut().enumerate() {
        *b = seed.wrapping_add(i as u64).wrapping_mul(31) as u8 ^ (seed >> 8) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_differ_per_connection_and_request() {
        let mut a = [0u8; 64];
        let mut b = [0u8; 64];
        fill(&mut a, 1, 0);
        fill(&mut b, 1, 1);
        assert_ne!(a, b);
        fill(&mut b, 2, 0);
        assert_ne!(a, b);
        fill(&mut b, 1, 0);
        assert_eq!(a, b);
    }
}
