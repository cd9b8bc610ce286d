//! Simulated sweeps, seeded, through the same path a crossover answer takes: per-round paired
//! ratios of two mechanisms (visited back to back; a regime shared by both that cancels; each
//! visit with its own spread), one paired interval per cell, the cells of a question (6 sizes
//! × 4 thread counts, the default sweep) judged as one family (Holm for beats/slower,
//! Benjamini–Hochberg for equivalence, margin ±5 %). Each rate is printed (`--nocapture`) and
//! each assertion is shown to fail without the correction or the margin it rests on.
use bytepath::stats::verdict::{judge_with, Correction, Family, LogEstimate, Verdict};
use bytepath::stats::visits::paired_ratio;

const CELLS: usize = 24;
const REPORTS: usize = 1000;
/// Each visit's own spread (not shared with its pair): 5 %.
const VISIT_SPREAD: f64 = 0.05;
/// Two binomial standard errors of a rate near 5 % over `REPORTS` reports: a rate at the
/// nominal level reads up to this much above it by chance.
const SIMULATION_NOISE: f64 = 0.014;

fn normal(rng: &mut fastrand::Rng) -> f64 {
    let (u, v) = (rng.f64().max(f64::MIN_POSITIVE), rng.f64());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// One report: every cell's paired estimate over `rounds` rounds, with true ratios `truth`.
fn report(rng: &mut fastrand::Rng, truth: &[f64], rounds: usize) -> Vec<LogEstimate> {
    truth
        .iter()
        .map(|ratio| {
            let pairs: Vec<(f64, f64)> = (0..rounds)
                .map(|_| {
                    let regime = 10.0 * (1.0 + 0.2 * normal(rng)).max(0.2);
                    let a = regime * ratio * (1.0 + VISIT_SPREAD * normal(rng));
                    let b = regime * (1.0 + VISIT_SPREAD * normal(rng));
                    (a, b)
                })
                .collect();
            LogEstimate::from_interval(&paired_ratio(&pairs).expect("positive pairs"))
        })
        .collect()
}

fn judged(estimates: &[LogEstimate], corrected: bool, margin: f64) -> Family {
    let (d, e) = match corrected {
        true => (Correction::Holm, Correction::BenjaminiHochberg),
        // A family of one per cell: what an uncorrected answer did.
        false => return uncorrected(estimates, margin),
    };
    judge_with(estimates, d, e, margin)
}

fn uncorrected(estimates: &[LogEstimate], margin: f64) -> Family {
    let mut family = judge_with(&estimates[..1], Correction::Holm, Correction::Holm, margin);
    family.judged = estimates
        .iter()
        .map(|e| judge_with(&[*e], Correction::Holm, Correction::Holm, margin).judged[0])
        .collect();
    family
}

/// The share of `REPORTS` reports in which `hit` holds.
fn rate(seed: u64, truth: &[f64], rounds: usize, hit: impl Fn(&[LogEstimate]) -> bool) -> f64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    let hits = (0..REPORTS)
        .filter(|_| hit(&report(&mut rng, truth, rounds)))
        .count();
    hits as f64 / REPORTS as f64
}

fn any_claim(f: &Family) -> bool {
    f.judged
        .iter()
        .any(|j| matches!(j.state, Verdict::Beats | Verdict::Slower))
}

#[test]
fn with_no_true_effect_a_claim_appears_in_at_most_5_percent_of_reports() {
    let truth = [1.0; CELLS];
    let corrected = rate(1, &truth, 5, |e| any_claim(&judged(e, true, 0.05)));
    let raw = rate(1, &truth, 5, |e| any_claim(&judged(e, false, 0.05)));
    eprintln!("no effect, 24 cells, 5 rounds: a beats/slower claim in {corrected} of reports with Holm, {raw} uncorrected");
    assert!(corrected <= 0.05 + SIMULATION_NOISE, "{corrected}");
    assert!(
        raw > 0.5,
        "uncorrected {raw}: without Holm this test must fail"
    );
}

#[test]
fn a_true_15_percent_effect_reads_beats_at_its_cell_in_at_least_80_percent() {
    let mut truth = [1.0; CELLS];
    truth[CELLS - 1] = 1.15;
    let beats = |rounds| {
        rate(2, &truth, rounds, |e| {
            judged(e, true, 0.05).judged[CELLS - 1].state == Verdict::Beats
        })
    };
    let (at5, at10) = (beats(5), beats(10));
    eprintln!("true 1.15 among 24 cells at 5 % per-visit spread: beats in {at5} of reports at 5 rounds, {at10} at 10 rounds");
    assert!(at10 >= 0.80, "{at10}");
}

#[test]
fn a_true_ratio_of_one_reads_equivalent_in_at_least_80_percent() {
    let truth = [1.0; CELLS];
    let equivalent = |rounds, margin| {
        rate(3, &truth, rounds, |e| {
            judged(e, true, margin).judged[0].state == Verdict::Equivalent
        })
    };
    // The per-round ratio spreads by about 7 % (two visits of 5 % each): a 90 % interval
    // inside ±5 % needs some 30 rounds, where a difference of 15 % needed 10.
    let (at20, at30) = (equivalent(20, 0.05), equivalent(30, 0.05));
    let no_margin = equivalent(30, 1e-6);
    eprintln!("true 1.00 among 24 cells at 5 % per-visit spread: equivalent within ±5 % in {at20} of reports at 20 rounds, {at30} at 30; {no_margin} with no margin");
    assert!(at30 >= 0.80, "{at30}");
    assert!(no_margin < 0.80, "without a margin this test must fail");
}

#[test]
fn the_holm_intervals_cover_every_true_ratio_at_once_in_95_percent_of_reports() {
    let truth: Vec<f64> = (0..CELLS).map(|i| 0.9 + 0.01 * i as f64).collect();
    let simultaneous = |corrected| {
        rate(4, &truth, 5, |e| {
            let f = judged(e, corrected, 0.05);
            f.judged
                .iter()
                .zip(&truth)
                .all(|(j, t)| j.low <= *t && *t <= j.high)
        })
    };
    let (holm, raw) = (simultaneous(true), simultaneous(false));
    eprintln!("all 24 true ratios inside their intervals: {holm} of reports with Holm's levels, {raw} at 95 % each");
    assert!(holm >= 0.95 - SIMULATION_NOISE, "{holm}");
    assert!(raw < 0.5, "at 95 % each this test must fail: {raw}");
}
