//! Identities per host, beside the shared token: each host holds an X25519 key pair of its own
//! (`bytepath keygen --identity FILE`), a server is told which driver public keys may drive it
//! (`--authorized-drivers`) and a driver which server keys to trust (`--trusted-servers`). A
//! server pod that is broken into then gives away its own key only: not the credential that
//! drives every other server, nor one that lets it pose as another server to the drivers.
//!
//! The handshake with identities is Noise IK (`channel::IDENTITY_PARAMS`; with a token too,
//! IKpsk1). Why IK: it keeps today's one round trip (NNpsk0 is one too), and the responder
//! need not know beforehand which driver comes, since the driver's static key arrives
//! encrypted in the first message; the driver must know the server's key before it speaks,
//! which its hello announces and `--trusted-servers` vouches for (the handshake then proves
//! the server holds it). KK would make the server know every driver before the first byte,
//! XX costs a third message, and mutual TLS (rustls) would bring certificates and a CA to
//! run, where a list of public keys, like SSH's known_hosts and authorized_keys, is enough.
//! The token joins as psk1 (at the end of the first message), not psk2 as WireGuard does it:
//! WireGuard looks up a psk per peer after the first message, while here it is one shared
//! value, and with psk1 the server knows from the first message alone whether the token
//! matches, so a wrong one is refused and counted for the back-off before it answers.
//!
//! Files: the private key is one line of 64 hex digits after a `#` comment, mode 0600,
//! refused when group or others may read or write it; a public key is one line
//! `<64 hex digits> <name>`; a list of keys is such lines, blank lines and `#` comments
//! ignored, the name optional.
use super::auth::{from_hex, random_bytes, to_hex};
use crate::config::remote::{KeyPair, NamedKey, KEY_BYTES};
use snow::resolvers::{CryptoResolver, DefaultResolver};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Hex digits of a key a fingerprint shows: 64 bits, enough to tell a fleet's keys apart by eye.
const FINGERPRINT_DIGITS: usize = 16;

/// A server's identity: its key pair and the driver keys it lets drive it.
#[derive(Debug, Clone)]
pub struct ServerIdentity {
    pub keys: KeyPair,
    pub authorized_drivers: Vec<NamedKey>,
}

impl ServerIdentity {
    /// The authorized driver whose key this is, if one is.
    pub fn driver(&self, key: &[u8; KEY_BYTES]) -> Option<&NamedKey> {
        find(&self.authorized_drivers, key)
    }
}

/// The entry of `list` with this key, if any (public keys: no secret to compare in constant
/// time).
pub fn find<'a>(list: &'a [NamedKey], key: &[u8; KEY_BYTES]) -> Option<&'a NamedKey> {
    list.iter().find(|named| &named.key == key)
}

/// The first 16 hex digits of a public key: what logs and messages show of it.
pub fn fingerprint(key: &[u8; KEY_BYTES]) -> String {
    to_hex(key)[..FINGERPRINT_DIGITS].to_string()
}

/// How the audit line names a key: its name in the list and its fingerprint.
pub fn describe(named: &NamedKey) -> String {
    format!("key {} ({})", named.name, fingerprint(&named.key))
}

/// A public key as hex text, as its hello announces it and key files hold it.
pub fn key_hex(key: &[u8; KEY_BYTES]) -> String {
    to_hex(key)
}

/// A key from 64 hex digits, `None` for anything else.
pub fn parse_key(text: &str) -> Option<[u8; KEY_BYTES]> {
    from_hex(text)?.try_into().ok()
}

/// The X25519 public key of `private`.
pub fn public_of(private: &[u8; KEY_BYTES]) -> [u8; KEY_BYTES] {
    let mut dh = DefaultResolver
        .resolve_dh(&snow::params::DHChoice::Curve25519)
        .expect("snow's default resolver has X25519");
    dh.set(private);
    dh.pubkey()
        .try_into()
        .expect("an X25519 public key is 32 bytes")
}

/// A new key pair from the operating system's random source.
pub fn generate() -> std::io::Result<KeyPair> {
    let private = random_bytes::<KEY_BYTES>()?;
    Ok(KeyPair {
        public: public_of(&private),
        private,
    })
}

/// Where the public half of the key pair in `path` goes: `path.pub`.
pub fn public_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".pub");
    PathBuf::from(name)
}

/// The name a new public key gets unless one is given: this host's name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unnamed".into())
}

/// A key's name: one line of printable text, at most 64 characters.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.trim().is_empty()
        && name.chars().count() <= 64
        && !name.chars().any(char::is_control)
        && name.trim() == name;
    match ok {
        true => Ok(()),
        false => Err(format!(
            "name {name:?}: allowed: 1 to 64 printable characters, no control characters, no leading or trailing space"
        )),
    }
}

