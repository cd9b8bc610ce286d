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

/// How to make a token file no one else can read: the fix every refusal of a token names.
pub const TOKEN_HINT: &str =
    "`bytepath keygen FILE` makes one (256 random bits in hex, a new file of mode 0600)";

/// The token in a token file: its bytes without surrounding white space (a trailing newline).
/// `-` is the first line of standard input (how `mesh --launch ssh` hands the token to the
/// servers it starts: never on a command line, never in a file on their hosts); the rest of
/// standard input is left unread. A file others may read is refused before it is read
/// (`private_enough`).
pub fn read_token(path: &std::path::Path) -> Result<Vec<u8>, String> {
    let text = if path.as_os_str() == "-" {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map(|_| line.into_bytes())
    } else {
        std::fs::metadata(path)
            .map_err(|e| format!("--token-file {}: cannot be read: {e}", path.display()))
            .and_then(|meta| private_enough("--token-file", path, &meta))?;
        std::fs::read(path)
    }
    .map_err(|e| format!("--token-file {}: cannot be read: {e}", path.display()))?;
    let token = text.trim_ascii().to_vec();
    if token.is_empty() {
        return Err(format!(
            "--token-file {}: the file is empty; allowed: a file holding the shared token ({TOKEN_HINT})",
            path.display()
        ));
    }
    token_is_strong(&token).map_err(|why| {
        format!(
            "--token-file {}: {why}; allowed: 64 hex digits as keygen writes them, or at least 128 bits of random material such as 32 random hex digits or `head -c 32 /dev/urandom | base64`; {TOKEN_HINT}",
            path.display()
        )
    })?;
    Ok(token)
}

/// A secret file (a token file, an `--identity` key) may be read by its owner only, as ssh
/// asks of a private key: one that group or others may read (or write, and so replace the
/// secret with one they know) is refused with the fix; `flag` names the option. One exception, PostgreSQL's rule for its key file: a file root owns may be read by
/// its group, which is how a secret store hands a key to a service's group; a Kubernetes
/// Secret volume with `fsGroup` makes every file root's, mode 0440, group fsGroup, whatever its
/// `defaultMode` says.
pub(super) fn private_enough(
    flag: &str,
    path: &std::path::Path,
    meta: &std::fs::Metadata,
) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o777;
    let open = if meta.uid() == 0 { 0o037 } else { 0o077 };
    if mode & open == 0 {
        return Ok(());
    }
    let who = if mode & 0o007 != 0 {
        "others"
    } else {
        "its group"
    };
    Err(format!(
        "{flag} {0}: mode {mode:04o} lets {who} read or change it; allowed: a file only its owner may read: run `chmod 600 {0}`",
        path.display()
    ))
}

/// The least random material a token may hold, in bits.
pub const MIN_TOKEN_BITS: f64 = 128.0;

/// Bits a character of a token that reads as words is taken to hold: a Diceware word (one of
/// 7,776, 12.9 bits) is about 7 letters and a separator, so 12.9 / 8. Words chosen by a person
/// hold less; a random string of lowercase letters holds more (4.7), but nothing in the token
/// tells the two apart, and a guess must never be generous.
const WORD_BITS_PER_CHAR: f64 = 1.6;

/// Judges a token's entropy honestly from what it shows, never generously:
/// - keygen's form and other hex (`openssl rand -hex`): 4 bits a digit (3.3 when all decimal);
/// - a token that reads as words (`correcthorsebatterystaple`, `Correct-Horse-Battery-42`):
///   every run of letters lowercase, uppercase, Capitalized or CamelCase, with words of 4
///   letters or more on average: `WORD_BITS_PER_CHAR`, whatever digits or separators it holds
///   (random base64 of 32 bytes reads so less than once in 300,000 draws);
/// - other printable ASCII (base64 of random bytes): log2 of the classes it draws from (26
///   lowercase, 26 uppercase, 10 digits, 33 others), 6 bits at most for base64's own alphabet;
/// - text beyond ASCII (valid UTF-8): words, as above; bytes that are not UTF-8 (raw random
///   bytes): 8 bits each.
///
/// A unit repeated three times or more counts once, and a token of fewer than 8 distinct
/// characters is refused whatever its length.
pub fn token_is_strong(token: &[u8]) -> Result<(), String> {
    let distinct = distinct_bytes(token);
    if distinct < 8 {
        return Err(format!(
            "the token uses only {distinct} distinct characters"
        ));
    }
    let unit = repeated_unit(token);
    let (per_char, kind) = bits_per_char(unit);
    let bits = unit.len() as f64 * per_char;
    if bits < MIN_TOKEN_BITS {
        let repeated = if unit.len() < token.len() {
            format!(", a unit of {} repeated", unit.len())
        } else {
            String::new()
        };
        return Err(format!(
            "the token holds {} characters{repeated} of {kind}, about {} bits",
            token.len(),
            bits.floor()
        ));
    }
    Ok(())
}

