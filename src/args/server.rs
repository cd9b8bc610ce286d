//! `bytepath server`'s flags -> its `ServerConfig`: where it listens, its token and the limits
//! it holds every client to.
use crate::cli::{ServerArgs, ServerIdentityArgs};
use crate::config::{parse_bytes, parse_duration, parse_message_size, parse_threads};
use crate::error::{bad, ConfigError};
use crate::remote::allow::{AllowPeers, PeerPorts};
use crate::remote::identity::ServerIdentity;
use crate::remote::server::{Limits, ServerConfig};

/// A `bytepath server` command line, checked.
pub fn server_config(args: &ServerArgs) -> Result<ServerConfig, ConfigError> {
    let bind = args.bind.trim().parse().map_err(|_| {
        bad(format!(
            "--bind {:?}: allowed: an IPv4 or IPv6 address such as 127.0.0.1 or 0.0.0.0",
            args.bind
        ))
    })?;
    let port = args.port.trim().parse::<u16>().map_err(|_| {
        bad(format!(
            "--port {:?}: allowed: 0 (pick a free port) to 65535",
            args.port
        ))
    })?;
    let max_threads = parse_threads("--max-threads", &args.max_threads)?;
    let max_message_size = parse_message_size("--max-message-size", &args.max_message_size)?;
    let max_bytes = match &args.max_bytes {
        Some(text) => Some(size_above_zero("--max-bytes", text, "10G")?),
        None => None,
    };
    let token = args.token.token()?;
    let identity = server_identity(&args.identity)?;
    let allow_peers = AllowPeers::parse(args.allow_peers.as_deref()).map_err(bad)?;
    let peer_ports = PeerPorts::parse(args.peer_ports.as_deref()).map_err(bad)?;
    if !peer_ports.is_default() && allow_peers.is_empty() {
        return Err(bad(format!(
            "--peer-ports {peer_ports} without --allow-peers: allowed: --peer-ports only with --allow-peers (without it no peer run is accepted)"
        )));
    }
    let config = ServerConfig {
        bind,
        port,
        token,
        identity,
        insecure: args.security.insecure,
        audit_json: args.log.log_format == crate::cli::log_format::LogFormat::Json,
        limits: Limits {
            max_threads,
            max_duration: parse_duration("--max-duration", &args.max_duration, false)?,
            max_message_size,
            max_bytes,
            max_file_size: size_above_zero("--max-file-size", &args.max_file_size, "4G")?,
            max_clients: max_clients(&args.max_clients)?,
        },
        timeout: parse_duration("--timeout", &args.timeout, false)?,
        allow_peers,
        peer_ports,
        health_port: super::health::health_port(&args.health)?,
    };
    // Last: every flag's own error comes before the question of the token.
    check_insecure(&config)?;
    Ok(config)
}

/// A byte limit above 0 (`--max-bytes`, `--max-file-size`); `example` ends the allowed text.
fn size_above_zero(flag: &str, text: &str, example: &str) -> Result<u64, ConfigError> {
    parse_bytes(text).filter(|&b| b > 0).ok_or_else(|| {
        bad(format!(
            "{flag} {text:?}: allowed: a size above 0 such as 64M or {example}"
        ))
    })
}

/// `--max-clients`: clients served at once, at least one.
fn max_clients(text: &str) -> Result<usize, ConfigError> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(bad(format!(
            "--max-clients {text:?}: allowed: a whole number above 0"
        ))),
    }
}

/// `--identity` with `--authorized-drivers`: the server's key pair (its file readable by its
/// owner only) and the driver keys it takes; one without the other is refused (a server that
/// proves its key but takes any driver would be open to anyone without a token).
fn server_identity(args: &ServerIdentityArgs) -> Result<Option<ServerIdentity>, ConfigError> {
    use crate::remote::identity::{read_identity, read_key_list};
    match (&args.identity, &args.authorized_drivers) {
        (None, None) => Ok(None),
        (Some(identity), Some(drivers)) => Ok(Some(ServerIdentity {
            keys: read_identity("--identity", identity).map_err(bad)?,
            authorized_drivers: read_key_list("--authorized-drivers", drivers).map_err(bad)?,
        })),
        (Some(_), None) => Err(bad(
            "--identity without --authorized-drivers: allowed: both (the driver keys that may drive this server, each driver's FILE.pub), or neither",
        )),
        (None, Some(_)) => Err(bad(
            "--authorized-drivers without --identity: allowed: both (this server's key, from `bytepath keygen --identity FILE`), or neither",
        )),
    }
}

/// A server without a token or an identity only when asked with `--insecure`, on a loopback
/// address, without `--allow-peers`; and never both.
fn check_insecure(config: &ServerConfig) -> Result<(), ConfigError> {
    let bind = config.bind;
    let secured = config.token.is_some() || config.identity.is_some();
    match (config.insecure, secured) {
        (false, true) if config.token.is_none() && !config.allow_peers.is_empty() => Err(bad(
            "--allow-peers with --identity but no --token-file: allowed: --allow-peers with --token-file (a peer run proves the shared token to the other server)",
        )),
        (false, true) => Ok(()),
        (true, true) => Err(bad(
            "--insecure with --token-file or --identity: allowed: one of them (a token or an identity secures the channel)",
        )),
        (false, false) => Err(bad(
            "no --token-file: allowed: --token-file FILE (make one with `bytepath keygen FILE`), --identity FILE with --authorized-drivers FILE (`bytepath keygen --identity FILE`), or --insecure on a loopback --bind for a test on one host",
        )),
        (true, false) if !bind.is_loopback() => Err(bad(format!(
            "--insecure --bind {bind}: allowed: --insecure only on a loopback address (127.0.0.1, ::1); give --token-file to listen on {bind}"
        ))),
        (true, false) if !config.allow_peers.is_empty() => Err(bad(
            "--insecure with --allow-peers: allowed: --allow-peers only with --token-file (an unauthenticated server must not send traffic to other hosts)",
        )),
        (true, false) => Ok(()),
    }
}
