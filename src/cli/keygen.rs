//! `bytepath keygen`: the flags of the command that writes a strong shared token, or with
//! `--identity` a host's key pair.
use clap::{ArgGroup, Args};

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("what").required(true).args(["path", "identity"])))]
pub struct KeygenArgs {
    /// The token file to create (mode 0600; an existing file is never overwritten). Hand the
    /// same file to `server --token-file` and to the driver's `--token-file`.
    pub path: Option<std::path::PathBuf>,
    /// Instead of a token: write this host's X25519 key pair, FILE (the private key, mode
    /// 0600) and FILE.pub (`<hex> <name>`, the line other hosts list in --authorized-drivers
    /// or --trusted-servers). Neither file is ever overwritten.
    #[arg(long, value_name = "FILE")]
    pub identity: Option<std::path::PathBuf>,
    /// With --identity: the name FILE.pub gives the key (default: this host's name).
    #[arg(long, requires = "identity")]
    pub name: Option<String>,
}
