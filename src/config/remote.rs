//! Where `--remote` runs the other side of every flow, as plain values: the server's address
//! (`Target`), the token to prove there and `--reverse`. `args` reads the token file and hands
//! these down; `remote` opens sessions to them.
use super::bad;
use super::network::Network;
use crate::error::ConfigError;
use crate::transport::Transport;

/// The port `bytepath server` listens on unless `--port` says otherwise.
pub const DEFAULT_PORT: u16 = 5301;

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub port: u16,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// Where `--remote` runs the other side, and the token to prove there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRun {
    pub target: Target,
    pub token: Option<Vec<u8>>,
    /// `--identity` with `--trusted-servers`: this driver's key and the server keys it trusts.
    pub identity: Option<DriverIdentity>,
    /// `--reverse`: this host sends and the server receives and measures (`run`, stream only).
    pub reverse: bool,
}

/// Bytes of an X25519 key, private or public.
pub const KEY_BYTES: usize = 32;

/// A host's static X25519 key pair (`--identity FILE`). Its `Debug` leaves the private half
/// out, so no log or panic message can print it.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyPair {
    pub private: [u8; KEY_BYTES],
    pub public: [u8; KEY_BYTES],
}

impl std::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyPair")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

/// Another host's public key and the name a list gives it (`--authorized-drivers`,
/// `--trusted-servers`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedKey {
    pub key: [u8; KEY_BYTES],
    pub name: String,
}

/// A driver's identity: its key pair, and the server keys it trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverIdentity {
    pub keys: KeyPair,
    pub trusted_servers: Vec<NamedKey>,
}

/// Recorded as the server's address, so a study states where it ran; the token never is.
impl serde::Serialize for RemoteRun {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.target.to_string())
    }
}

/// `--remote HOST[:PORT]`: a host name, an IPv4 address, or an IPv6 address (in brackets
/// when a port follows).
pub fn parse_remote(text: &str) -> Result<Target, ConfigError> {
    parse_target("--remote", text)
}

/// `HOST[:PORT]` as `--remote` takes it, its refusal naming the value as `name` (a flag, or
/// `host` for an entry of mesh's host lists).
pub fn parse_target(name: &str, text: &str) -> Result<Target, ConfigError> {
    let bad_target = || {
        bad(format!(
            "{name} {text:?}: allowed: HOST or HOST:PORT (IPv6 as [ADDR]:PORT), port 1-65535"
        ))
    };
    let text = text.trim();
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad_target)?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':').ok_or_else(bad_target)?)),
        }
    } else if text.matches(':').count() == 1 {
        let (host, port) = text.split_once(':').expect("one colon");
        (host, Some(port))
    } else {
        (text, None)
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(bad_target)?,
        None => DEFAULT_PORT,
    };
    if host.is_empty() || host.chars().any(char::is_whitespace) {
        return Err(bad_target());
    }
    Ok(Target {
        host: host.to_string(),
        port,
    })
}

/// Whether `transport` can run in this placement, or why not: the server carries tcp and
/// udp only; a veth pair carries IP sockets only.
pub fn carries(network: &Network, remote: bool, transport: Transport) -> Result<(), String> {
    if remote {
        remote_carries(transport)?;
    }
    network.carries(transport)
}

/// Whether `bytepath server` can carry `transport` to another host, or why not: only IP
/// sockets leave the host, and the server carries tcp and udp.
pub fn remote_carries(transport: Transport) -> Result<(), String> {
    match transport {
        Transport::Tcp | Transport::Udp => Ok(()),
        _ => Err(format!(
            "{} cannot reach another host (it never leaves this machine's kernel); bytepath server carries tcp and udp only",
            transport.name()
        )),
    }
}

/// Zero copy over udp needs SO_ZEROCOPY on both ends' udp sockets, which neither a server's nor
/// a client's udp flows are set up with: `run --remote` and the server refuse it alike.
pub const ZEROCOPY_UDP_REFUSAL: &str = "over udp with --remote: zero copy needs SO_ZEROCOPY on the udp sockets, which the server's and the client's udp flows are not set up with; run it on this host, or over tcp";
