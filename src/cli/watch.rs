//! The flags with which a visiting study watches the machine (sweep, ipc, servers), declared
//! once here and flattened into each.
use clap::Args;

#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct WatchArgs {
    /// A visit during which other processes (and steal) used more than this share of the
    /// run's CPUs is marked disturbed and made once more at the end of its round: 10% or 10 (both
    /// percent, above 0 up to 100; default 10%; 100% never marks one).
    #[arg(long, env = "BYTEPATH_QUIET_THRESHOLD")]
    pub quiet_threshold: Option<String>,
    /// Before the first round, wait until the canary is stable and others use less than the
    /// quiet threshold for a few seconds: on (default) or off. The environment variable
    /// serves scripts and test suites that run many short studies.
    #[arg(long, env = "BYTEPATH_SETTLE")]
    pub settle: Option<String>,
    /// The longest --settle waits before starting anyway, e.g. 30s (default) or 5s.
    #[arg(long)]
    pub settle_limit: Option<String>,
}
