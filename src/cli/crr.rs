//! `--pattern crr`'s own flags (clap only), flattened into `run`.
use clap::Args;

#[derive(Debug, Args, Default, serde::Serialize, serde::Deserialize)]
pub struct CrrArgs {
    /// With --pattern crr over tcp: set SO_LINGER 0 on each client socket, so its close sends
    /// a reset and leaves no TIME_WAIT (by default the client closes with a FIN and its port
    /// stays in TIME_WAIT; the record counts them at the end).
    #[arg(long)]
    pub linger_zero: bool,
}

/// The spec's crr options from the flags (checked against the pattern in `spec::crr::check`).
pub fn crr_options(args: &CrrArgs) -> crate::config::crr::CrrOptions {
    crate::config::crr::CrrOptions {
        linger_zero: args.linger_zero,
    }
}
