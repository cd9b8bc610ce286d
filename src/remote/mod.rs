//! Remote placement: `bytepath server` on one host runs the side of every flow the statistics
//! do not follow, `bytepath run --remote HOST[:PORT]` on the other drives the run and measures.
//! `protocol` is the versioned, size-bounded control protocol; `server` and `client` its two
//! ends. Data connections are plain TCP, apart from the control connection, and carry nothing
//! but the session cookie and flow index before the engine's bytes.
pub mod client;
pub mod file_server;
pub mod protocol;
pub mod server;

use crate::config::Pattern;
use crate::engine::worker::Role;
use crate::sys::socket;
use crate::transport::SocketOptions;
use std::io;
use std::net::TcpStream;
use std::os::fd::AsFd;

/// The port `bytepath server` listens on unless `--port` says otherwise.
pub const DEFAULT_PORT: u16 = 5301;

/// The capability a server announces when it can run the measured side (`run --reverse`).
pub const REVERSE: &str = "reverse";
/// The capability a server announces when it serves `file --remote`.
pub const FILE: &str = "file";

/// The capability a server announces when it can run `bytepath servers` models.
pub const SERVERS: &str = "servers";

/// What this build can run on the server's side, as the hellos announce it.
pub fn capabilities() -> Vec<String> {
    ["tcp", "stream", "rr", "verify", REVERSE, FILE, SERVERS]
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
    stream.set_nodelay(options.nodelay)?;
    let zerocopy = match role {
        Role::Sender => options.zerocopy_sender,
        Role::Receiver => options.zerocopy_receiver,
    };
    if zerocopy {
        socket::enable_zerocopy(stream.as_fd()).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("SO_ZEROCOPY not supported on this socket: {e}"),
            )
        })?;
    }
    Ok(())
}
