//! The line under ipc's cost answer: round trip = fixed + per byte × size, fitted by weighted
//! least squares. Each size's weight is the inverse variance of its mean round trip over the
//! visits, so the noisiest sizes (often the largest) no longer steer the fit, and the sizes
//! are those where the cost is linear: the fit grows from the smallest sizes and stops at the
//! first size that departs from the line so far beyond its prediction interval (Bonferroni
//! over the sizes tried). When the residuals exceed what the visits' variances explain, the
//! covariance is scaled by the reduced χ² (the Birge ratio) so the intervals cover the lack of
//! fit as well. The fixed share of the round trip at the smallest size gets Fieller's interval,
//! which excludes 50 % exactly when fixed − per byte × size differs from 0 (a t test).
use crate::stats::student::t_quantile;
use crate::stats::verdict::ALPHA;

/// One size's round trip: the mean over its visits and that mean's variance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeCost {
    pub size: f64,
    pub mean_ns: f64,
    /// Variance of the mean (the visits' variance over their count).
    pub var_mean: f64,
    pub visits: usize,
}

impl SizeCost {
    /// From each visit's round trips per second; needs two visits with a figure above 0.
    pub fn from_rates(size: f64, rates: &[f64]) -> Option<SizeCost> {
        let ns: Vec<f64> = rates
            .iter()
            .filter(|r| **r > 0.0 && r.is_finite())
            .map(|r| 1e9 / r)
            .collect();
        let n = ns.len();
        if n < 2 {
            return None;
        }
        let mean = ns.iter().sum::<f64>() / n as f64;
        let var = ns.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Some(SizeCost {
            size,
            mean_ns: mean,
            var_mean: var / n as f64,
            visits: n,
        })
    }

    /// The weight: inverse variance, with the variance floored at a 0.01 % standard error so
    /// a size whose visits happen to agree exactly does not take the whole fit.
    fn weight(&self) -> f64 {
        1.0 / self.var_mean.max((1e-4 * self.mean_ns).powi(2))
    }
}

/// A fitted line with its covariance and the degrees of freedom its intervals use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub fixed: f64,
    pub per_byte: f64,
    pub var_fixed: f64,
    pub var_per_byte: f64,
    pub cov: f64,
    pub df: f64,
    /// Sizes the line went through.
    pub sizes: usize,
    /// The reduced χ² the covariance was scaled by (1 when the visits explain the residuals).
    pub scale: f64,
}

/// An estimate with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Line {
    fn t(&self) -> f64 {
        t_quantile(1.0 - ALPHA / 2.0, self.df)
    }

    pub fn fixed_interval(&self) -> Interval {
        around(self.fixed, self.t() * self.var_fixed.sqrt())
    }

    pub fn per_byte_interval(&self) -> Interval {
        around(self.per_byte, self.t() * self.var_per_byte.sqrt())
    }

    /// The fitted round trip at `x` and its variance.
    pub fn at(&self, x: f64) -> (f64, f64) {
        (
            self.fixed + self.per_byte * x,
            self.var_fixed + x * x * self.var_per_byte + 2.0 * x * self.cov,
        )
    }

    /// The fixed part's share of the fitted round trip at `x`, with Fieller's 95 % interval
    /// for the ratio fixed / (fixed + per byte × x); `None` for the interval when the fitted
    /// round trip itself is not told from 0 (the set is then unbounded).
    pub fn share_at(&self, x: f64) -> (f64, Option<(f64, f64)>) {
        let (u, suu) = (self.fixed, self.var_fixed);
        let (v, svv) = self.at(x);
        let suv = self.var_fixed + x * self.cov;
        let t2 = self.t().powi(2);
        // (u − s v)² ≤ t² (suu − 2 s suv + s² svv): a quadratic a s² + b s + c ≤ 0.
        let a = v * v - t2 * svv;
        let b = -2.0 * (u * v - t2 * suv);
        let c = u * u - t2 * suu;
        let share = u / v;
        let disc = b * b - 4.0 * a * c;
        if a <= 0.0 || disc < 0.0 {
            return (share, None);
        }
        let root = disc.sqrt();
        let (low, high) = ((-b - root) / (2.0 * a), (-b + root) / (2.0 * a));
        (share, Some((low, high)))
    }
}

fn around(value: f64, half: f64) -> Interval {
    Interval {
        value,
        low: value - half,
        high: value + half,
    }
}

