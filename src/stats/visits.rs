//! Uncertainty that covers re-runs. A point measured in several short visits spread over a
//! study gets its interval from the visit means (between-visit variation, Student's t on
//! visits − 1 degrees of freedom): the regime changes of a shared VM, which last seconds and
//! fall between visits, are inside that variation. Comparisons of two mechanisms rest on the
//! per-round paired log-ratio (both visited back to back in each round), and comparisons of two
//! studies on Welch's t over log visit means. Ratios are taken on the log scale so that A/B and
//! B/A get mirror-image intervals and a multiplicative regime shift cancels in a pair.
//! Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time" (ISMM 2013), motivate the
//! levels; no overlap of two intervals is ever used as a test.
use super::{t_975, Summary};

/// How a visited point's interval is computed, as records and reports state it.
pub const VISIT_METHOD: &str =
    "mean of visit means; 95 % CI by Student's t on visits − 1 degrees of freedom";
/// How a paired comparison's interval is computed.
pub const PAIRED_METHOD: &str = "geometric mean of per-round ratios (mechanisms visited back to \
     back in each round, order alternating); 95 % CI by Student's t on the per-round log-ratios";
/// How `compare` judges a point of two studies.
pub const WELCH_METHOD: &str = "ratio of geometric means of the visit means; 95 % CI by Welch's \
     t on the log visit means of both studies";

/// Mean and 95 % interval of a point's visit means: independent values by construction, so no
/// autocorrelation correction. Needs at least two visits.
pub fn summarize_visits(values: &[f64]) -> Option<Summary> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let (mean, var) = mean_var(values);
    let stddev = var.sqrt();
    let half = t_975(n - 1) * stddev / (n as f64).sqrt();
    Some(Summary::around(n, mean, stddev, half, 0.0, n as f64))
}

/// A ratio (A/B, or new/old) with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RatioInterval {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// Pairs (paired) or the smaller of the two visit counts (Welch).
    pub n: usize,
    /// Degrees of freedom of the t quantile used.
    pub df: f64,
}

/// Which way a ratio's interval points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The whole interval is above 1.
    Higher,
    /// The whole interval is below 1.
    Lower,
    /// The interval includes 1: the two cannot be told apart.
    Indistinguishable,
}

impl RatioInterval {
    pub fn direction(&self) -> Direction {
        if self.low > 1.0 {
            Direction::Higher
        } else if self.high < 1.0 {
            Direction::Lower
        } else {
            Direction::Indistinguishable
        }
    }
}

/// The paired ratio of A over B from per-round pairs `(a, b)`: the geometric mean of a/b and
/// the interval of the mean log-ratio. Pairs with a non-positive value carry no ratio and are
/// left out; needs two usable pairs.
pub fn paired_ratio(pairs: &[(f64, f64)]) -> Option<RatioInterval> {
    let logs = log_ratios(pairs);
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let (mean, var) = mean_var(&logs);
    Some(log_interval(mean, var, n, n - 1))
}

/// ln(a/b) of each pair whose two values are positive and finite.
pub fn log_ratios(pairs: &[(f64, f64)]) -> Vec<f64> {
    pairs
        .iter()
        .filter(|(a, b)| *a > 0.0 && *b > 0.0 && a.is_finite() && b.is_finite())
        .map(|(a, b)| (a / b).ln())
        .collect()
}

/// The 95 % interval of a mean log-ratio over `n` pairs with variance `var` on `df` degrees
/// of freedom, as a ratio.
fn log_interval(mean: f64, var: f64, n: usize, df: usize) -> RatioInterval {
    let half = t_975(df) * (var / n as f64).sqrt();
    RatioInterval {
        ratio: mean.exp(),
        low: (mean - half).exp(),
        high: (mean + half).exp(),
        n,
        df: df as f64,
    }
}

/// The lag-1 autocorrelation of per-round log-ratios, pooled over the cells of one family: the
/// rounds of a study follow each other in time, and a machine's slow drift makes neighbouring
/// rounds alike, which the paired interval (rounds as independent) does not allow for.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RoundCorrelation {
    /// The pooled estimate as measured: the lag products of every cell's centred series over
    /// their pooled squares.
    pub measured: f64,
    /// The rounds per cell the bias correction counts: the harmonic mean of the cells' rounds,
    /// each weighted by its share of the pooled squares (a cell's estimate reads low by about
    /// (1 + 3ρ)/n, and the pooled one by that bias averaged with the pooled weights).
    pub rounds: f64,
    /// Cells pooled (those with at least `RHO_MIN_ROUNDS` rounds).
    pub cells: usize,
    /// The estimate corrected for its low bias ((n ρ̂ + 1)/(n − 3), Kendall 1954, as
    /// `analysis::profile_change` does) and clamped to [0, 0.95]: what intervals are widened by.
    pub rho: f64,
}

/// The fewest rounds a cell's series takes part in ρ with: the bias correction divides by
/// n − 3.
pub const RHO_MIN_ROUNDS: usize = 4;

