//! This machine's measured noise, for the simulations: `tests/data/noise.json` (written by
//! `bench/noise.sh` and `bench/noise.py`, whose docstring says what each field means), its
//! variant "default". Every figure a simulation draws from comes from there, read here, so a
//! refreshed file (same format) changes the simulated noise without a code change.
//!
//! The model of one round of a group: a regime every point of the group shares (it cancels in
//! a ratio of two points of the round), and each point's own log-noise, an AR(1) series over
//! its rounds at lag-1 correlation ρ. Two points' own series at spreads s₁, s₂ give a per-round
//! log-ratio of spread √(s₁² + s₂²), itself AR(1) at ρ: the spread and ρ the bench measures.
use serde_json::Value;

/// The file, relative to the crate root.
pub const NOISE_JSON: &str = "tests/data/noise.json";

/// What the simulations draw from.
#[derive(Debug, Clone)]
pub struct Noise {
    /// Per-round log-ratio spread of each (size, flows) cell of a pair, sweeps A and B
    /// (`headline.{A,B}.per_cell_sd`): both sweeps are this machine.
    pub per_cell_sd: Vec<f64>,
    /// The median per-round log-ratio spread of a pair in each sweep
    /// (`headline.{A,B}.round_log_ratio_sd_median`).
    pub round_sd_median: [f64; 2],
    /// Pooled lag-1 autocorrelation of the per-round log-ratios, the mean of the two sweeps'
    /// `headline.{A,B}.rho_pooled`.
    pub rho_pooled: f64,
    /// One point's log visit means in one sweep (`visit_log_sd_median`): the spread of the
    /// regime a round's points share.
    pub visit_log_sd: f64,
}

fn number(v: &Value, path: &[&str]) -> f64 {
    let mut at = v;
    for key in path {
        at = &at[key];
    }
    at.as_f64()
        .unwrap_or_else(|| panic!("{NOISE_JSON}: no number at {}", path.join(".")))
}

/// The default variant of `tests/data/noise.json`.
pub fn measured() -> Noise {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(NOISE_JSON);
    let text = std::fs::read_to_string(&path).expect("tests/data/noise.json is checked in");
    let file: Value = serde_json::from_str(&text).expect("noise.json is JSON");
    let variant = file["variants"]
        .as_array()
        .and_then(|v| v.iter().find(|v| v["variant"] == "default"))
        .expect("noise.json has the default variant");
    let sweeps = ["A", "B"];
    let per_cell_sd: Vec<f64> = sweeps
        .iter()
        .flat_map(|s| {
            variant["headline"][s]["per_cell_sd"]
                .as_array()
                .expect("per_cell_sd")
                .iter()
                .map(|v| v.as_f64().expect("a spread"))
                .collect::<Vec<_>>()
        })
        .collect();
    let median = |s: &str| number(variant, &["headline", s, "round_log_ratio_sd_median"]);
    let rho = |s: &str| number(variant, &["headline", s, "rho_pooled"]);
    Noise {
        per_cell_sd,
        round_sd_median: [median("A"), median("B")],
        rho_pooled: (rho("A") + rho("B")) / 2.0,
        visit_log_sd: number(variant, &["visit_log_sd_median"]),
    }
}

/// A standard normal draw (Box–Muller).
pub fn normal(rng: &mut fastrand::Rng) -> f64 {
    let (u, v) = (rng.f64().max(f64::MIN_POSITIVE), rng.f64());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// `n` terms of a stationary AR(1) series of spread `sd` and lag-1 correlation `rho`.
pub fn ar1(rng: &mut fastrand::Rng, n: usize, sd: f64, rho: f64) -> Vec<f64> {
    let innovation = sd * (1.0 - rho * rho).sqrt();
    let mut x = sd * normal(rng);
    (0..n)
        .map(|_| {
            let now = x;
            x = rho * x + innovation * normal(rng);
            now
        })
        .collect()
}

/// How a simulation draws the spread of each pair.
#[derive(Debug, Clone, Copy)]
pub enum Spread {
    /// Every pair's per-round log-ratio spread is this.
    Fixed(f64),
    /// Each pair's drawn (uniformly, with replacement) from the file's `per_cell_sd`.
    Measured,
}

impl Spread {
    /// One point's own log-noise spread: a pair of two points each at this has the drawn
    /// per-round log-ratio spread.
    pub fn point_sd(self, rng: &mut fastrand::Rng, noise: &Noise) -> f64 {
        let pair = match self {
            Spread::Fixed(sd) => sd,
            Spread::Measured => noise.per_cell_sd[rng.usize(..noise.per_cell_sd.len())],
        };
        pair / std::f64::consts::SQRT_2
    }
}
