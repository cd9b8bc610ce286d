//! Simulated sweeps under the adaptive rule (`sweep::adaptive`), seeded. Each group holds
//! the default sweep's two crossover questions (gather and zerocopy against copy), so each
//! round visits three points: a shared regime that cancels in the ratios, and 5 % spread per
//! visit. The pilot of 4 rounds, the plan the sweep makes from it, adaptive rounds in the
//! sweep's order (`round_groups`) until a budget in group-rounds runs out, then each
//! question's cells judged as one family (Holm for beats/slower, Benjamini–Hochberg for
//! equivalence, margin ±5 %) at the last look's α, as the report judges them (the pilot's look
//! at α = 0.01, the last at 0.04). Each rate is printed (`--nocapture`); each assertion is
//! shown to fail without the look correction, the family correction or the margin it rests on.
use bytepath::analysis::crossover_rule::PILOT_ALPHA;
use bytepath::stats::verdict::{judge_at, Correction, Family, LogEstimate, Verdict, ALPHA};
use bytepath::stats::visits::paired_ratio;
use bytepath::sweep::adaptive::{plan, round_groups, Pilot, PilotCell, Targets};

const REPORTS: usize = 1000;
const PILOT: usize = 4;
const VISIT_SPREAD: f64 = 0.05;
/// Two binomial standard errors of a rate near 5 % over 1,000 reports.
const SIMULATION_NOISE: f64 = 0.014;
/// The default sweep: 24 groups (6 sizes × 4 thread counts) of 4 mechanisms, `--budget` per
/// point, one counter round after the pilot. A visit of the default sweep cost 0.137 s of the
/// budget on this VM (100 ms + 25 ms warm-up + set-up; mean over a default sweep's visits).
const GROUPS: usize = 24;
const QUESTIONS: usize = 2;
const VISIT_COST_S: f64 = 0.137;
const DEFAULT_BUDGET_S: f64 = 3.5;

fn normal(rng: &mut fastrand::Rng) -> f64 {
    let (u, v) = (rng.f64().max(f64::MIN_POSITIVE), rng.f64());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// One round of a group whose questions' true ratios are `ratios`: each challenger's and the
/// shared baseline's figures.
fn round(rng: &mut fastrand::Rng, ratios: &[f64; QUESTIONS]) -> [(f64, f64); QUESTIONS] {
    let regime = 10.0 * (1.0 + 0.2 * normal(rng)).max(0.2);
    let mut visit = |ratio: f64| regime * ratio * (1.0 + VISIT_SPREAD * normal(rng)).max(0.01);
    let baseline = visit(1.0);
    ratios.map(|r| (visit(r), baseline))
}

/// Adaptive group-rounds the budget leaves after the pilot and the counter round:
/// `budget_s` per point over the whole sweep, every point of a group visited each round.
fn rounds_left(budget_s: f64) -> usize {
    let per_point = budget_s / VISIT_COST_S;
    ((per_point - PILOT as f64 - 1.0) * GROUPS as f64).max(0.0) as usize
}

/// How a simulated sweep is judged: each look's α, the margin, and the family correction
/// for beats/slower (Holm, or none to show what it buys).
#[derive(Clone, Copy)]
struct Rule {
    pilot_alpha: f64,
    final_alpha: f64,
    margin: f64,
    holm: bool,
}

/// The sweep's rule: α split between the looks.
const RULE: Rule = Rule {
    pilot_alpha: PILOT_ALPHA,
    final_alpha: ALPHA - PILOT_ALPHA,
    margin: 0.05,
    holm: true,
};

/// Both looks at the whole α: what the look correction guards against.
const NO_LOOK_CORRECTION: Rule = Rule {
    pilot_alpha: ALPHA,
    final_alpha: ALPHA,
    ..RULE
};

/// One simulated sweep: group `g`'s questions with true ratios `truth[g]`, the plan from its
/// pilot, and `budget` adaptive group-rounds. Returns each question's final family.
fn sweep(
    rng: &mut fastrand::Rng,
    truth: &[[f64; QUESTIONS]],
    budget: usize,
    rule: Rule,
) -> Vec<Family> {
    let mut rounds: Vec<Vec<[(f64, f64); QUESTIONS]>> = truth
        .iter()
        .map(|r| (0..PILOT).map(|_| round(rng, r)).collect())
        .collect();
    let pairs = |rounds: &[[(f64, f64); QUESTIONS]], q: usize| -> Vec<(f64, f64)> {
        rounds.iter().map(|r| r[q]).collect()
    };
    let pilot = Pilot {
        rounds: PILOT,
        groups: truth.len(),
        cells: (0..truth.len())
            .flat_map(|group| (0..QUESTIONS).map(move |question| (group, question)))
            .map(|(group, question)| PilotCell {
                group,
                question,
                pairs: pairs(&rounds[group], question),
            })
            .collect(),
        points: Vec::new(),
    };
    let targets = Targets {
        margin: rule.margin,
        ci: 0.02,
        max_rounds: 1000,
        rounds_left: budget,
        pilot_alpha: rule.pilot_alpha,
    };
    let plan = plan(&pilot, &targets);
    let mut left = budget;
    'rounds: loop {
        let made: Vec<usize> = rounds.iter().map(Vec::len).collect();
        let open = round_groups(&plan, &made);
        if open.is_empty() {
            break;
        }
        for g in open {
            if left == 0 {
                break 'rounds;
            }
            left -= 1;
            rounds[g].push(round(rng, &truth[g]));
        }
    }
    (0..QUESTIONS)
        .map(|q| {
            let estimates: Vec<LogEstimate> = rounds
                .iter()
                .map(|r| paired_ratio(&pairs(r, q)).expect("positive pairs"))
                .map(|r| LogEstimate::from_interval(&r))
                .collect();
            let corrections = (Correction::Holm, Correction::BenjaminiHochberg);
            let alpha = rule.final_alpha;
            let mut family = judge_at(&estimates, corrections, rule.margin, alpha);
            if !rule.holm {
                // Each cell judged alone: a family of one, so no correction.
                family.judged = estimates
                    .iter()
                    .map(|e| judge_at(&[*e], corrections, rule.margin, alpha).judged[0])
                    .collect();
            }
            family
        })
        .collect()
}

