//! Who may use a server, and how the sides prove it: token authentication is HMAC-SHA256
//! (RFC 2104) over a fresh server nonce, so the token itself never crosses the wire; the token
//! is read from a file (or standard input); nonces and session cookies come from the operating
//! system's random source; and they travel as hex.
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io;

/// Bytes of the server's challenge nonce.
const NONCE_BYTES: usize = 32;
/// Binds the proof to this protocol, so it cannot be replayed as some other HMAC. It names the
/// protocol, not its version (the hello refuses other versions before any proof is made), so
/// it stayed as it was when version 2 came.
const AUTH_CONTEXT: &[u8] = b"bytepath control v1 auth";

/// `n` bytes from the operating system's random source.
pub fn random_bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("getrandom: {e}")))?;
    Ok(bytes)
}

pub fn new_nonce() -> io::Result<[u8; NONCE_BYTES]> {
    random_bytes()
}

/// The proof that the sender knows `token`: HMAC-SHA256(token, context || nonce).
pub fn proof(token: &[u8], nonce: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(token).expect("HMAC takes keys of any length");
    mac.update(AUTH_CONTEXT);
    mac.update(nonce);
    mac.finalize().into_bytes().to_vec()
}

/// Checks a proof in constant time.
pub fn proof_is_valid(token: &[u8], nonce: &[u8], proof: &[u8]) -> bool {
    let mut mac = Hmac::<Sha256>::new_from_slice(token).expect("HMAC takes keys of any length");
    mac.update(AUTH_CONTEXT);
    mac.update(nonce);
    mac.verify_slice(proof).is_ok()
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
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proof_holds_for_the_token_and_nonce_it_was_made_with_only() {
        let nonce = new_nonce().unwrap();
        let p = proof(b"secret", &nonce);
        assert!(proof_is_valid(b"secret", &nonce, &p));
        assert!(!proof_is_valid(b"Secret", &nonce, &p));
        assert!(!proof_is_valid(b"secret", &new_nonce().unwrap(), &p));
        assert!(!proof_is_valid(b"secret", &nonce, &p[..31]));
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