/// Weighted least squares through `sizes` (two distinct sizes or more).
pub fn weighted_fit(sizes: &[SizeCost]) -> Option<Line> {
    let k = sizes.len();
    let (mut s, mut sx, mut sxx, mut sy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for c in sizes {
        let w = c.weight();
        s += w;
        sx += w * c.size;
        sxx += w * c.size * c.size;
        sy += w * c.mean_ns;
        sxy += w * c.size * c.mean_ns;
    }
    let d = s * sxx - sx * sx;
    if k < 2 || d <= 0.0 || !d.is_finite() {
        return None;
    }
    let per_byte = (s * sxy - sx * sy) / d;
    let fixed = (sxx * sy - sx * sxy) / d;
    let chi2: f64 = sizes
        .iter()
        .map(|c| c.weight() * (c.mean_ns - fixed - per_byte * c.size).powi(2))
        .sum();
    let reduced = if k > 2 { chi2 / (k - 2) as f64 } else { 0.0 };
    let scale = reduced.max(1.0);
    // The weights are estimated from each size's visits: t on the fewest visits' degrees of
    // freedom, and on sizes − 2 as well once the residuals set the scale.
    let fewest = sizes.iter().map(|c| c.visits).min().unwrap_or(2);
    let mut df = fewest.saturating_sub(1).max(1) as f64;
    if reduced > 1.0 {
        df = df.min((k - 2) as f64);
    }
    Some(Line {
        fixed,
        per_byte,
        var_fixed: scale * sxx / d,
        var_per_byte: scale * s / d,
        cov: -scale * sx / d,
        df,
        sizes: k,
        scale,
    })
}

/// A size the line does not reach: where the linear range ends and by how much it missed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Departure {
    pub size: f64,
    /// Observed mean over the line's prediction there.
    pub ratio: f64,
}