fn distinct_bytes(token: &[u8]) -> usize {
    let mut seen = [false; 256];
    token.iter().for_each(|&b| seen[b as usize] = true);
    seen.iter().filter(|&&s| s).count()
}

/// The shortest unit the token is, repeated three times or more; the token itself otherwise.
fn repeated_unit(token: &[u8]) -> &[u8] {
    (1..=token.len() / 3)
        .filter(|&len| token.len() % len == 0)
        .find(|&len| token.chunks(len).all(|c| c == &token[..len]))
        .map_or(token, |len| &token[..len])
}

/// Bits a character of `token` holds, and what it was judged to be.
fn bits_per_char(token: &[u8]) -> (f64, &'static str) {
    if token.iter().all(u8::is_ascii_digit) {
        return (10f64.log2(), "decimal digits");
    }
    if token.iter().all(u8::is_ascii_hexdigit) {
        return (4.0, "hex digits");
    }
    let Ok(text) = std::str::from_utf8(token) else {
        return (8.0, "raw bytes");
    };
    if !text.is_ascii() || reads_as_words(text) {
        return (WORD_BITS_PER_CHAR, "words");
    }
    let class = |f: fn(&u8) -> bool, size: f64| if token.iter().any(f) { size } else { 0.0 };
    let alphabet = class(u8::is_ascii_lowercase, 26.0)
        + class(u8::is_ascii_uppercase, 26.0)
        + class(u8::is_ascii_digit, 10.0)
        + class(|b| !b.is_ascii_alphanumeric(), 33.0);
    let base64 = token
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b"+/-_=".contains(&b));
    let bits = alphabet.log2();
    if base64 {
        (bits.min(6.0), "base64")
    } else {
        (bits, "printable characters")
    }
}

/// Whether the letters of `text` are words: every run of letters all lowercase, all
/// uppercase, or Capitalized words run together (CamelCase), 4 letters a word or more on
/// average. Random letters change case inside a run and make short pieces.
fn reads_as_words(text: &str) -> bool {
    let mut words = 0usize;
    let mut letters = 0usize;
    for run in text.split(|c: char| !c.is_ascii_alphabetic()) {
        if run.is_empty() {
            continue;
        }
        letters += run.len();
        if run.bytes().all(|b| b.is_ascii_uppercase()) {
            words += 1;
            continue;
        }
        // CamelCase: an uppercase letter only at a word's start, each word with lowercase.
        let bytes = run.as_bytes();
        let starts = (0..bytes.len())
            .filter(|&i| i == 0 || bytes[i].is_ascii_uppercase())
            .count();
        let camel = bytes
            .windows(2)
            .all(|w| !(w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase()))
            && bytes.last().is_some_and(u8::is_ascii_lowercase);
        if !camel {
            return false;
        }
        words += starts;
    }
    words > 0 && letters >= 4 * words
}

