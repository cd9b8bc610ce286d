//! `probe --canary`: the flag that asks the probe for the canary alone, declared once here and
//! flattened into `probe`.
use clap::Args;

#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct CanaryArgs {
    /// Measure only the canary (tens of milliseconds: getpid cost, a memcpy beyond the caches,
    /// a 64 B pipe round trip on one CPU and across two), the figures every visiting study
    /// records at the start of each round; run it before and after a change of the machine.
    #[arg(long)]
    pub canary: bool,
    /// A study's round (hidden): the canary on these CPUs (the first, and the second for the
    /// cross-CPU round trip), printed as one JSON line, so that each round's canary is taken
    /// in a process of its own (probe::canary_process).
    #[arg(long, hide = true, value_name = "CPUS")]
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub canary_child: Option<String>,
}
