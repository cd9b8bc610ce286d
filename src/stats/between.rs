//! How much two studies made at different times differ beyond what their own visits show: the
//! between-session spread τ of per-point log ratios. Each study's visits sample the regimes of
//! its own minutes; a shared machine also moves between studies, differently for different
//! points (here one 16 KiB point read 35 Gbit/s in one sweep and 28 in the next, while its
//! neighbours held), and no point's own visits can see that.
//!
//! Two estimators: DerSimonian and Laird's moment estimator (1986), the random-effects step of
//! a meta-analysis, which reads every point's scatter as spread, a real change included; and a
//! trimmed one (`robust_tau2`) that points which moved cannot inflate while they are a minority,
//! so that a compare can judge them against the spread of the points that did not. Cochran's Q
//! and its χ² tail say whether the points scatter more than a given τ allows.
use super::student::ln_gamma;

/// Fewer points than this give no τ of their own: with 9 or fewer, one point's scatter is a
/// ninth or more of the estimate, and a moved point is half of what it would be judged by.
pub const MIN_POINTS: usize = 10;

/// Where the trimmed estimator cuts, in its own standard deviations: wide enough that an A/A
/// set loses 1.2 % of its points (the truncation factor puts back their share of the
/// variance; started from the MAD, a cut at 2.0 read τ low enough that 7.7 % of simulated
/// A/A pairs of 18 points flagged one, against 6.2 % at 2.5), narrow enough that a point moved
/// by 4 spreads or more mostly drops out.
const TRIM: f64 = 2.5;

fn valid(estimates: &[(f64, f64)]) -> bool {
    estimates
        .iter()
        .all(|(d, se)| d.is_finite() && se.is_finite() && *se > 0.0)
}

/// τ² from each point's log ratio and its standard error: Cochran's Q (the weighted scatter
/// around the weighted mean, weights 1 / se²) beyond its k − 1 expected under no
/// between-session spread, over the weights' spread; 0 where Q is within k − 1, with fewer
/// than two points, or where a standard error is 0.
pub fn dersimonian_laird(estimates: &[(f64, f64)]) -> f64 {
    let k = estimates.len();
    if k < 2 || !valid(estimates) {
        return 0.0;
    }
    let weights: Vec<f64> = estimates.iter().map(|(_, se)| 1.0 / (se * se)).collect();
    let sum: f64 = weights.iter().sum();
    let q = cochran_q(estimates, 0.0).unwrap_or(0.0);
    let spread = sum - weights.iter().map(|w| w * w).sum::<f64>() / sum;
    ((q - (k - 1) as f64) / spread).max(0.0)
}

/// Cochran's Q with each point weighted 1 / (se² + τ²): the weighted scatter of the log ratios
/// around their weighted mean, χ²(k − 1) when the points differ by their own noise and τ
/// alone. `None` with fewer than two points or a standard error that is 0 or not finite (with
/// τ² = 0).
pub fn cochran_q(estimates: &[(f64, f64)], tau2: f64) -> Option<f64> {
    if estimates.len() < 2 || !valid(estimates) || tau2.is_nan() || tau2 < 0.0 {
        return None;
    }
    let weights: Vec<f64> = estimates
        .iter()
        .map(|(_, se)| 1.0 / (se * se + tau2))
        .collect();
    let sum: f64 = weights.iter().sum();
    let mean = estimates
        .iter()
        .zip(&weights)
        .map(|((d, _), w)| w * d)
        .sum::<f64>()
        / sum;
    Some(
        estimates
            .iter()
            .zip(&weights)
            .map(|((d, _), w)| w * (d - mean).powi(2))
            .sum(),
    )
}