/// The share of `REPORTS` simulated sweeps in which `hit` holds.
fn rate(
    seed: u64,
    truth: &[[f64; QUESTIONS]],
    budget: usize,
    rule: Rule,
    hit: impl Fn(&[Family]) -> bool,
) -> f64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    let hits = (0..REPORTS)
        .filter(|_| hit(&sweep(&mut rng, truth, budget, rule)))
        .count();
    hits as f64 / REPORTS as f64
}

/// The mean over `REPORTS` simulated sweeps of the share of cells, among those `which`
/// picks, in state `state`; and the lowest such rate of any one cell.
fn cell_rate(
    seed: u64,
    truth: &[[f64; QUESTIONS]],
    budget: usize,
    which: impl Fn(usize, usize) -> bool,
    state: Verdict,
) -> (f64, f64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut hits = vec![[0usize; QUESTIONS]; truth.len()];
    for _ in 0..REPORTS {
        let families = sweep(&mut rng, truth, budget, RULE);
        for (q, family) in families.iter().enumerate() {
            for (g, j) in family.judged.iter().enumerate() {
                hits[g][q] += usize::from(j.state == state);
            }
        }
    }
    let picked: Vec<f64> = (0..truth.len())
        .flat_map(|g| (0..QUESTIONS).map(move |q| (g, q)))
        .filter(|&(g, q)| which(g, q))
        .map(|(g, q)| hits[g][q] as f64 / REPORTS as f64)
        .collect();
    let mean = picked.iter().sum::<f64>() / picked.len() as f64;
    (mean, picked.iter().copied().fold(1.0, f64::min))
}

fn covers(families: &[Family], truth: &[[f64; QUESTIONS]]) -> bool {
    families.iter().enumerate().all(|(q, f)| {
        f.judged
            .iter()
            .zip(truth)
            .all(|(j, t)| j.low <= t[q] && t[q] <= j.high)
    })
}

fn claims(families: &[Family], q: usize) -> bool {
    families[q]
        .judged
        .iter()
        .any(|j| matches!(j.state, Verdict::Beats | Verdict::Slower))
}

#[test]
fn the_default_budget_leaves_adaptive_rounds() {
    // 3.5 s per point at 0.137 s a visit: 25.5 visits of each point, 5 of them the pilot and
    // the counter round.
    assert_eq!(rounds_left(DEFAULT_BUDGET_S), 493);
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_bytepath"))
        .args(["sweep", "--help"])
        .output()
        .expect("bytepath runs");
    let help = String::from_utf8_lossy(&help.stdout);
    let default = format!("[default: {DEFAULT_BUDGET_S}s]");
    assert!(
        help.contains(&default),
        "the simulation's budget is the sweep's: {help}"
    );
}

