//! Simulated reports of a fixed number of rounds, seeded, through the functions a crossover
//! answer is judged with (`paired_ratio`, `verdict::judge_at` at the α
//! `crossover_rule::Settings` gives a study of one look): per-round paired ratios of two
//! mechanisms visited back to back, one paired interval per cell, the cells of a question (6
//! sizes × 4 thread counts, the default sweep) judged as one family (Holm for beats/slower,
//! Benjamini–Hochberg for equivalence, margin ±5 %). The noise is this machine's
//! (`tests/data/noise.json`, read by `common::noise`): a regime both points of a round share
//! (it cancels), and each point's own AR(1) log-noise, so that a pair's per-round log-ratio
//! spread is drawn from the file's `per_cell_sd` at its pooled ρ. Each rate is printed
//! (`--nocapture`) and each assertion is shown to fail without the correction or the margin
//! it rests on. (`adaptive_simulation` runs the same judgement after the sweep's rounds.)
mod common;

use bytepath::analysis::crossover_rule::Settings;
use bytepath::stats::verdict::{judge_at, Correction, Family, LogEstimate, Verdict};
use bytepath::stats::visits::paired_ratio;
use common::noise::{self, ar1, normal, Noise, Spread};

const CELLS: usize = 24;
/// Reports per rate: two binomial standard errors of a rate near 5 % over 1,000 reports are
/// 1.4 points; near 80 % over 500 reports, 3.6 points.
const REPORTS: usize = 1000;
const SIMULATION_NOISE: f64 = 0.014;
const MARGIN: f64 = 0.05;

/// How a report's pairs are noisy.
#[derive(Clone, Copy)]
struct Model {
    spread: Spread,
    rho: f64,
}

/// One cell's pairs over `rounds` rounds at true ratio `ratio`.
fn cell(
    rng: &mut fastrand::Rng,
    (model, noise): (Model, &Noise),
    ratio: f64,
    rounds: usize,
) -> Vec<(f64, f64)> {
    let [a, b] = [(); 2].map(|_| {
        let sd = model.spread.point_sd(rng, noise);
        ar1(rng, rounds, sd, model.rho)
    });
    (0..rounds)
        .map(|i| {
            let regime = noise.visit_log_sd * normal(rng);
            let challenger = 10.0 * ratio * (regime + a[i]).exp();
            (challenger, 10.0 * (regime + b[i]).exp())
        })
        .collect()
}

/// One report: every cell's paired estimate over `rounds` rounds, with true ratios `truth`.
fn report(
    rng: &mut fastrand::Rng,
    world: (Model, &Noise),
    truth: &[f64],
    rounds: usize,
) -> Vec<LogEstimate> {
    truth
        .iter()
        .map(|ratio| {
            let pairs = cell(rng, world, *ratio, rounds);
            LogEstimate::from_interval(&paired_ratio(&pairs).expect("positive pairs"))
        })
        .collect()
}

/// The family as a study of one look judges it (`crossover::judge`), or each cell alone.
fn judged(estimates: &[LogEstimate], corrected: bool, margin: f64) -> Family {
    let corrections = (Correction::Holm, Correction::BenjaminiHochberg);
    let alpha = Settings::default().alpha();
    let mut family = judge_at(estimates, corrections, margin, alpha);
    if !corrected {
        // A family of one per cell: what an uncorrected answer did.
        family.judged = estimates
            .iter()
            .map(|e| judge_at(&[*e], corrections, margin, alpha).judged[0])
            .collect();
    }
    family
}

/// The share of `reports` reports in which `hit` holds.
fn rate(
    seed: u64,
    (model, truth, rounds, reports): (Model, &[f64], usize, usize),
    hit: impl Fn(&[LogEstimate]) -> bool,
) -> f64 {
    let noise = noise::measured();
    let mut rng = fastrand::Rng::with_seed(seed);
    let hits = (0..reports)
        .filter(|_| hit(&report(&mut rng, (model, &noise), truth, rounds)))
        .count();
    hits as f64 / reports as f64
}

fn any_claim(f: &Family) -> bool {
    f.judged
        .iter()
        .any(|j| matches!(j.state, Verdict::Beats | Verdict::Slower))
}

/// Each pair's spread drawn from the file, at ρ `rho`.
fn measured(rho: f64) -> Model {
    Model {
        spread: Spread::Measured,
        rho,
    }
}