impl RoundCorrelation {
    /// The variance factor (1 + ρ)/(1 − ρ) intervals are widened by.
    pub fn inflation(&self) -> f64 {
        (1.0 + self.rho) / (1.0 - self.rho)
    }

    /// "rounds' lag-1 ρ 0.12 (measured −0.05 over 24 cells of 16.0 rounds; intervals widened
    /// ×1.13)": how a family states it.
    pub fn text(&self) -> String {
        format!(
            "rounds' lag-1 autocorrelation ρ = {:.2} (measured {:.2} over {} cells of {:.1} rounds, bias-corrected, clamped to [0, 0.95]; intervals widened ×{:.2})",
            self.rho,
            self.measured,
            self.cells,
            self.rounds,
            self.inflation().sqrt()
        )
    }
}

/// A lag-1 autocorrelation `measured` over a series of `n`, corrected for a short series'
/// bias (E ρ̂ ≈ ρ − (1 + 3ρ)/n, Kendall 1954) by the estimate turned back, (nρ̂ + 1)/(n − 3),
/// and clamped to [0, 0.95] so that few values are not trusted too far.
pub fn corrected_lag1(measured: f64, n: f64) -> f64 {
    ((n * measured + 1.0) / (n - 3.0)).clamp(0.0, 0.95)
}

/// The pooled lag-1 autocorrelation of `series` (each cell's per-round log-ratios in round
/// order): each series centred on its own mean, the lag products summed over every cell and
/// divided by the pooled squares. `None` where no cell has `RHO_MIN_ROUNDS` rounds or every
/// series is flat.
pub fn pooled_lag1(series: &[Vec<f64>]) -> Option<RoundCorrelation> {
    let (mut products, mut squares, mut bias, mut cells) = (0.0, 0.0, 0.0, 0);
    for s in series.iter().filter(|s| s.len() >= RHO_MIN_ROUNDS) {
        let n = s.len() as f64;
        let mean = s.iter().sum::<f64>() / n;
        let ss: f64 = s.iter().map(|v| (v - mean).powi(2)).sum();
        products += s
            .windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum::<f64>();
        squares += ss;
        bias += ss / n;
        cells += 1;
    }
    if !(squares > 0.0 && squares.is_finite()) {
        return None;
    }
    let measured = products / squares;
    let rounds = squares / bias;
    let rho = corrected_lag1(measured, rounds);
    Some(RoundCorrelation {
        measured,
        rounds,
        cells,
        rho,
    })
}

/// new/old from two studies' visit means of one point: Welch's t on the log values (unequal
/// variances, Welch–Satterthwaite degrees of freedom, rounded down). Needs two positive visit
/// means on each side.
pub fn welch_ratio(new: &[f64], old: &[f64]) -> Option<RatioInterval> {
    let logs = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .filter(|x| **x > 0.0 && x.is_finite())
            .map(|x| x.ln())
            .collect()
    };
    let (a, b) = (logs(new), logs(old));
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(&a), mean_var(&b));
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se2 = sa + sb;
    let df = if se2 == 0.0 {
        (a.len() + b.len() - 2) as f64
    } else {
        se2 * se2
            / (sa * sa / (a.len() - 1) as f64 + sb * sb / (b.len() - 1) as f64)
                .max(f64::MIN_POSITIVE)
    };
    let half = t_975((df.floor() as usize).max(1)) * se2.sqrt();
    let diff = ma - mb;
    Some(RatioInterval {
        ratio: diff.exp(),
        low: (diff - half).exp(),
        high: (diff + half).exp(),
        n: a.len().min(b.len()),
        df,
    })
}

