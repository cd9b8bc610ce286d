//! `run --bidir` (clap only).
use clap::Args;

#[derive(Debug, Args, Default, serde::Serialize, serde::Deserialize)]
pub struct BidirArgs {
    /// With --pattern stream over tcp or unix: every flow carries data both ways at once, each
    /// side sending and receiving on threads of its own; the record gives each direction.
    #[arg(long)]
    pub bidir: bool,
}