/// Every pair at the median of the file's per-cell spreads (both sweeps), rounds independent:
/// what the power of a fixed number of rounds is stated at.
fn median_pair() -> (Model, f64) {
    let mut spreads = noise::measured().per_cell_sd;
    spreads.sort_by(f64::total_cmp);
    let n = spreads.len();
    let median = (spreads[(n - 1) / 2] + spreads[n / 2]) / 2.0;
    let model = Model {
        spread: Spread::Fixed(median),
        rho: 0.0,
    };
    (model, median)
}

#[test]
fn with_no_true_effect_a_claim_appears_in_at_most_5_percent_of_reports() {
    let truth = [1.0; CELLS];
    let file_rho = noise::measured().rho_pooled;
    for (rho, rounds) in [(0.0, 5), (0.0, 16), (file_rho, 16)] {
        let model = measured(rho);
        let corrected = rate(1, (model, &truth, rounds, REPORTS), |e| {
            any_claim(&judged(e, true, MARGIN))
        });
        let raw = rate(1, (model, &truth, rounds, REPORTS / 10), |e| {
            any_claim(&judged(e, false, MARGIN))
        });
        eprintln!("no effect, 24 cells, {rounds} rounds, spreads from noise.json, ρ = {rho:.3}: a beats/slower claim in {corrected} of reports with Holm, {raw} uncorrected");
        assert!(corrected <= 0.05 + SIMULATION_NOISE, "{corrected}");
        assert!(
            raw > 0.05 + SIMULATION_NOISE,
            "uncorrected {raw}: without Holm this test must fail"
        );
    }
}

#[test]
fn a_true_15_percent_effect_reads_beats_at_its_cell_in_at_least_80_percent_at_60_rounds() {
    // Alone among 23 cells at 1.00, the effect is tested at Holm's strictest level.
    let (model, median) = median_pair();
    let mut truth = [1.0; CELLS];
    truth[CELLS - 1] = 1.15;
    let beats = |rounds| {
        rate(2, (model, &truth, rounds, REPORTS / 2), |e| {
            judged(e, true, MARGIN).judged[CELLS - 1].state == Verdict::Beats
        })
    };
    let (at10, at60) = (beats(10), beats(60));
    eprintln!("true 1.15 among 24 cells at the file's median pair spread {median:.3}: beats in {at10} of reports at 10 rounds, {at60} at 60 rounds");
    assert!(at60 >= 0.80, "{at60}");
    assert!(
        at10 < 0.80,
        "10 rounds must not be enough at this spread: {at10}"
    );
}

#[test]
fn a_true_ratio_of_one_reads_equivalent_in_at_least_80_percent_at_200_rounds() {
    let (model, median) = median_pair();
    let truth = [1.0; CELLS];
    let equivalent = |rounds, margin| {
        rate(3, (model, &truth, rounds, REPORTS / 2), |e| {
            judged(e, true, margin).judged[0].state == Verdict::Equivalent
        })
    };
    // A 90 % interval inside ±5 % at a per-round spread s needs about (2.5 s / 0.049)² rounds:
    // some 130 at the median spread, where a difference of 15 % needed some 50.
    let (at30, at200) = (equivalent(30, MARGIN), equivalent(200, MARGIN));
    let no_margin = equivalent(200, 1e-6);
    eprintln!("true 1.00 among 24 cells at the file's median pair spread {median:.3}: equivalent within ±5 % in {at30} of reports at 30 rounds, {at200} at 200; {no_margin} with no margin");
    assert!(at200 >= 0.80, "{at200}");
    assert!(no_margin < 0.80, "without a margin this test must fail");
}

#[test]
fn the_holm_intervals_cover_every_true_ratio_at_once_in_95_percent_of_reports() {
    let truth: Vec<f64> = (0..CELLS).map(|i| 0.9 + 0.01 * i as f64).collect();
    let simultaneous = |corrected| {
        rate(4, (measured(0.0), &truth, 5, REPORTS), |e| {
            let f = judged(e, corrected, MARGIN);
            f.judged
                .iter()
                .zip(&truth)
                .all(|(j, t)| j.low <= *t && *t <= j.high)
        })
    };
    let (holm, raw) = (simultaneous(true), simultaneous(false));
    eprintln!("all 24 true ratios inside their intervals, 5 rounds, spreads from noise.json: {holm} of reports with Holm's levels, {raw} at 95 % each");
    assert!(holm >= 0.95 - SIMULATION_NOISE, "{holm}");
    assert!(raw < 0.5, "at 95 % each this test must fail: {raw}");
}
