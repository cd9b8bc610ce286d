//! `bytepath keygen`: the flags of the command that writes a strong shared token.
use clap::Args;

#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// The token file to create (mode 0600; an existing file is never overwritten). Hand the
    /// same file to `server --token-file` and to the driver's `--token-file`.
    pub path: std::path::PathBuf,
}
