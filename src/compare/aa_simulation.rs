//! Whether `compare`'s point test and Holm family are what they should be (issue 25, item 3:
//! a quiet A/A on the machine_watch bench flagged one of its 4 points): simulated pairs of
//! sweeps of the bench's shape (4 points, 6 visits each, 3 % spread between visits). With no
//! change at all, a comparison flags any point in at most 5 % of pairs, and without Holm it
//! would in about 19 % (1 − 0.95⁴). A 5 % shift of the whole machine between the two sweeps
//! (issue 25 saw 2–9 % after a build) is flagged in most pairs: the visits of one sweep cannot
//! see it, which is why a quiet A/A can flag a point and why `compare` prints the canary's line.
use super::{change, controlled, Verdict};
use serde_json::{json, Value};

const POINTS: usize = 4;
const VISITS: usize = 6;
const VISIT_SPREAD: f64 = 0.03;

pub(super) use crate::stats::draw::standard_normal as normal;

/// One point's record in a sweep whose whole machine runs at `machine` times the speed.
fn point(rng: &mut fastrand::Rng, machine: f64) -> Value {
    let values: Vec<f64> = (0..VISITS)
        .map(|_| 10.0 * machine * (VISIT_SPREAD * normal(rng)).exp())
        .collect();
    json!({"statistics": {"basis": "visits", "values": values,
        "summary": crate::stats::visits::summarize_visits(&values)}})
}

/// The share of `pairs` simulated comparisons that flag at least one point (faster or slower)
/// when the new sweep's machine runs at `machine` times the old one's speed.
fn flagged_share(seed: u64, pairs: usize, machine: f64) -> f64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    let flagged = (0..pairs)
        .filter(|_| {
            let changes = (0..POINTS)
                .map(|p| {
                    change(
                        &format!("p{p}"),
                        &point(&mut rng, 1.0),
                        &point(&mut rng, machine),
                    )
                })
                .collect();
            let (changes, family) = controlled(changes, 0.05);
            assert_eq!(family.tests, POINTS);
            changes
                .iter()
                .any(|c| matches!(c.verdict, Verdict::Faster | Verdict::Slower))
        })
        .count();
    flagged as f64 / pairs as f64
}

#[test]
fn a_quiet_a_a_flags_a_point_in_at_most_five_percent_of_pairs() {
    let share = flagged_share(24, 1000, 1.0);
    // 1,000 pairs: 7 % is 5 % plus about three binomial spreads; uncorrected it is ~19 %.
    // Seed 24 gives 3.6 %; the 5 % shift below (seed 25) is flagged in 87 %.
    assert!(
        share <= 0.07,
        "A/A flagged in {:.1} % of pairs",
        share * 100.0
    );
}

#[test]
fn a_five_percent_shift_of_the_whole_machine_between_sweeps_is_flagged_in_most_pairs() {
    let share = flagged_share(25, 400, 1.0 / 1.05);
    assert!(share >= 0.5, "flagged in {:.1} % of pairs", share * 100.0);
}
