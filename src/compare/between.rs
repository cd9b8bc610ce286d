//! Which between-sweep spread τ widens every point's interval, and whether the points scatter
//! more than it allows (issue 36, item 1). A τ estimated from the very points it then judges
//! turns a real change into spread: when m of k points moved, DerSimonian–Laird reads the move
//! as τ² and a moved point's t no longer grows with the size of the move. So τ comes, in this
//! order, from an A/A reference (`--between-spread`, what bench/repeatability.sh or
//! bench/noise.sh measure for two sweeps of one build), from a trimmed estimate that a minority
//! of moved points cannot inflate (`stats::between::robust_tau2`, 10 points or more), or from
//! nowhere (τ = 0, said so). Cochran's Q against that τ warns when more points moved than an
//! A/A allows; the DerSimonian–Laird τ of all points is printed beside it, as what the points
//! show together, and judges nothing.
use crate::stats::between::MIN_POINTS;
use crate::stats::between::{chi_square_upper, cochran_q, dersimonian_laird, robust_tau2};
use std::fmt::Write;

/// The level of the "more points moved than an A/A allows" warning.
const Q_LEVEL: f64 = 0.05;

/// The warning printed when Cochran's Q exceeds its χ² at `Q_LEVEL`.
pub const WARNING: &str = "more points moved than an A/A allows: a change, or a noisier machine — see the canary and interference lines";

/// Where the τ in every point's interval came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// `--between-spread`: an A/A pair's spread, measured apart from the judged points.
    BetweenSpread,
    /// The trimmed estimate from the judged points (10 or more).
    Trimmed,
    /// No τ: fewer than 10 points and no reference.
    None,
}

/// The between-sweep block compare prints and writes in `--json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Between {
    /// τ on the log scale, in every point's variance as τ².
    pub tau: f64,
    pub source: Source,
    /// The points with an interval (what τ and Q read).
    pub points: usize,
    /// Cochran's Q with weights 1 / (se² + τ²); `None` below two points.
    pub q: Option<f64>,
    /// Q's degrees of freedom, points − 1.
    pub df: usize,
    /// P(χ²(df) ≥ Q).
    pub q_p: Option<f64>,
    /// DerSimonian–Laird's τ over all the points: what they show together, the change
    /// included.
    pub tau_dersimonian_laird: f64,
    /// `WARNING` where Q exceeds χ²(df) at 0.05.
    pub warning: Option<&'static str>,
}

/// The τ for points of `estimates` (log ratio, within-point standard error), `reference` the
/// A/A spread given on the command line (a share on the log scale, such as 0.05).
pub fn choose(estimates: &[(f64, f64)], reference: Option<f64>) -> Between {
    let (tau2, source) = match (reference, robust_tau2(estimates)) {
        (Some(tau), _) => (tau * tau, Source::BetweenSpread),
        (None, Some(tau2)) => (tau2, Source::Trimmed),
        (None, None) => (0.0, Source::None),
    };
    let q = cochran_q(estimates, tau2);
    let df = estimates.len().saturating_sub(1);
    let q_p = q.map(|q| chi_square_upper(q, df as f64));
    Between {
        tau: tau2.sqrt(),
        source,
        points: estimates.len(),
        q,
        df,
        q_p,
        tau_dersimonian_laird: dersimonian_laird(estimates).sqrt(),
        warning: q_p.filter(|p| *p < Q_LEVEL).map(|_| WARNING),
    }
}

impl Between {
    /// What the summary line says of τ: its size and where it came from.
    pub fn summary(&self) -> String {
        match self.source {
            Source::BetweenSpread => format!(
                "between-sweep spread τ = {} (given: --between-spread, an A/A pair's) in every point's interval",
                pct(self.tau)
            ),
            Source::Trimmed => format!(
                "between-sweep spread τ = {} (trimmed over the {} judged points, which a minority of moved points cannot inflate) in every point's interval",
                pct(self.tau),
                self.points
            ),
            Source::None => format!(
                "τ not estimated: {} point{}, an estimate needs {MIN_POINTS}; intervals hold each study's visits only; give --between-spread",
                self.points,
                if self.points == 1 { "" } else { "s" }
            ),
        }
    }

    /// The lines after the summary: Q against the τ used, the DerSimonian–Laird τ, the warning.
    pub fn lines(&self) -> String {
        let mut out = String::new();
        if let (Some(q), Some(p)) = (self.q, self.q_p) {
            let _ = writeln!(
                out,
                "between sweeps: Cochran's Q = {q:.1} on {} df against τ = {} (p = {p:.3}); DerSimonian–Laird τ of all {} points = {} (what they show together, a change included; it judges nothing)",
                self.df,
                pct(self.tau),
                self.points,
                pct(self.tau_dersimonian_laird)
            );
        }
        if let Some(warning) = self.warning {
            let _ = writeln!(out, "warning: {warning}");
        }
        out
    }
}

fn pct(tau: f64) -> String {
    format!("{:.1} %", tau * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `k` points with se 0.05, their log ratios alternating ±`d`.
    fn alternating(k: usize, d: f64) -> Vec<(f64, f64)> {
        (0..k)
            .map(|i| (if i % 2 == 0 { d } else { -d }, 0.05))
            .collect()
    }

    #[test]
    fn the_reference_wins_then_the_trimmed_estimate_then_none() {
        let ten = alternating(10, 0.05);
        let given = choose(&ten, Some(0.03));
        assert_eq!((given.source, given.tau), (Source::BetweenSpread, 0.03));
        let trimmed = choose(&ten, None);
        assert_eq!(trimmed.source, Source::Trimmed);
        let nine = choose(&ten[..9], None);
        assert_eq!((nine.source, nine.tau), (Source::None, 0.0));
        assert!(
            nine.summary()
                .contains("τ not estimated: 9 points, an estimate needs 10"),
            "{}",
            nine.summary()
        );
    }

    #[test]
    fn q_beyond_its_chi_square_warns_and_within_it_does_not() {
        // ±0.05 around 0 with se 0.05: Q = k · 1 = 10 on 9 df, p ≈ 0.35.
        let calm = choose(&alternating(10, 0.05), Some(0.0));
        assert!((calm.q.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(calm.warning, None);
        // ±0.15: Q = 90 on 9 df.
        let moved = choose(&alternating(10, 0.15), Some(0.0));
        assert_eq!(moved.warning, Some(WARNING));
        assert!(moved
            .lines()
            .contains("warning: more points moved than an A/A allows"));
        assert!(moved.lines().contains("Cochran's Q = 90.0 on 9 df"));
        // DL over the same points: (90 − 9) / (4000 − 400) = 0.0225, τ = 15 %.
        assert!((moved.tau_dersimonian_laird - 0.15).abs() < 1e-9);
    }
}
