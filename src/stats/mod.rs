//! Statistics over measurement slices: mean, sample standard deviation, the 95 % confidence
//! interval of the mean (Student's t), and outliers by Tukey's fences (classified and counted,
//! never dropped), as criterion.rs reports them. Consecutive slices of a run on a shared VM are
//! not independent (throughput drifts for seconds at a time), so the interval uses the effective
//! sample size of an AR(1) process, n(1-ρ)/(1+ρ) with ρ the lag-1 autocorrelation: a drifting
//! point gets the wider interval it deserves instead of a falsely tight one.
pub(crate) mod between;
#[cfg(test)]
pub(crate) mod draw;
pub(crate) mod interval;
pub mod point;
pub mod schedule;
pub(crate) mod student;
pub mod verdict;
pub mod visits;

/// Mean and 95 % confidence interval of a set of slice values.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub stddev: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub ci95_half_width: f64,
    /// Half-width relative to the mean (0.02 = ±2 %); infinite when the mean is 0 (JSON has
    /// no infinity: it is written `null` and read back as infinite).
    #[serde(deserialize_with = "infinite_when_null")]
    pub ci95_rel: f64,
    /// Lag-1 autocorrelation of the values (0 when negative or too few values).
    #[serde(default)]
    pub lag1_autocorrelation: f64,
    /// Independent values the interval is worth: n(1-ρ)/(1+ρ), at least 2.
    #[serde(default)]
    pub n_effective: f64,
}

/// A relative half-width as written: serde_json writes a non-finite float as `null`, and the
/// only one `Summary::around` makes is the infinite width of a zero mean (a visit that moved
/// nothing), which `--resume` must read back.
fn infinite_when_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let value: Option<f64> = serde::Deserialize::deserialize(d)?;
    Ok(value.unwrap_or(f64::INFINITY))
}

/// Needs at least two values (one value has no spread to estimate).
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let stddev = var.sqrt();
    let rho = lag1_autocorrelation(values, mean);
    let n_eff = (n as f64 * (1.0 - rho) / (1.0 + rho)).clamp(2.0, n as f64);
    let half = t_975(n_eff.floor() as usize - 1) * stddev / n_eff.sqrt();
    Some(Summary::around(n, mean, stddev, half, rho, n_eff))
}

impl Summary {
    /// The summary of `n` values with this mean and spread and a 95 % half-width `half`.
    pub fn around(n: usize, mean: f64, stddev: f64, half: f64, rho: f64, n_eff: f64) -> Summary {
        Summary {
            n,
            mean,
            stddev,
            ci95_low: mean - half,
            ci95_high: mean + half,
            ci95_half_width: half,
            ci95_rel: if mean != 0.0 {
                half / mean.abs()
            } else {
                f64::INFINITY
            },
            lag1_autocorrelation: rho,
            n_effective: n_eff,
        }
    }
}

/// Lag-1 autocorrelation, clamped to [0, 0.95]: negative correlation would narrow the interval
/// below the independent case, which a handful of slices cannot justify.
pub fn lag1_autocorrelation(values: &[f64], mean: f64) -> f64 {
    let denom: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    if values.len() < 3 || denom == 0.0 {
        return 0.0;
    }
    let num: f64 = values
        .windows(2)
        .map(|w| (w[0] - mean) * (w[1] - mean))
        .sum();
    (num / denom).clamp(0.0, 0.95)
}

/// Two-sided 95 % quantile of Student's t with `df` degrees of freedom.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        // Cornish-Fisher expansion around the normal quantile; within 0.001 beyond 30.
        _ => {
            let z: f64 = 1.959964;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// Slices outside Tukey's fences: mild beyond 1.5 IQR from the quartiles, severe beyond 3.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Outliers {
    pub low_severe: usize,
    pub low_mild: usize,
    pub high_mild: usize,
    pub high_severe: usize,
}

impl Outliers {
    pub fn total(&self) -> usize {
        self.low_severe + self.low_mild + self.high_mild + self.high_severe
    }
}

pub fn tukey(values: &[f64]) -> Outliers {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mut out = Outliers::default();
    if sorted.len() < 4 {
        return out;
    }
    let (q1, q3) = (quantile(&sorted, 0.25), quantile(&sorted, 0.75));
    let iqr = q3 - q1;
    for &v in &sorted {
        if v < q1 - 3.0 * iqr {
            out.low_severe += 1;
        } else if v < q1 - 1.5 * iqr {
            out.low_mild += 1;
        } else if v > q3 + 3.0 * iqr {
            out.high_severe += 1;
        } else if v > q3 + 1.5 * iqr {
            out.high_mild += 1;
        }
    }
    out
}

