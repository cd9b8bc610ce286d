//! Remote placement: `bytepath server` on one host runs the side of every flow the statistics
//! do not follow, `bytepath run --remote HOST[:PORT]` on the other drives the run and measures.
//! `protocol` is the versioned, size-bounded control protocol; `server` and `client` its two
//! ends. Data connections are plain TCP (or, for udp, connected UDP sockets joined by a hello
//! datagram: `udp`), apart from the control connection, and carry nothing but the session
//! cookie and flow index before the engine's bytes. For `bytepath mesh` a server also runs
//! the client's half toward another server when a driver asks (`server::peer_run`, `client::peer`),
//! only toward the addresses its `--allow-peers` holds (`allow`).
pub mod allow;
pub mod auth;
pub mod channel;
pub mod client;
pub(crate) mod frame;
pub(crate) mod identity;
pub mod protocol;
pub mod server;
mod session;
pub mod udp;

use crate::config::Pattern;
use crate::engine::worker::Role;
use crate::transport::SocketOptions;
use protocol::{COOKIE_BYTES, DATA_TAG_BYTES};
use std::io;
use std::net::TcpStream;

pub use crate::config::remote::DEFAULT_PORT;

/// The capability a server announces when it can run the measured side (`run --reverse`).
pub const REVERSE: &str = "reverse";
/// The capability a server announces when it serves `file --remote`.
pub const FILE: &str = "file";

/// The capability a server announces when it can run `bytepath servers` models.
pub const SERVERS: &str = "servers";
/// The capability a server announces when it carries udp flows (`run --remote --transport udp`).
pub const UDP: &str = "udp";

/// The capability a server announces when it runs points toward other servers for
/// `bytepath mesh` (whether this one allows any is its `--allow-peers`, checked per request).
pub const PEERS: &str = "peers";

/// The capability a server announces when it samples its side for `--profile`.
pub const PROFILE: &str = "profile";

/// The capability a server announces when it measures the canary on request (issue 25).
pub const CANARY: &str = "canary";

/// The capability a server announces when it sets `--rcvbuf` / `--sndbuf` on its data sockets.
pub const BUFFERS: &str = "buffers";

/// The capability a server announces when it samples its side's TCP_INFO per slice.
pub const TCP_INFO: &str = "tcp_info";

/// What this build can run on the server's side, as the hellos announce it.
pub fn capabilities() -> Vec<String> {
    [
        "tcp", UDP, "stream", "rr", "verify", REVERSE, FILE, SERVERS, PEERS, PROFILE, CANARY,
        BUFFERS, TCP_INFO,
    ]
    .map(String::from)
    .to_vec()
}

/// The side the server runs: the one the statistics do not follow (stream sender, rr server),
/// so the measured side, its clock and the statistics stay with the client; with `reverse`
/// (stream only) the measured one, the receiver, whose slices then travel back.
pub fn remote_role(pattern: Pattern, reverse: bool) -> Role {
    if reverse {
        crate::engine::measured_role(pattern)
    } else {
        crate::engine::processes::child_role(pattern)
    }
}

/// The side the client runs: the other one.
pub fn local_role(pattern: Pattern, reverse: bool) -> Role {
    remote_role(pattern, !reverse)
}

/// The run's socket options for the end of a data connection that plays `role`.
pub fn apply_options(stream: &TcpStream, options: SocketOptions, role: Role) -> io::Result<()> {
    let zerocopy = match role {
        Role::Sender => options.zerocopy_sender,
        Role::Receiver => options.zerocopy_receiver,
    };
    crate::transport::tcp::apply(stream, options.nodelay, zerocopy)
}

/// What a flow presents first: the session cookie, then its flow index (u32 BE).
pub fn data_tag(cookie: &[u8], flow: usize) -> [u8; DATA_TAG_BYTES] {
    let mut tag = [0u8; DATA_TAG_BYTES];
    tag[..COOKIE_BYTES].copy_from_slice(&cookie[..COOKIE_BYTES]);
    tag[COOKIE_BYTES..].copy_from_slice(&(flow as u32).to_be_bytes());
    tag
}

/// The flow index `tag` claims, if it presents `cookie` and names one of `threads` flows.
pub fn tag_flow(tag: &[u8], cookie: &[u8], threads: usize) -> Option<usize> {
    if tag.len() != DATA_TAG_BYTES || cookie.len() != COOKIE_BYTES {
        return None;
    }
    // A constant-time comparison: a stray must not learn the cookie byte by byte.
    let differs = tag[..COOKIE_BYTES]
        .iter()
        .zip(cookie)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    let flow = u32::from_be_bytes(tag[COOKIE_BYTES..].try_into().ok()?) as usize;
    (differs == 0 && flow < threads).then_some(flow)
}

/// Control characters (newlines, escape sequences) as Rust escapes; the rest as it is.
pub fn escaped(text: &str) -> String {
    text.chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}
