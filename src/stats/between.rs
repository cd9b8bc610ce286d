//! How much two studies made at different times differ beyond what their own visits show: the
//! between-session spread τ of per-point log ratios, by DerSimonian and Laird's moment
//! estimator (1986), the random-effects step of a meta-analysis. Each study's visits sample
//! the regimes of its own minutes; a shared machine also moves between studies, differently
//! for different points (here one 16 KiB point read 35 Gbit/s in one sweep and 28 in the next,
//! while its neighbours held), and no point's own visits can see that.

/// τ² from each point's log ratio and its standard error: Cochran's Q (the weighted scatter
/// around the weighted mean, weights 1 / se²) beyond its k − 1 expected under no
/// between-session spread, over the weights' spread; 0 where Q is within k − 1, with fewer
/// than two points, or where a standard error is 0.
pub fn dersimonian_laird(estimates: &[(f64, f64)]) -> f64 {
    let k = estimates.len();
    if k < 2
        || estimates
            .iter()
            .any(|(_, se)| !se.is_finite() || *se <= 0.0)
    {
        return 0.0;
    }
    let weights: Vec<f64> = estimates.iter().map(|(_, se)| 1.0 / (se * se)).collect();
    let sum: f64 = weights.iter().sum();
    let mean = estimates
        .iter()
        .zip(&weights)
        .map(|((d, _), w)| w * d)
        .sum::<f64>()
        / sum;
    let q: f64 = estimates
        .iter()
        .zip(&weights)
        .map(|((d, _), w)| w * (d - mean).powi(2))
        .sum();
    let spread = sum - weights.iter().map(|w| w * w).sum::<f64>() / sum;
    ((q - (k - 1) as f64) / spread).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::dersimonian_laird;

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
    }
}