/// Mean and sample variance (n − 1); `values` holds at least two.
fn mean_var(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_visit_interval_uses_t_on_visits_minus_one() {
        let s = summarize_visits(&[10.0, 12.0, 14.0]).unwrap();
        // sd = 2, t(2) = 4.303, half = 4.303 * 2 / sqrt(3) = 4.9687
        assert_eq!(s.mean, 12.0);
        assert!((s.ci95_half_width - 4.9687).abs() < 1e-3, "{s:?}");
        assert_eq!((s.n, s.n_effective), (3, 3.0));
        assert!(summarize_visits(&[1.0]).is_none());
    }

    #[test]
    fn the_paired_ratio_on_a_hand_computed_example() {
        // Ratios 2, 2.2, 1.8 -> logs 0.693147, 0.788457, 0.587787; mean 0.689797,
        // sd 0.100372, half = 4.303 * 0.100372 / sqrt(3) = 0.249356.
        let r = paired_ratio(&[(20.0, 10.0), (22.0, 10.0), (9.0, 5.0)]).unwrap();
        assert!((r.ratio - 0.689797f64.exp()).abs() < 1e-4, "{r:?}");
        assert!(
            (r.low - (0.689797f64 - 0.249356).exp()).abs() < 1e-3,
            "{r:?}"
        );
        assert!(
            (r.high - (0.689797f64 + 0.249356).exp()).abs() < 1e-3,
            "{r:?}"
        );
        assert_eq!(r.direction(), Direction::Higher);
        assert_eq!((r.n, r.df), (3, 2.0));
    }

    #[test]
    fn a_ratio_whose_interval_includes_one_cannot_be_told_apart() {
        let r = paired_ratio(&[(11.0, 10.0), (9.5, 10.0), (10.4, 10.0)]).unwrap();
        assert!(r.low < 1.0 && r.high > 1.0, "{r:?}");
        assert_eq!(r.direction(), Direction::Indistinguishable);
        let lower = paired_ratio(&[(5.0, 10.0), (5.2, 10.0), (4.9, 10.0)]).unwrap();
        assert_eq!(lower.direction(), Direction::Lower);
    }

    #[test]
    fn a_shared_regime_shift_cancels_in_a_pair() {
        // Both mechanisms 2x faster in the second round: the pair still reads 1.5 exactly.
        let r = paired_ratio(&[(15.0, 10.0), (30.0, 20.0), (15.0, 10.0)]).unwrap();
        assert!(
            (r.ratio - 1.5).abs() < 1e-12 && (r.high - r.low) < 1e-9,
            "{r:?}"
        );
    }

    #[test]
    fn pairs_without_a_positive_value_are_left_out() {
        assert!(paired_ratio(&[(1.0, 0.0), (2.0, 1.0)]).is_none());
        assert_eq!(
            paired_ratio(&[(1.0, 0.0), (2.0, 1.0), (2.2, 1.0)])
                .unwrap()
                .n,
            2
        );
    }

    #[test]
    fn welch_finds_a_known_shift_and_not_a_null_one() {
        let old = [10.0, 10.4, 9.7, 10.2, 9.9];
        let shifted: Vec<f64> = old.iter().map(|v| v * 1.2).collect();
        let up = welch_ratio(&shifted, &old).unwrap();
        assert!((up.ratio - 1.2).abs() < 1e-9);
        assert_eq!(up.direction(), Direction::Higher);
        let same = welch_ratio(&[10.1, 9.8, 10.3, 10.0, 9.9], &old).unwrap();
        assert_eq!(same.direction(), Direction::Indistinguishable, "{same:?}");
        assert!(welch_ratio(&[1.0], &old).is_none());
    }

    /// A standard normal draw (Box–Muller) from a seeded generator.
    fn normal(rng: &mut fastrand::Rng) -> f64 {
        let (u, v) = (rng.f64().max(f64::MIN_POSITIVE), rng.f64());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// One simulated point: `visits` visits of `slices` slices each around `mean`. Each visit
    /// lands in a regime of its own (a shift of 8 % sd, as the machine's regimes last longer
    /// than a visit) and its slices follow an AR(1) process (ρ = 0.6, 3 % sd) around it.
    fn simulated_point(
        rng: &mut fastrand::Rng,
        mean: f64,
        visits: usize,
        slices: usize,
    ) -> Vec<Vec<f64>> {
        (0..visits)
            .map(|_| {
                let regime = mean * (1.0 + 0.08 * normal(rng));
                let mut noise = 0.0;
                (0..slices)
                    .map(|_| {
                        noise = 0.6 * noise + 0.8 * 0.03 * normal(rng);
                        regime * (1.0 + noise)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_visit_interval_covers_the_true_mean_and_the_per_slice_interval_does_not() {
        let mut rng = fastrand::Rng::with_seed(2013);
        let (points, mean) = (5000, 10.0);
        let (mut by_visits, mut by_slices) = (0, 0);
        for _ in 0..points {
            let visits = simulated_point(&mut rng, mean, 4, 3);
            let means: Vec<f64> = visits
                .iter()
                .map(|v| v.iter().sum::<f64>() / v.len() as f64)
                .collect();
            let v = summarize_visits(&means).unwrap();
            by_visits += usize::from(v.ci95_low <= mean && mean <= v.ci95_high);
            // The old method: the same measuring time as one contiguous stretch, which sits
            // in one regime (they last seconds), its slices AR(1)-corrected.
            let stretch = simulated_point(&mut rng, mean, 1, 12).remove(0);
            let s = super::super::summarize(&stretch).unwrap();
            by_slices += usize::from(s.ci95_low <= mean && mean <= s.ci95_high);
        }
        let (visit_rate, slice_rate) = (
            by_visits as f64 / points as f64,
            by_slices as f64 / points as f64,
        );
        eprintln!("coverage: visit means {visit_rate}, one stretch of slices {slice_rate}");
        assert!(
            visit_rate >= 0.93,
            "visit-mean interval covered {visit_rate}"
        );
        assert!(
            slice_rate < 0.60,
            "per-slice interval covered {slice_rate}: the test could not fail"
        );
    }

    #[test]
    fn welch_degrees_of_freedom_fall_between_the_smaller_sample_and_the_pooled_count() {
        let r = welch_ratio(&[1.0, 1.1, 0.9], &[1.0, 1.5, 0.6, 1.2, 0.8, 1.1]).unwrap();
        assert!(r.df >= 2.0 && r.df <= 7.0, "{r:?}");
    }
}
