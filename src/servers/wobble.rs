//! Test fixture: each synthetic point's own round-to-round wobble. A paired comparison of two
//! points rests on their per-round ratio; where both move by the same pattern (or not at all)
//! that ratio is one constant, its standard error zero, and the verdict core rightly decides
//! nothing from it. Measured points each move their own way; so does every point here.
use crate::stats::interval::MIN_EQUIVALENCE_PAIRS;

/// Rounds each synthetic point is visited: the fewest "equivalent" is said from.
pub const ROUNDS: usize = MIN_EQUIVALENCE_PAIRS;

/// The relative wobble of the point `name` names in each round: in [-1, 1], reaching ±1, and
/// summing to 0 so the point's mean over its rounds is its figure. Drawn by
/// `synthetic::seeded_noise` (splitmix64) from an FNV-1a hash of `name`: every point has its
/// own pattern, and every run the same one.
pub fn wobble(name: &str) -> [f64; ROUNDS] {
    let state = name.bytes().fold(0xCBF2_9CE4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    });
    let noise = crate::analysis::synthetic::seeded_noise(state, ROUNDS);
    let draws: [f64; ROUNDS] = std::array::from_fn(|i| noise[i]);
    let mean = draws.iter().sum::<f64>() / ROUNDS as f64;
    let peak = draws.iter().map(|d| (d - mean).abs()).fold(0.0, f64::max);
    draws.map(|d| (d - mean) / peak)
}

#[test]
fn a_points_wobble_is_centred_reaches_one_and_is_its_own() {
    let a = wobble("epoll at 5");
    assert!(a.iter().sum::<f64>().abs() < 1e-12, "{a:?}");
    let peak = a.iter().map(|x| x.abs()).fold(0.0, f64::max);
    assert!((peak - 1.0).abs() < 1e-12, "{a:?}");
    assert_eq!(a, wobble("epoll at 5"), "the same point, the same pattern");
    let b = wobble("select at 5");
    let ratios: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (1.0 + 0.1 * x) / (1.0 + 0.1 * y))
        .collect();
    let spread = ratios.iter().copied().fold(f64::MIN, f64::max)
        - ratios.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        spread > 0.05,
        "two points' ratio varies round to round: {ratios:?}"
    );
}