/// Writes a new key pair: `path` (the private key, mode 0600 from the start) and `path.pub`
/// (`<hex> <name>`, mode 0644: a public key is no secret). Neither file is ever overwritten;
/// nothing is written when either exists. Returns the key pair and the public file's path.
pub fn write_identity(path: &Path, name: &str) -> Result<(KeyPair, PathBuf), String> {
    let public = public_path(path);
    if public.exists() {
        return Err(format!(
            "{} already exists; allowed: a path whose FILE and FILE.pub are both new",
            public.display()
        ));
    }
    let keys = generate().map_err(|e| e.to_string())?;
    let private_text = format!(
        "# bytepath identity: the X25519 private key of {name}; keep it on this host only\n{}\n",
        to_hex(&keys.private)
    );
    create_new(path, 0o600, &private_text)?;
    let public_text = format!("{} {name}\n", to_hex(&keys.public));
    if let Err(e) = create_new(&public, 0o644, &public_text) {
        // Half a pair is no identity: the private file goes again.
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    Ok((keys, public))
}

fn create_new(path: &Path, mode: u32, text: &str) -> Result<(), String> {
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path);
    let mut file = created.map_err(|e| {
        format!(
            "{} cannot be created ({e}); allowed: a path to a new file",
            path.display()
        )
    })?;
    // The umask may have taken bits off `mode`; a public key must still be readable by all.
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .and_then(|()| file.write_all(text.as_bytes()))
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The key pair in a private key file (`--identity FILE`), refused when group or others may
/// read or write the file (the fix is named), or when it holds no key. `flag` names the
/// option in the message.
pub fn read_identity(flag: &str, path: &Path) -> Result<KeyPair, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("{flag} {}: cannot be read: {e}", path.display()))?;
    super::auth::private_enough(flag, path, &meta)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{flag} {}: cannot be read: {e}", path.display()))?;
    let mut lines = meaningful_lines(&text);
    let private = match (lines.next(), lines.next()) {
        (Some(line), None) => parse_key(line),
        _ => None,
    };
    let private = private.ok_or_else(|| {
        format!(
            "{flag} {}: not a private key file; allowed: a file `bytepath keygen --identity FILE` wrote (one line of 64 hex digits)",
            path.display()
        )
    })?;
    Ok(KeyPair {
        public: public_of(&private),
        private,
    })
}

/// A list of public keys (`--authorized-drivers`, `--trusted-servers`): lines `<hex> [name]`,
/// blank lines and `#` comments ignored; a key without a name is named by its fingerprint.
/// An empty list, a line that is no key, or a key twice is refused, naming the line.
pub fn read_key_list(flag: &str, path: &Path) -> Result<Vec<NamedKey>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{flag} {}: cannot be read: {e}", path.display()))?;
    parse_key_list(&text).map_err(|why| format!("{flag} {}: {why}", path.display()))
}

fn parse_key_list(text: &str) -> Result<Vec<NamedKey>, String> {
    let mut keys: Vec<NamedKey> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (hex, name) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let key = parse_key(hex).ok_or_else(|| {
            format!(
                "line {}: {:?} is not a public key; allowed: lines `<64 hex digits> [name]` as FILE.pub of `bytepath keygen --identity FILE` holds them",
                n + 1,
                super::escaped(hex)
            )
        })?;
        let name = match name.trim() {
            "" => fingerprint(&key),
            given => given.to_string(),
        };
        check_name(&name).map_err(|why| format!("line {}: {why}", n + 1))?;
        if let Some(twice) = find(&keys, &key) {
            return Err(format!(
                "line {}: the key of {} is listed twice; allowed: each key once",
                n + 1,
                twice.name
            ));
        }
        keys.push(NamedKey { key, name });
    }
    match keys.is_empty() {
        true => Err("no key in it; allowed: one or more lines `<64 hex digits> [name]`".into()),
        false => Ok(keys),
    }
}

/// The lines that are neither blank nor `#` comments, trimmed.
fn meaningful_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_written_identity_reads_back_as_the_same_key_pair_with_the_right_modes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host");
        let (keys, public) = write_identity(&path, "node-1").unwrap();
        assert_eq!(public, dir.path().join("host.pub"));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&path), mode(&public)), (0o600, 0o644));
        assert_eq!(read_identity("--identity", &path).unwrap(), keys);
        assert_eq!(public_of(&keys.private), keys.public);
        let listed = read_key_list("--trusted-servers", &public).unwrap();
        assert_eq!(
            listed,
            [NamedKey {
                key: keys.public,
                name: "node-1".into()
            }]
        );
        // Never overwritten: the second call fails and the first pair stays.
        assert!(write_identity(&path, "other")
            .unwrap_err()
            .contains("already exists"));
        assert_eq!(read_identity("--identity", &path).unwrap(), keys);
    }

    #[test]
    fn a_private_key_file_others_may_read_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host");
        write_identity(&path, "n").unwrap();
        // Others, not only the group: a file root owns may be read by its group (`auth`).
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let why = read_identity("--identity", &path).unwrap_err();
        assert!(why.contains("mode 0644"), "{why}");
        assert!(
            why.contains(&format!("chmod 600 {}", path.display())),
            "{why}"
        );
    }

    #[test]
    fn key_lists_take_names_comments_and_bare_keys_and_refuse_junk_and_repeats() {
        let (a, b) = (generate().unwrap().public, generate().unwrap().public);
        let text = format!(
            "# drivers\n\n{} laptop of ana\n  {}  \n",
            to_hex(&a),
            to_hex(&b)
        );
        let keys = parse_key_list(&text).unwrap();
        assert_eq!(keys[0].name, "laptop of ana");
        assert_eq!(keys[1].name, fingerprint(&b));
        assert_eq!(keys[1].name.len(), 16);
        let junk = parse_key_list("# x\nnot-a-key name\n").unwrap_err();
        assert!(junk.starts_with("line 2: "), "{junk}");
        let twice = format!("{} one\n{} two\n", to_hex(&a), to_hex(&a));
        assert!(parse_key_list(&twice).unwrap_err().contains("listed twice"));
        assert!(parse_key_list("# only comments\n")
            .unwrap_err()
            .contains("no key"));
    }

    #[test]
    fn names_with_control_characters_are_refused() {
        assert!(check_name("node-1.example").is_ok());
        assert!(check_name("a\u{1b}[2Jb").is_err());
        assert!(check_name("").is_err());
        assert!(check_name(&"x".repeat(65)).is_err());
    }

    #[test]
    fn the_public_key_is_x25519_of_the_private_one() {
        // RFC 7748 section 6.1: Alice's private key and public key.
        let private =
            parse_key("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a").unwrap();
        let public =
            parse_key("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a").unwrap();
        assert_eq!(public_of(&private), public);
    }
}
