//! `bytepath server --insecure`: the flag that runs the control channel without a token.
use clap::Args;

#[derive(Debug, Args)]
pub struct SecurityArgs {
    /// Run without a token: the control channel is neither authenticated nor encrypted, and
    /// anyone who reaches the port may run tests. Only on a loopback --bind and without
    /// --allow-peers; a warning is printed at start and on every session.
    #[arg(long)]
    pub insecure: bool,
}
