//! The flags of identities per host (`bytepath keygen --identity` writes a key pair): the
//! server's own key and the driver keys it takes, the driver's own key and the server keys it
//! trusts. Without them the shared token alone secures the channel, as before.
use clap::Args;
use std::path::PathBuf;

/// `bytepath server --identity --authorized-drivers`.
#[derive(Debug, Clone, Default, Args)]
pub struct ServerIdentityArgs {
    /// This server's private key file (`bytepath keygen --identity FILE` writes it; mode 0600,
    /// refused when group or others may read it). Its public key is announced in the hello
    /// and proved in the handshake (Noise IK); drivers check it against their
    /// --trusted-servers. Needs --authorized-drivers.
    #[arg(long = "identity", value_name = "FILE")]
    pub identity: Option<PathBuf>,
    /// The driver public keys that may drive this server: lines `<64 hex digits> [name]` (a
    /// driver's FILE.pub), blank lines and # comments ignored; the audit line names the key
    /// that drove each session. Needs --identity; with --token-file too, a driver must hold
    /// both.
    #[arg(long, value_name = "FILE")]
    pub authorized_drivers: Option<PathBuf>,
}

/// The driver's `--identity --trusted-servers` (with `--remote`).
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct DriverIdentityArgs {
    /// With --remote: this driver's private key file (`bytepath keygen --identity FILE`; mode
    /// 0600), proved to a server started with --identity, which must list its FILE.pub in
    /// --authorized-drivers. Needs --trusted-servers.
    #[arg(long = "identity", value_name = "FILE")]
    #[serde(default)]
    pub identity: Option<PathBuf>,
    /// With --identity: the server public keys this driver trusts, lines `<64 hex digits>
    /// [name]` (each server's FILE.pub); a server whose hello announces another key is refused
    /// before any request.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub trusted_servers: Option<PathBuf>,
}