/// τ² that a minority of moved points cannot inflate, or `None` from fewer than `MIN_POINTS`.
///
/// The log ratios are trimmed iteratively: start from the shortest half (its midpoint, and its
/// length as a normal's), keep the points within `TRIM` spreads of the centre, take their mean and
/// variance, divide the variance by a normal's truncation factor at `TRIM` (so that an A/A set
/// reads its full spread), and repeat until the kept set stops changing. τ² is that spread
/// squared less the median within-point variance se², floored at 0. Why not the MAD: a
/// quarter of the points moved by 2.75 of their spreads (12 of 48 points 20 % slower at this
/// machine's noise) widens the MAD, and the DerSimonian–Laird τ, by half, and the moved points
/// then hide behind it; trimmed, they widen it by well under a tenth. A majority of moved
/// points becomes the centre: no estimator from the points alone can tell which moved then,
/// which is what `compare --between-spread` (an A/A reference) is for.
pub fn robust_tau2(estimates: &[(f64, f64)]) -> Option<f64> {
    if estimates.len() < MIN_POINTS || !valid(estimates) {
        return None;
    }
    let logs: Vec<f64> = estimates.iter().map(|(d, _)| *d).collect();
    let spread = trimmed_spread(&logs);
    let within = median(estimates.iter().map(|(_, se)| se * se).collect());
    Some((spread * spread - within).max(0.0))
}

/// The normal SD of the bulk of `values` by iterated trimming at `TRIM` (see `robust_tau2`).
fn trimmed_spread(values: &[f64]) -> f64 {
    let (mut centre, mut spread) = shortest_half(values);
    let mut kept_before = usize::MAX;
    for _ in 0..50 {
        let kept: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| (v - centre).abs() <= TRIM * spread)
            .collect();
        if kept.len() < 3 || spread == 0.0 {
            break;
        }
        let mean = kept.iter().sum::<f64>() / kept.len() as f64;
        let var = kept.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (kept.len() - 1) as f64;
        (centre, spread) = (mean, (var / truncated_variance(TRIM)).sqrt());
        if kept.len() == kept_before {
            break;
        }
        kept_before = kept.len();
    }
    spread
}

/// The start of the trimming: the midpoint of the shortest interval that holds half the
/// values, and its length over a normal's (2 × 0.6745 SD). Unlike the median and the MAD, the
/// shortest half stays inside the unmoved bulk when the moved points lie to one side of it.
fn shortest_half(values: &[f64]) -> (f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let h = sorted.len() / 2 + 1;
    let (low, high) = (0..=sorted.len() - h)
        .map(|i| (sorted[i], sorted[i + h - 1]))
        .min_by(|a, b| (a.1 - a.0).total_cmp(&(b.1 - b.0)))
        .expect("at least one window");
    (0.5 * (low + high), (high - low) / (2.0 * 0.6745))
}

/// The variance of a standard normal truncated to [−c, c]: 1 − 2cφ(c) / (2Φ(c) − 1).
fn truncated_variance(c: f64) -> f64 {
    let density = (-0.5 * c * c).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let inside = 1.0 - chi_square_upper(c * c, 1.0);
    1.0 - 2.0 * c * density / inside
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => 0.5 * (values[n / 2 - 1] + values[n / 2]),
    }
}