/// A new token of 256 random bits in hex (64 characters), as `bytepath keygen` writes it.
pub fn new_token() -> io::Result<String> {
    random_bytes::<32>().map(|b| to_hex(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outputs of `head -c 32 /dev/urandom | base64` (and two of 16 bytes), drawn once.
    const BASE64_DRAWN: [&str; 8] = [
        "Q5iIiqYXdJscoX44g4kROKFOdB54kVoDQr4GVp7Uvp0=",
        "FAErnyj9duyn/sR5VZQPnP0pFPKgseshqJ7GPDJgCwM=",
        "NzK2DeNctkkzvLErSn58f+xmR2fbkvso/X81jqfTHHY=",
        "fdGsF8cKBJXwhCogj0Vcu1jZ/cTRkDHBE3zpM6Sso0g=",
        "SkmDp3tqxkpCeIjxVQ8ZQfiTrADoV3HwtRw2PP6THaM=",
        "FrwoePOZk49tPV0WCcvrhsURgxP1hC49MjhwCd/qAbA=",
        "Imqqt7NfGz/FxoMa0okRvg==",
        "+KSTgOJBIJFB5a6dNEr3ww==",
    ];

    #[test]
    fn keygen_hex_and_random_base64_tokens_are_strong() {
        for token in BASE64_DRAWN.iter().chain(&[
            "3e54e94fdddce7e2134158cca5e20979",
            "E9497E7BA3955DB305979903564AE6FC",
        ]) {
            assert!(token_is_strong(token.as_bytes()).is_ok(), "{token}");
        }
        for _ in 0..200 {
            let token = new_token().unwrap();
            assert!(token_is_strong(token.as_bytes()).is_ok(), "{token}");
        }
        // Raw random bytes (not UTF-8) hold 8 bits each.
        let raw: Vec<u8> = (0u8..16).map(|i| 0x80 | (i * 7)).collect();
        assert!(token_is_strong(&raw).is_ok());
    }

    #[test]
    fn passphrases_are_judged_as_words_and_fail() {
        for phrase in [
            "correcthorsebatterystaple",
            "correct horse battery staple",
            "Correct-Horse-Battery-Staple-42",
            "CorrectHorseBatteryStapleAndAnotherWord",
            "CORRECT_HORSE_BATTERY_STAPLE_2024",
            "thequickbrownfoxjumpsoverthelazydogagain",
            "правильная лошадь батарейка скрепка",
        ] {
            let why = token_is_strong(phrase.as_bytes()).unwrap_err();
            assert!(why.contains("of words"), "{phrase}: {why}");
        }
        // Only at the length ten Diceware words take does a passphrase pass.
        let long = "correct horse battery staple mouse river orbit plank tundra lemon quiet marble sketch vivid";
        assert!(token_is_strong(long.as_bytes()).is_ok(), "{long}");
    }

    #[test]
    fn short_and_repeated_tokens_fail() {
        let short = token_is_strong(b"0123456789abcdef0123456789abcde").unwrap_err();
        assert!(short.contains("about 124 bits"), "{short}");
        assert!(token_is_strong(b"secret").is_err());
        assert!(token_is_strong(b"Tr0ub4dor&3")
            .unwrap_err()
            .contains("printable"));
        assert!(token_is_strong(&[b'a'; 64])
            .unwrap_err()
            .contains("1 distinct"));
        let unit = token_is_strong("deadbeef1234".repeat(6).as_bytes()).unwrap_err();
        assert!(unit.contains("a unit of 12 repeated"), "{unit}");
        assert!(token_is_strong("Zm9vYmFy".repeat(8).as_bytes()).is_err());
        // 32 decimal digits: 106 bits.
        assert!(token_is_strong(b"31415926535897932384626433832795")
            .unwrap_err()
            .contains("decimal"));
    }

    #[test]
    fn a_token_file_others_or_the_group_may_read_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, format!("{}\n", new_token().unwrap())).unwrap();
        // Group read is refused unless root owns the file (then it is how a group is given it).
        let root_owned = std::os::unix::fs::MetadataExt::uid(&path.metadata().unwrap()) == 0;
        let group_read = if root_owned { vec![] } else { vec![0o640] };
        for mode in [0o644, 0o604, 0o620, 0o602].into_iter().chain(group_read) {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let why = read_token(&path).unwrap_err();
            assert!(
                why.contains(&format!("mode {mode:04o}"))
                    && why.contains(&format!("chmod 600 {}", path.display())),
                "{why}"
            );
        }
        let allowed = if root_owned {
            vec![0o440, 0o640]
        } else {
            vec![]
        };
        for mode in [0o600, 0o400].into_iter().chain(allowed) {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(read_token(&path).unwrap().len(), 64);
        }
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