/// Linear-interpolated quantile of sorted values (`q` in 0..=1).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Whether two confidence intervals are disjoint (the report's test for "beats").
pub fn disjoint(a: &Summary, b: &Summary) -> bool {
    a.ci95_high < b.ci95_low || b.ci95_high < a.ci95_low
}

/// Ratio `new / old` of two means with an approximate 95 % interval (delta method on the
/// relative half-widths, which holds while both are small).
pub fn ratio(new: &Summary, old: &Summary) -> (f64, f64, f64) {
    let r = new.mean / old.mean;
    let rel = (new.ci95_rel.powi(2) + old.ci95_rel.powi(2)).sqrt();
    (r, r * (1.0 - rel), r * (1.0 + rel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ci_of_known_values() {
        let s = summarize(&[10.0, 12.0, 11.0, 13.0, 9.0]).unwrap();
        assert_eq!(s.mean, 11.0);
        assert!((s.stddev - 1.5811).abs() < 1e-3);
        // t(4) = 2.776; 2.776 * 1.5811 / sqrt(5) = 1.963
        assert!(
            (s.ci95_half_width - 1.963).abs() < 1e-3,
            "{}",
            s.ci95_half_width
        );
        assert!((s.ci95_rel - 1.963 / 11.0).abs() < 1e-3);
    }

    #[test]
    fn a_zero_mean_reads_back_as_the_infinite_width_it_was_written_with() {
        let nothing = summarize(&[0.0, 0.0]).unwrap();
        assert_eq!(nothing.ci95_rel, f64::INFINITY);
        let line = serde_json::to_string(&nothing).unwrap();
        assert!(line.contains("\"ci95_rel\":null"), "{line}");
        let back: Summary = serde_json::from_str(&line).unwrap();
        assert_eq!(back, nothing);
        let some = summarize(&[1.0, 3.0]).unwrap();
        let back: Summary = serde_json::from_str(&serde_json::to_string(&some).unwrap()).unwrap();
        assert_eq!(back, some);
    }

    #[test]
    fn a_drifting_series_gets_a_wider_interval_than_the_same_values_shuffled() {
        let drifting: Vec<f64> = (0..40).map(|i| 100.0 + i as f64).collect();
        let mut alternating = Vec::new();
        for i in 0..20 {
            alternating.push(100.0 + i as f64);
            alternating.push(139.0 - i as f64);
        }
        let (d, a) = (
            summarize(&drifting).unwrap(),
            summarize(&alternating).unwrap(),
        );
        assert_eq!(d.mean, a.mean);
        assert!(d.lag1_autocorrelation > 0.8, "{}", d.lag1_autocorrelation);
        assert!(d.n_effective < 5.0, "{}", d.n_effective);
        assert_eq!(a.n_effective, 40.0);
        assert!(d.ci95_half_width > 3.0 * a.ci95_half_width);
    }

    #[test]
    fn one_value_has_no_interval() {
        assert!(summarize(&[5.0]).is_none());
    }

    #[test]
    fn t_quantiles_approach_the_normal() {
        assert_eq!(t_975(1), 12.706);
        assert!((t_975(60) - 2.000).abs() < 0.002, "{}", t_975(60));
        assert!((t_975(1000) - 1.962).abs() < 0.002);
    }

    #[test]
    fn tukey_classifies_mild_and_severe() {
        let mut v: Vec<f64> = (0..20).map(|i| 100.0 + (i % 5) as f64).collect();
        v.push(107.5); // beyond 1.5 IQR (q3 = 103, IQR = 2)
        v.push(200.0); // beyond 3 IQR
        v.push(50.0);
        let o = tukey(&v);
        assert_eq!((o.high_mild, o.high_severe, o.low_severe), (1, 1, 1));
        assert_eq!(o.total(), 3);
    }

    #[test]
    fn disjoint_intervals_are_detected() {
        let a = summarize(&[10.0, 10.1, 9.9, 10.0]).unwrap();
        let b = summarize(&[12.0, 12.1, 11.9, 12.0]).unwrap();
        let c = summarize(&[10.05, 10.2, 9.8, 10.0]).unwrap();
        assert!(disjoint(&a, &b));
        assert!(!disjoint(&a, &c));
    }

    proptest! {
        #[test]
        fn interval_contains_the_mean_and_shrinks_with_agreeing_values(v in prop::collection::vec(1.0f64..1000.0, 2..50)) {
            let s = summarize(&v).unwrap();
            prop_assert!(s.ci95_low <= s.mean && s.mean <= s.ci95_high);
            let same = vec![v[0]; v.len()];
            prop_assert!(summarize(&same).unwrap().ci95_half_width <= v[0] * 1e-12);
        }
    }
}
