//! `--under-load N` on run and sweep (clap only; the bound and the refusals are
//! `config::under_load`'s).
use crate::config::under_load::parse_under_load;
use crate::error::ConfigError;
use clap::Args;

#[derive(Debug, Args, Default, serde::Serialize, serde::Deserialize)]
pub struct UnderLoadArgs {
    /// With --pattern rr over tcp: N bulk stream flows (1 to 64) of the same mechanism, 64 KiB
    /// messages, run beside the measured rr flow (with --pin on its CPUs), so the latency says
    /// what the copy path costs others. A run measures 8 rounds of a visit without and a visit
    /// with the load, back to back (order alternating), --duration split evenly over the 16
    /// visits, each after its own --warmup (default 200ms), and states the ratio with/without and its verdict;
    /// a sweep visits each rr point with and without the load back to back in every round and
    /// answers per mechanism.
    #[arg(long, value_name = "N")]
    pub under_load: Option<String>,
}

impl UnderLoadArgs {
    /// The load flows asked for, or `None` without --under-load.
    pub fn flows(&self) -> Result<Option<usize>, ConfigError> {
        self.under_load.as_deref().map(parse_under_load).transpose()
    }
}