/// P(χ² ≥ q) with `df` degrees of freedom: the regularized upper incomplete gamma Q(df/2, q/2),
/// by its series below a + 1 and its continued fraction above (Numerical Recipes §6.2).
pub fn chi_square_upper(q: f64, df: f64) -> f64 {
    if q.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        return 1.0;
    }
    let (a, x) = (0.5 * df, 0.5 * q);
    let front = (a * x.ln() - x - ln_gamma(a)).exp();
    if x < a + 1.0 {
        let (mut term, mut sum, mut n) = (1.0 / a, 1.0 / a, a);
        for _ in 0..500 {
            n += 1.0;
            term *= x / n;
            sum += term;
            if term.abs() < sum.abs() * 1e-15 {
                break;
            }
        }
        return (1.0 - front * sum).clamp(0.0, 1.0);
    }
    // Lentz's method for the continued fraction of Q(a, x).
    let tiny = 1e-300;
    let mut b = x + 1.0 - a;
    let (mut c, mut d) = (1.0 / tiny, 1.0 / b);
    let mut h = d;
    for i in 1..500 {
        let an = -(i as f64) * (i as f64 - a);
        b += 2.0;
        d = an * d + b;
        d = if d.abs() < tiny { tiny } else { d };
        c = b + an / c;
        c = if c.abs() < tiny { tiny } else { c };
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    (front * h).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_squared_matches_a_hand_computed_case_and_is_zero_without_excess_scatter() {
        // Three points, se 0.1 each (weights 100): mean 0.1, Q = 100 · (0.01 + 0 + 0.01) = 2
        // = k − 1, so no excess: τ² = 0.
        assert_eq!(
            dersimonian_laird(&[(0.0, 0.1), (0.1, 0.1), (0.2, 0.1)]),
            0.0
        );
        // Spread twice as far: Q = 100 · (0.04 + 0 + 0.04) = 8; spread of the weights
        // 300 − 30000/300 = 200; τ² = (8 − 2) / 200 = 0.03.
        let tau2 = dersimonian_laird(&[(0.0, 0.1), (0.2, 0.1), (0.4, 0.1)]);
        assert!((tau2 - 0.03).abs() < 1e-12, "{tau2}");
        assert_eq!(dersimonian_laird(&[(0.5, 0.1)]), 0.0, "one point");
        assert_eq!(dersimonian_laird(&[(0.5, 0.0), (0.0, 0.1)]), 0.0, "se 0");
        // Q with τ² = 0.03: weights 1/0.04 = 25, Q = 25 · 0.08 = 2.
        let q = cochran_q(&[(0.0, 0.1), (0.2, 0.1), (0.4, 0.1)], 0.03).unwrap();
        assert!((q - 2.0).abs() < 1e-12, "{q}");
    }

    #[test]
    fn chi_square_tails_match_the_printed_table() {
        // 95 % points of χ²: 3.841 (1), 5.991 (2), 16.919 (9), 43.773 (30), 64.001 (47).
        for (q, df) in [
            (3.841, 1.0),
            (5.991, 2.0),
            (16.919, 9.0),
            (43.773, 30.0),
            (64.001, 47.0),
        ] {
            let p = chi_square_upper(q, df);
            assert!((p - 0.05).abs() < 2e-4, "χ²({df}) ≥ {q}: {p}");
        }
        assert_eq!(chi_square_upper(0.0, 3.0), 1.0);
        assert!((truncated_variance(2.0) - 0.7737).abs() < 1e-3);
    }

    /// Log ratios of `k` points with standard error `se` and between-sweep spread `tau`, at
    /// the normal scores of k evenly spaced probabilities (no draws, so the test is exact).
    fn points(k: usize, se: f64, tau: f64) -> Vec<(f64, f64)> {
        let sd = (se * se + tau * tau).sqrt();
        let score = |i: usize| super::super::student::t_quantile((i as f64 + 0.5) / k as f64, 1e9);
        (0..k).map(|i| (sd * score(i), se)).collect()
    }

    #[test]
    fn a_minority_of_moved_points_cannot_inflate_the_trimmed_tau_and_does_inflate_dl() {
        let quiet = points(48, 0.065, 0.048);
        let robust = robust_tau2(&quiet).unwrap().sqrt();
        assert!((robust - 0.048).abs() < 0.012, "A/A reads its τ: {robust}");
        // 12 of 48 interleaved points 20 % slower (log −0.223), 4.5 spreads at se 0.01 (3 %
        // visit spread, 17 visits a side).
        let quiet = points(48, 0.01, 0.048);
        let moved: Vec<(f64, f64)> = (0..48)
            .map(|i| {
                let (d, se) = quiet[i];
                (if i % 4 == 1 { d - 0.223 } else { d }, se)
            })
            .collect();
        let robust = robust_tau2(&moved).unwrap().sqrt();
        let dl = dersimonian_laird(&moved).sqrt();
        assert!(robust < 0.065, "trimmed τ {robust}");
        assert!(dl > 0.09, "DL absorbs the change: {dl}");
        assert_eq!(robust_tau2(&quiet[..9]), None, "9 points give no τ");
        // At 2.75 spreads (se 0.065, this machine's visit spread) the moved points are not
        // told from spread: the trimmed τ then reads as wide as DL's.
        let near: Vec<(f64, f64)> = points(48, 0.065, 0.048)
            .into_iter()
            .enumerate()
            .map(|(i, (d, se))| (if i % 4 == 1 { d - 0.223 } else { d }, se))
            .collect();
        assert!(robust_tau2(&near).unwrap().sqrt() > 0.09);
    }
}
