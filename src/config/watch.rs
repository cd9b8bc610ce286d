//! How a visiting study watches the machine: the share of the run's CPUs others may use
//! before a visit counts as disturbed (and is made again), and whether and how long to wait
//! for a quiet machine before the first round.
use std::time::Duration;

/// Default `--quiet-threshold`: others may use a tenth of the run's CPUs.
pub const DEFAULT_QUIET_THRESHOLD: f64 = 0.10;
/// Default `--settle-limit`.
pub const DEFAULT_SETTLE_LIMIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq)]
pub struct Watch {
    /// Others' CPU use (plus steal) above this share of the run's CPUs marks a visit disturbed.
    pub quiet_threshold: f64,
    /// `None` with `--settle off`; otherwise the longest wait before the first round.
    pub settle: Option<Duration>,
}

impl Default for Watch {
    fn default() -> Watch {
        Watch {
            quiet_threshold: DEFAULT_QUIET_THRESHOLD,
            settle: Some(DEFAULT_SETTLE_LIMIT),
        }
    }
}

/// The CPUs a run with `flows` flows pinned by `pinning` uses, out of `allowed`: what the
/// quiet threshold is a share of. Unpinned runs may use every allowed CPU.
pub fn run_cpus(pinning: &super::Pinning, flows: usize, allowed: &[usize]) -> Vec<usize> {
    if allowed.is_empty() || matches!(pinning, super::Pinning::Unpinned) {
        return allowed.to_vec();
    }
    let mut cpus: Vec<usize> = (0..flows.max(1))
        .map(|f| pinning.placement(f, allowed))
        .flat_map(|p| [p.sender_cpu, p.receiver_cpu])
        .flatten()
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Pinning;

    #[test]
    fn the_run_cpus_follow_the_pinning() {
        assert_eq!(run_cpus(&Pinning::Same, 1, &[2, 3]), vec![2]);
        assert_eq!(run_cpus(&Pinning::Cross, 1, &[2, 3]), vec![2, 3]);
        assert_eq!(run_cpus(&Pinning::Unpinned, 4, &[0, 1, 2]), vec![0, 1, 2]);
        assert_eq!(run_cpus(&Pinning::List(vec![5]), 2, &[0, 1]), vec![5]);
    }
}