#[test]
fn one_groups_interval_covers_its_true_ratio_at_the_nominal_rate_under_the_adaptive_rule() {
    // One group at a time (each question a family of one): the pilot stops it only when both
    // cells are decided; otherwise it gets 40 more rounds and is judged again. Where the other
    // question is settled at the pilot (a true 3.0), the first one's false claim at the pilot
    // alone stops the group: that is the case the split of α between the looks is for.
    for truth in [[1.0, 1.0], [1.04, 1.04], [1.0, 3.0]] {
        let truth = [truth];
        let cover = |rule| rate(5, &truth, 40, rule, |f| covers(&f[..1], &truth));
        let (split, whole) = (cover(RULE), cover(NO_LOOK_CORRECTION));
        eprintln!("true ratios {:?}, one group, 40 adaptive rounds: the first question's final interval covers its ratio in {split} of 1,000 reports with α split between the looks, {whole} with α at each", truth[0]);
        assert!(split >= 0.95 - SIMULATION_NOISE, "{split}");
        if truth[0][1] == 3.0 {
            assert!(
                whole < 0.95 - SIMULATION_NOISE,
                "without the look correction this test must fail: {whole}"
            );
        }
    }
}

#[test]
fn with_no_true_effect_the_default_sweep_claims_in_at_most_5_percent_of_reports() {
    let truth = [[1.0; QUESTIONS]; GROUPS];
    let budget = rounds_left(DEFAULT_BUDGET_S);
    let claim = |rule| rate(6, &truth, budget, rule, |f| claims(f, 0));
    let with_holm = claim(RULE);
    let one_look = claim(NO_LOOK_CORRECTION);
    let no_holm = claim(Rule {
        holm: false,
        ..RULE
    });
    // Each question's family keeps its own error rate: its intervals all cover together.
    let all_covered = rate(6, &truth, budget, RULE, |f| covers(&f[..1], &truth));
    eprintln!("no effect, 24 groups, {budget} adaptive group-rounds (default budget): a beats/slower claim in a question's report in {with_holm} of reports with Holm and α split between the looks, {one_look} with α at each look, {no_holm} without Holm; every Holm interval of the first question's family covers in {all_covered}");
    assert!(with_holm <= 0.05 + SIMULATION_NOISE, "{with_holm}");
    assert!(all_covered >= 0.95 - SIMULATION_NOISE, "{all_covered}");
    assert!(
        no_holm > 0.05 + SIMULATION_NOISE,
        "without the family correction this test must fail: {no_holm}"
    );
}

#[test]
fn at_the_default_budget_a_true_15_percent_effect_reads_beats_and_a_true_ratio_of_one_equivalent_in_80_percent(
) {
    // One size of the first question 15 % ahead; every other cell at 1.00.
    let mut truth = [[1.0; QUESTIONS]; GROUPS];
    truth[0][0] = 1.15;
    let budget = rounds_left(DEFAULT_BUDGET_S);
    let beats = rate(7, &truth, budget, RULE, |f| {
        f[0].judged[0].state == Verdict::Beats
    });
    let null = |g: usize, q: usize| (g, q) != (0, 0);
    let (equivalent, lowest) = cell_rate(8, &truth, budget, null, Verdict::Equivalent);
    let no_rounds = rate(7, &truth, 0, RULE, |f| {
        f[0].judged[0].state == Verdict::Beats
    });
    let (pilot_only, _) = cell_rate(8, &truth, 0, null, Verdict::Equivalent);
    eprintln!("true 1.15 at one size, 5 % per-visit spread, default budget ({budget} adaptive group-rounds): beats in {beats} of reports ({no_rounds} from the pilot alone); the 47 cells at 1.00 read equivalent within ±5 % in {equivalent} of reports on average (lowest cell {lowest}; {pilot_only} from the pilot alone)");
    assert!(beats >= 0.80, "{beats}");
    assert!(equivalent >= 0.80, "{equivalent}");
    assert!(no_rounds < 0.80 && pilot_only < 0.80);
}

#[test]
fn without_a_margin_a_true_ratio_of_one_never_reads_equivalent() {
    let truth = [[1.0; QUESTIONS]; GROUPS];
    let budget = rounds_left(DEFAULT_BUDGET_S);
    let rule = Rule {
        margin: 1e-6,
        ..RULE
    };
    let equivalent = rate(9, &truth, budget, rule, |f| {
        f[0].judged[0].state == Verdict::Equivalent
    });
    eprintln!("true 1.00, default budget, margin 0: equivalent in {equivalent} of reports");
    assert!(
        equivalent < 0.80,
        "without a margin the equivalence rate must fail its target: {equivalent}"
    );
}
