//! How a side's copy share changes between the smallest and the largest profiled size, tested
//! on batch means: each profiled window's samples cut into time blocks
//! (`measure::profile::batches`), the block shares' mean and spread standing in for repeated
//! visits. Blocks of one window are still correlated in time, so the spread is widened by the
//! lag-1 autocorrelation of the block shares (variance × (1 + ρ)/(1 − ρ), ρ corrected for the
//! low bias of a short series and clamped to [0, 0.95]) and ρ is stated beside the verdict. The
//! change is the ratio of the two mean shares, on the log scale by the delta method with
//! Welch–Satterthwaite degrees of freedom, judged in three states with the other sides' and
//! series' changes as one Holm family.
use crate::stats::verdict::{describe, judge, Correction, Family, LogEstimate, DEFAULT_MARGIN};

/// One window's copy share from its time blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockMeans {
    pub mean: f64,
    /// Variance of the mean, widened for autocorrelation.
    pub var_mean: f64,
    /// Lag-1 autocorrelation of the block shares, as measured (not clamped).
    pub rho: f64,
    pub blocks: usize,
    /// Blocks' worth of independent information after the autocorrelation.
    pub n_effective: f64,
}

/// The block means of `shares`, or `None` with fewer than four blocks.
pub fn block_means(shares: &[f64]) -> Option<BlockMeans> {
    let n = shares.len();
    if n < crate::measure::profile::batches::MIN_BLOCKS {
        return None;
    }
    let mean = shares.iter().sum::<f64>() / n as f64;
    let ss: f64 = shares.iter().map(|s| (s - mean).powi(2)).sum();
    let var = ss / (n - 1) as f64;
    let rho = match ss > 0.0 {
        true => {
            shares
                .windows(2)
                .map(|w| (w[0] - mean) * (w[1] - mean))
                .sum::<f64>()
                / ss
        }
        false => 0.0,
    };
    // The lag-1 estimate of a short series reads low: corrected as the sweep's rounds are.
    let r = crate::stats::visits::corrected_lag1(rho, n as f64);
    let inflation = (1.0 + r) / (1.0 - r);
    Some(BlockMeans {
        mean,
        var_mean: var / n as f64 * inflation,
        rho,
        blocks: n,
        n_effective: n as f64 / inflation,
    })
}

/// The change from `from` to `to` as a log ratio of mean shares, or `None` where a mean
/// share is 0 (no copy samples: a ratio of nothing).
pub fn change(from: &BlockMeans, to: &BlockMeans) -> Option<LogEstimate> {
    if from.mean <= 0.0 || to.mean <= 0.0 {
        return None;
    }
    let (a, b) = (
        from.var_mean / from.mean.powi(2),
        to.var_mean / to.mean.powi(2),
    );
    let (da, db) = (
        (from.n_effective - 1.0).max(1.0),
        (to.n_effective - 1.0).max(1.0),
    );
    let df = match a + b > 0.0 {
        true => (a + b).powi(2) / (a * a / da + b * b / db),
        false => da + db,
    };
    Some(LogEstimate {
        log_ratio: (to.mean / from.mean).ln(),
        se: (a + b).sqrt(),
        df: df.max(1.0),
        // Time blocks with their own effective size, not pairs.
        pairs: None,
    })
}

/// One side of one series: its time-block shares at the smallest and the largest size.
#[derive(Debug, Clone, PartialEq)]
pub struct SideWindows {
    pub series: String,
    pub side: usize,
    pub from: Vec<f64>,
    pub to: Vec<f64>,
    /// The sizes, as the text names them.
    pub from_at: String,
    pub to_at: String,
}

/// Every side's change, judged as one Holm family.
#[derive(Debug, Clone)]
pub struct Changes {
    sides: Vec<SideWindows>,
    means: Vec<(Option<BlockMeans>, Option<BlockMeans>)>,
    /// Per side, its index in `family` (none where it could not be tested).
    tested: Vec<Option<usize>>,
    family: Family,
}

impl Changes {
    pub fn judge(sides: Vec<SideWindows>) -> Changes {
        let means: Vec<_> = sides
            .iter()
            .map(|s| (block_means(&s.from), block_means(&s.to)))
            .collect();
        let mut estimates = Vec::new();
        let tested = means
            .iter()
            .map(|m| match m {
                (Some(a), Some(b)) => change(a, b).map(|e| {
                    estimates.push(e);
                    estimates.len() - 1
                }),
                _ => None,
            })
            .collect();
        let family = judge(&estimates, Correction::Holm, DEFAULT_MARGIN);
        Changes {
            sides,
            means,
            tested,
            family,
        }
    }

