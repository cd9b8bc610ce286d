//! Draws for the seeded simulations that check a statistic's coverage and error rates (the
//! verdicts, the adaptive rule, compare's families): one standard normal sampler, so every
//! simulation draws the same way.

/// A standard normal draw (Box–Muller) from a seeded generator.
pub fn standard_normal(rng: &mut fastrand::Rng) -> f64 {
    let (u, v) = (1.0 - rng.f64(), rng.f64());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_have_the_standard_normals_mean_spread_and_tail() {
        let mut rng = fastrand::Rng::with_seed(7);
        let z: Vec<f64> = (0..20_000).map(|_| standard_normal(&mut rng)).collect();
        let mean = z.iter().sum::<f64>() / z.len() as f64;
        let var = z.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (z.len() - 1) as f64;
        let beyond = z.iter().filter(|x| x.abs() > 1.96).count() as f64 / z.len() as f64;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.04,
            "{mean} {var}"
        );
        assert!((beyond - 0.05).abs() < 0.007, "{beyond}");
        assert!(z.iter().all(|x| x.is_finite()));
    }
}