/// The sizes (ascending) over which the round trip is linear: from the two smallest, each
/// next size joins while it lies inside the line's prediction interval so far (at α over the
/// number of sizes tried, Bonferroni). Returns how many sizes the line keeps and the first
/// that departs.
pub fn linear_range(sizes: &[SizeCost]) -> (usize, Option<Departure>) {
    let tries = sizes.len().saturating_sub(2).max(1) as f64;
    for j in 2..sizes.len() {
        let Some(line) = weighted_fit(&sizes[..j]) else {
            return (j, None);
        };
        let next = &sizes[j];
        let (predicted, var) = line.at(next.size);
        let se = (var + next.var_mean).sqrt();
        let t = t_quantile(1.0 - ALPHA / (2.0 * tries), line.df);
        if (next.mean_ns - predicted).abs() > t * se {
            let departure = Departure {
                size: next.size,
                ratio: next.mean_ns / predicted,
            };
            return (j, Some(departure));
        }
    }
    (sizes.len(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(size: f64, mean_ns: f64, sd: f64) -> SizeCost {
        SizeCost {
            size,
            mean_ns,
            var_mean: sd * sd / 5.0,
            visits: 5,
        }
    }

    #[test]
    fn equal_weights_on_three_points_give_the_hand_computed_line() {
        // x = 0, 1, 2; y = 1, 3, 4 (equal variances): slope = Σ(x−1)(y−8/3)/Σ(x−1)² = 3/2,
        // intercept = 8/3 − 3/2 = 7/6; residuals −1/6, 1/3, −1/6.
        let line = weighted_fit(&[
            cost(0.0, 1.0, 1.0),
            cost(1.0, 3.0, 1.0),
            cost(2.0, 4.0, 1.0),
        ])
        .unwrap();
        assert!((line.per_byte - 1.5).abs() < 1e-12);
        assert!((line.fixed - 7.0 / 6.0).abs() < 1e-12);
        // w = 5 each: S = 15, Sx = 15, Sxx = 25, D = 150; χ² = 5 · (1/36 + 1/9 + 1/36) = 5/6
        // < 1 on one degree of freedom, so no scaling: var(fixed) = 25/150, var(slope) = 15/150.
        assert_eq!(line.scale, 1.0);
        assert!((line.var_fixed - 1.0 / 6.0).abs() < 1e-12);
        assert!((line.var_per_byte - 0.1).abs() < 1e-12);
        assert!((line.cov + 0.1).abs() < 1e-12);
        assert_eq!(line.df, 4.0, "the visits' degrees of freedom");
    }

    #[test]
    fn where_least_squares_goes_negative_the_weighted_line_over_the_linear_sizes_does_not() {
        // Fixed 2,000 ns + 0.5 ns/B up to 64 KiB, 1 ns/B beyond (a cache or buffer boundary),
        // on the usual log-spaced sizes 64 B to 1 MiB, 1 % spread per size. Ordinary least
        // squares through all eight: intercept −6,729 ns (hand-computed: x̄ = 174,760,
        // slope 0.9718), led by the two largest sizes.
        let rtt = |x: f64| match x <= 65536.0 {
            true => 2000.0 + 0.5 * x,
            false => 2000.0 + 0.5 * 65536.0 + (x - 65536.0),
        };
        let sizes: Vec<SizeCost> = (0..8)
            .map(|i| 64.0 * 4f64.powi(i))
            .map(|x| cost(x, rtt(x), 0.01 * rtt(x)))
            .collect();
        let xy: Vec<(f64, f64)> = sizes.iter().map(|c| (c.size, c.mean_ns)).collect();
        let ols = ordinary(&xy);
        assert!(
            (ols.0 + 6729.3).abs() < 0.1,
            "ordinary least squares: {ols:?}"
        );
        let (kept, departure) = linear_range(&sizes);
        assert_eq!(kept, 6, "64 B to 64 KiB: {departure:?}");
        assert_eq!(departure.unwrap().size, 262144.0);
        let line = weighted_fit(&sizes[..kept]).unwrap();
        let fixed = line.fixed_interval();
        assert!(fixed.low > 1900.0 && fixed.high < 2100.0, "{fixed:?}");
        assert!((line.per_byte - 0.5).abs() < 0.01, "{line:?}");
    }

    fn ordinary(xy: &[(f64, f64)]) -> (f64, f64) {
        let n = xy.len() as f64;
        let mx = xy.iter().map(|p| p.0).sum::<f64>() / n;
        let my = xy.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = xy.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let slope = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
        (my - slope * mx, slope)
    }

    #[test]
    fn the_linear_range_ends_at_the_first_size_off_the_line() {
        let rtt = |x: f64| 2000.0 + 0.5 * x;
        let mut sizes: Vec<SizeCost> = [64.0, 256.0, 1024.0, 4096.0]
            .iter()
            .map(|&x| cost(x, rtt(x), 10.0))
            .collect();
        assert_eq!(linear_range(&sizes), (4, None));
        // 64 KiB costs twice the line's figure (a buffer boundary): left out.
        sizes.push(cost(65536.0, 2.0 * rtt(65536.0), 100.0));
        let (kept, departure) = linear_range(&sizes);
        assert_eq!(kept, 4);
        let d = departure.unwrap();
        assert_eq!(d.size, 65536.0);
        assert!((d.ratio - 2.0).abs() < 0.01, "{d:?}");
    }

    #[test]
    fn the_share_interval_excludes_half_exactly_when_the_contrast_test_rejects() {
        let line = weighted_fit(&[
            cost(64.0, 2032.0, 30.0),
            cost(1024.0, 2512.0, 30.0),
            cost(4096.0, 4048.0, 30.0),
        ])
        .unwrap();
        let (share, interval) = line.share_at(64.0);
        assert!((share - 2000.0 / 2032.0).abs() < 0.01, "{share}");
        let (low, high) = interval.unwrap();
        assert!(low > 0.5 && low < share && high > share, "{low} {high}");
        // At 4 KiB the fixed part is 2,000 of 4,048 ns: the interval straddles 50 %.
        let (share, interval) = line.share_at(4096.0);
        let (low, high) = interval.unwrap();
        assert!((share - 0.494).abs() < 0.01 && low < 0.5 && high > 0.5);
        // Fieller at s = ½ is the t test of fixed − per byte × x = 0.
        let contrast = line.fixed - line.per_byte * 4096.0;
        let var = line.var_fixed + 4096f64.powi(2) * line.var_per_byte - 2.0 * 4096.0 * line.cov;
        let t = t_quantile(0.975, line.df);
        assert!(contrast.abs() < t * var.sqrt());
    }

    #[test]
    fn visits_become_a_mean_round_trip_and_its_variance() {
        // 1e6 and 5e5 round trips/s: 1,000 and 2,000 ns; mean 1,500, variance 500,000 / 2.
        let c = SizeCost::from_rates(64.0, &[1e6, 5e5]).unwrap();
        assert_eq!((c.mean_ns, c.var_mean, c.visits), (1500.0, 250_000.0, 2));
        assert_eq!(SizeCost::from_rates(64.0, &[1e6, 0.0]), None);
    }
}
