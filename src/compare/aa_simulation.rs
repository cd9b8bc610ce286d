//! Whether `compare`'s point test and Holm family are what they should be (issue 25, item 3:
//! a quiet A/A on the machine_watch bench flagged one of its 4 points): simulated pairs of
//! sweeps of the bench's shape (4 points, 6 visits each, 3 % spread between visits). With no
//! change at all, a comparison flags any point in at most 5 % of pairs, and without Holm it
//! would in about 19 % (1 − 0.95⁴). A 5 % shift of the whole machine between the two sweeps
//! (issue 25 saw 2–9 % after a build) is flagged in most pairs: the visits of one sweep cannot
//! see it, which is why a quiet A/A can flag a point and why `compare` prints the canary's line.
use super::{change, controlled, Verdict};
use crate::record::view::RunView;
use serde_json::json;

const POINTS: usize = 4;
const VISITS: usize = 6;
const VISIT_SPREAD: f64 = 0.03;

pub(super) use crate::stats::draw::standard_normal as normal;

/// One point's record of `visits` visits in a sweep whose whole machine runs at `machine`
/// times the speed.
fn point(rng: &mut fastrand::Rng, machine: f64, visits: usize) -> RunView {
    let values: Vec<f64> = (0..visits)
        .map(|_| 10.0 * machine * (VISIT_SPREAD * normal(rng)).exp())
        .collect();
    serde_json::from_value(json!({"statistics": {"basis": "visits", "values": values,
        "summary": crate::stats::visits::summarize_visits(&values)}}))
    .unwrap()
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
                        &point(&mut rng, 1.0, VISITS),
                        &point(&mut rng, machine, VISITS),
                    )
                })
                .collect();
            let (changes, family, _) = controlled(changes, 0.05);
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

/// The share of `pairs` simulated comparisons of `points` points (8 visits each) that flag
/// a point, when each point moves between the two sweeps by its own factor (log-normal,
/// spread `drift`), with the between-sweep spread (`controlled`) or without it.
fn drifting_flagged_share(seed: u64, pairs: usize, drift: f64, with_tau: bool) -> f64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    let flagged = (0..pairs)
        .filter(|_| {
            let changes: Vec<_> = (0..48)
                .map(|p| {
                    let moved = (drift * normal(&mut rng)).exp();
                    let old = point(&mut rng, 1.0, 8);
                    change(&format!("p{p}"), &old, &point(&mut rng, moved, 8))
                })
                .collect();
            if with_tau {
                let (changes, _, _) = controlled(changes, 0.05);
                return changes
                    .iter()
                    .any(|c| matches!(c.verdict, Verdict::Faster | Verdict::Slower));
            }
            let estimates: Vec<_> = changes
                .iter()
                .filter_map(|c| c.ratio.as_ref())
                .map(crate::stats::verdict::LogEstimate::from_interval)
                .collect();
            let holm = crate::stats::verdict::Correction::Holm;
            let family = crate::stats::verdict::judge_with(&estimates, holm, holm, 0.05);
            family.judged.iter().any(|j| {
                use crate::stats::verdict::Verdict as V;
                matches!(j.state, V::Beats | V::Slower)
            })
        })
        .count();
    flagged as f64 / pairs as f64
}

#[test]
fn points_that_move_apart_between_sweeps_flag_a_point_only_without_the_between_sweep_spread() {
    // 48 points, each moved by its own 4 % (log SD) between the sweeps, as bench/repeatability.sh
    // saw here (DerSimonian–Laird τ of 2.7–4.2 % in three of five pairs of the same build).
    let with_tau = drifting_flagged_share(26, 300, 0.04, true);
    let without = drifting_flagged_share(26, 300, 0.04, false);
    eprintln!("48 points drifting 4 % apart: a point flagged in {with_tau} of pairs with τ, {without} without");
    assert!(with_tau <= 0.07, "{with_tau}");
    assert!(
        without > 0.07,
        "without the between-sweep spread this test must fail: {without}"
    );
}