    /// The change of `series`' side `side` in words with its figures, and its state alone
    /// ("rises", "falls", "equivalent", "undecided", "not tested").
    pub fn text(&self, series: &str, side: usize) -> (String, &'static str) {
        let Some(i) = self
            .sides
            .iter()
            .position(|s| s.series == series && s.side == side)
        else {
            return ("a change not tested".into(), "not tested");
        };
        let s = &self.sides[i];
        let (Some(a), Some(b)) = self.means[i] else {
            return (
                "a change not tested: the profiles hold no time blocks (too few samples, or recorded before blocks were kept)".into(),
                "not tested",
            );
        };
        let Some(k) = self.tested[i] else {
            let at = if a.mean <= 0.0 { &s.from_at } else { &s.to_at };
            return (
                format!("a change not tested: no copy samples at {at}"),
                "not tested",
            );
        };
        let j = &self.family.judged[k];
        let state = match j.state {
            crate::stats::verdict::Verdict::Beats => "rises",
            crate::stats::verdict::Verdict::Slower => "falls",
            crate::stats::verdict::Verdict::Equivalent => "equivalent",
            crate::stats::verdict::Verdict::Undecided => "undecided",
        };
        let text = format!(
            "{} ({} and {} time blocks; lag-1 autocorrelation of the block shares {:.2} and {:.2})",
            describe(j, self.family.margin, "rises", "falls"),
            a.blocks,
            b.blocks,
            a.rho,
            b.rho
        );
        (text, state)
    }

    /// How the changes were tested, for the answer's basis.
    pub fn method(&self) -> String {
        format!(
            "a change of copy share from the smallest to the largest size is tested on batch \
             means: each profiled window cut into up to {} time blocks (each thread's samples in \
             the order its ring kept them), the ratio of the two mean block shares with its \
             spread widened by the blocks' lag-1 autocorrelation (variance × (1 + ρ)/(1 − ρ), ρ \
             corrected for a short series' low bias); rises/falls when the interval excludes 1, \
             equivalent within ±{} by two one-sided tests, else undecided; {}",
            crate::measure::profile::batches::BLOCKS,
            crate::stats::verdict::percent(self.family.margin),
            self.family.control()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::verdict::{judge, Correction, Verdict};

    #[test]
    fn independent_blocks_give_the_plain_standard_error() {
        // 0.1, 0.3 alternating: mean 0.2, s² = 0.1/9; ρ = −0.9 (clamped to 0 for the
        // correction, stated as measured).
        let shares = [0.1, 0.3, 0.1, 0.3, 0.1, 0.3, 0.1, 0.3, 0.1, 0.3];
        let m = block_means(&shares).unwrap();
        assert!((m.mean - 0.2).abs() < 1e-12);
        assert!((m.var_mean - 0.01 / 9.0).abs() < 1e-12, "{m:?}");
        assert!((m.rho + 0.9).abs() < 1e-12 && m.n_effective == 10.0);
        assert!(block_means(&shares[..3]).is_none());
    }

    #[test]
    fn correlated_blocks_count_for_fewer() {
        // A slow drift: neighbours alike, ρ high, the effective blocks far below ten.
        let shares = [0.10, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18, 0.19];
        let m = block_means(&shares).unwrap();
        assert!(m.rho > 0.6 && m.n_effective < 3.0, "{m:?}");
    }

    #[test]
    fn a_clear_rise_rises_and_two_windows_alike_do_not() {
        let low = [0.10, 0.12, 0.09, 0.11, 0.10, 0.12, 0.09, 0.11, 0.10, 0.11];
        let high: Vec<f64> = low.iter().rev().map(|s| s * 2.5).collect();
        let (a, b) = (block_means(&low).unwrap(), block_means(&high).unwrap());
        let e = change(&a, &b).unwrap();
        assert!((e.log_ratio.exp() - 2.5).abs() < 1e-9);
        let same = change(&a, &block_means(&low).unwrap()).unwrap();
        let f = judge(&[e, same], Correction::Holm, 0.05);
        assert_eq!(f.judged[0].state, Verdict::Beats, "{f:?}");
        assert_ne!(f.judged[1].state, Verdict::Beats);
        let none = block_means(&[0.0; 5]).unwrap();
        assert!(change(&none, &a).is_none(), "no copy samples: no ratio");
    }

    /// The share of 1,000 pairs of equal windows (blocks from an AR(1) process with `phi`)
    /// in which a change is claimed.
    fn claim_rate(phi: f64, seed: u64) -> f64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let window = |rng: &mut fastrand::Rng| -> Vec<f64> {
            let mut e = 0.0;
            (0..10)
                .map(|_| {
                    let z = crate::stats::draw::standard_normal(rng);
                    e = phi * e + 0.02 * z;
                    0.2 + e
                })
                .collect()
        };
        let claims = (0..1000)
            .filter(|_| {
                let (a, b) = (window(&mut rng), window(&mut rng));
                let e = change(&block_means(&a).unwrap(), &block_means(&b).unwrap()).unwrap();
                let j = judge(&[e], Correction::Holm, 0.05).judged[0];
                matches!(j.state, Verdict::Beats | Verdict::Slower)
            })
            .count();
        claims as f64 / 1000.0
    }

    #[test]
    fn among_equal_windows_a_change_is_claimed_in_at_most_five_percent() {
        // Two binomial standard errors of a 5 % rate over 1,000 studies: 1.4 points.
        for (phi, seed) in [(0.0, 44), (0.3, 45)] {
            let rate = claim_rate(phi, seed);
            println!("equal windows, block autocorrelation {phi}: a change claimed in {rate:.3}");
            assert!(rate <= 0.064, "φ = {phi}: {rate}");
        }
    }
}
