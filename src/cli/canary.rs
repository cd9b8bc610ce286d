//! `probe --canary`: the flag that asks the probe for the canary alone, declared once here and
//! flattened into `probe`.
use clap::Args;

#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct CanaryArgs {
    /// Measure only the canary (tens of milliseconds: getpid cost, a memcpy beyond the caches,
    /// a 64 B pipe round trip on one CPU and across two), the figures every visiting study
    /// records at the start of each round; run it before and after a change of the machine.
    #[arg(long)]
    pub canary: bool,
}
