//! Who may use a server: the shared token, read from a file (or standard input) and refused
//! when it holds too little random material (the handshake that proves it is `channel`);
//! session cookies come from the operating system's random source and travel as hex.
use std::io;

/// `n` bytes from the operating system's random source.
pub fn random_bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("getrandom: {e}")))?;
    Ok(bytes)
}

pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lower- or upper-case hex; `None` for anything else (odd length, other characters).
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The token in a token file: its bytes without surrounding white space (a trailing newline).
/// `-` is the first line of standard input (how `mesh --launch ssh` hands the token to the
/// servers it starts: never on a command line, never in a file on their hosts); the rest of
/// standard input is left unread.
pub fn read_token(path: &std::path::Path) -> Result<Vec<u8>, String> {
    let text = if path.as_os_str() == "-" {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map(|_| line.into_bytes())
    } else {
        std::fs::read(path)
    }
    .map_err(|e| format!("--token-file {}: cannot be read: {e}", path.display()))?;
    let token = text.trim_ascii().to_vec();
    if token.is_empty() {
        return Err(format!(
            "--token-file {}: the file is empty; allowed: a file holding the shared token",
            path.display()
        ));
    }
    token_is_strong(&token).map_err(|why| {
        format!(
            "--token-file {}: {why}; allowed: at least 128 bits of random material, such as 32 hex digits or 22 base64 characters (`head -c 32 /dev/urandom | base64 > FILE` makes one)",
            path.display()
        )
    })?;
    Ok(token)
}

/// The least random material a token may hold, in bits.
pub const MIN_TOKEN_BITS: usize = 128;

/// Judges a token's entropy by its length and alphabet, taking it to be random material:
/// 4 bits a character when it is all hex digits, 6 when all base64 (or printable ASCII, a
/// generous bound for a passphrase), and at least 8 distinct characters (so "aaaa…" or
/// "abababab…" do not pass on length alone). Anything not printable ASCII counts 8 bits a byte.
pub fn token_is_strong(token: &[u8]) -> Result<(), String> {
    let per_char = if token.iter().all(u8::is_ascii_hexdigit) {
        4
    } else if token.iter().all(|b| b.is_ascii_graphic()) {
        6
    } else {
        8
    };
    let bits = token.len() * per_char;
    let mut seen = [false; 256];
    token.iter().for_each(|&b| seen[b as usize] = true);
    let distinct = seen.iter().filter(|&&s| s).count();
    if bits < MIN_TOKEN_BITS {
        return Err(format!(
            "the token holds {} characters, about {bits} bits",
            token.len()
        ));
    }
    if distinct < 8 {
        return Err(format!(
            "the token uses only {distinct} distinct characters"
        ));
    }
    Ok(())
}

/// A new token of 256 random bits in hex (64 characters), as `bytepath keygen` writes it.
pub fn new_token() -> io::Result<String> {
    random_bytes::<32>().map(|b| to_hex(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_or_repetitive_tokens_are_weak_and_random_ones_strong() {
        assert!(token_is_strong(b"0123456789abcdef0123456789abcdef").is_ok());
        let short = token_is_strong(b"0123456789abcdef0123456789abcde").unwrap_err();
        assert!(short.contains("124 bits"), "{short}");
        assert!(token_is_strong(b"secret").is_err());
        assert!(token_is_strong(&[b'a'; 64])
            .unwrap_err()
            .contains("1 distinct"));
        assert!(token_is_strong(b"Zm9vYmFyYmF6cXV1eDEyMzQ1Ng").is_ok());
    }

    #[test]
    fn a_new_token_is_256_fresh_bits_in_hex_and_strong() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_eq!(from_hex(&a).unwrap().len(), 32);
        assert_ne!(a, b);
        assert!(token_is_strong(a.as_bytes()).is_ok());
    }

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_hex() {
        assert_eq!(
            from_hex(&to_hex(&[0, 1, 0xab, 0xff])).unwrap(),
            [0, 1, 0xab, 0xff]
        );
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
        assert_eq!(from_hex("é1"), None);
    }
}
