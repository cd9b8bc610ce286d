//! Student's t distribution at any level: the CDF through the regularized incomplete beta
//! function (continued fraction, Numerical Recipes §6.4) and its quantile by bisection. The
//! fixed 95 % table in `stats::t_975` serves the common case; a verdict controlled across many
//! tests needs other levels (90 % for equivalence, 1 − α/m for Holm and Bonferroni).

/// P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0, fractional allowed).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    let x = df / (df + t * t);
    let tail = 0.5 * incomplete_beta(0.5 * df, 0.5, x);
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom (0 < p < 1).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    // Newton's method from the normal quantile (a few steps: the t density is smooth and the
    // CDF convex beyond 0), with bisection as the fallback should a step leave the bracket.
    let mut t = normal_quantile(p);
    for _ in 0..50 {
        let step = (t_cdf(t, df) - p) / t_pdf(t, df);
        let next = t - step;
        if !next.is_finite() || next < 0.0 {
            break;
        }
        t = next;
        if step.abs() < 1e-12 * t.max(1.0) {
            return t;
        }
    }
    bisect(p, df)
}

fn bisect(p: f64, df: f64) -> f64 {
    let (mut low, mut high) = (0.0, 1.0);
    while t_cdf(high, df) < p {
        high *= 2.0;
        if high > 1e12 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if t_cdf(mid, df) < p {
            low = mid;
        } else {
            high = mid;
        }
        if high - low < 1e-12 * high.max(1.0) {
            break;
        }
    }
    0.5 * (low + high)
}

/// The density of Student's t.
fn t_pdf(t: f64, df: f64) -> f64 {
    (ln_gamma((df + 1.0) / 2.0)
        - ln_gamma(df / 2.0)
        - 0.5 * (df * std::f64::consts::PI).ln()
        - (df + 1.0) / 2.0 * (1.0 + t * t / df).ln())
    .exp()
}

/// The standard normal quantile for p ≥ 0.5 (Abramowitz & Stegun 26.2.23, |error| < 4.5e-4):
/// only a starting point for Newton's method.
fn normal_quantile(p: f64) -> f64 {
    let q = (1.0 - p).max(1e-300);
    let t = (-2.0 * q.ln()).sqrt();
    t - (2.515517 + 0.802853 * t + 0.010328 * t * t)
        / (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t)
}

/// Two-sided p-value of a t statistic.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    (2.0 * t_cdf(-t.abs(), df)).min(1.0)
}

/// The regularized incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast on this side of the mean; use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// Lentz's evaluation of the incomplete beta continued fraction.
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    d = if d.abs() < TINY { TINY } else { d };
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 + aa * d;
            d = if d.abs() < TINY { TINY } else { d };
            c = 1.0 + aa / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine coefficients; relative error below 1e-13).
pub(super) fn ln_gamma(x: f64) -> f64 {
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = COEF[1..]
        .iter()
        .enumerate()
        .fold(COEF[0], |s, (i, c)| s + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_the_printed_table() {
        // Two-sided 95 % and 90 % points from any t table.
        for (df, q975, q95) in [
            (1.0, 12.706, 6.314),
            (2.0, 4.303, 2.920),
            (4.0, 2.776, 2.132),
        ] {
            assert!((t_quantile(0.975, df) - q975).abs() < 1e-3, "{df}");
            assert!((t_quantile(0.95, df) - q95).abs() < 1e-3, "{df}");
        }
        assert!((t_quantile(0.995, 10.0) - 3.169).abs() < 1e-3);
        assert!((t_quantile(0.975, 1e6) - 1.95996).abs() < 1e-4);
        assert!((t_quantile(0.025, 4.0) + 2.776).abs() < 1e-3);
    }

    #[test]
    fn the_cdf_is_symmetric_and_inverts_the_quantile() {
        assert!((t_cdf(0.0, 3.0) - 0.5).abs() < 1e-12);
        for df in [1.5, 3.0, 12.0, 80.0] {
            for p in [0.6, 0.9, 0.999] {
                let t = t_quantile(p, df);
                assert!((t_cdf(t, df) - p).abs() < 1e-9, "{df} {p}");
                assert!((t_cdf(-t, df) - (1.0 - p)).abs() < 1e-9);
            }
        }
        assert!((two_sided_p(2.776, 4.0) - 0.05).abs() < 1e-4);
    }
}
