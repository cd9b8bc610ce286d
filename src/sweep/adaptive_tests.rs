use super::*;
use crate::analysis::crossover_rule::ADAPTIVE_LOOKS;

const TARGETS: Targets = Targets {
    margin: 0.05,
    ci: 0.02,
    max_rounds: 1000,
    looks: ADAPTIVE_LOOKS,
};

/// Four rounds of (challenger, baseline) with the challenger `ratio` times the baseline and a
/// spread of about `spread` in the per-round log ratio.
fn pairs(ratio: f64, spread: f64) -> Vec<(f64, f64)> {
    [1.0, -1.0, 0.5, -0.5]
        .iter()
        .map(|z| (10.0 * ratio * (z * spread).exp(), 10.0))
        .collect()
}

fn pilot(cells: Vec<PilotCell>, points: Vec<(usize, Vec<f64>)>, groups: usize) -> Pilot {
    Pilot {
        rounds: 4,
        groups,
        cells,
        points,
    }
}

#[test]
fn a_group_decided_at_the_pilot_gets_no_more_rounds_and_an_open_one_gets_them_from_its_spread() {
    let cell = |group, ratio, spread| PilotCell {
        group,
        question: 0,
        pairs: pairs(ratio, spread),
    };
    let p = pilot(
        vec![cell(0, 2.0, 0.01), cell(1, 1.0, 0.05), cell(2, 1.0, 0.1)],
        vec![],
        3,
    );
    let plan = plan(&p, &TARGETS);
    assert_eq!(
        (plan[0].why, plan[0].planned_rounds),
        (Why::DecidedAtPilot, 4)
    );
    assert_eq!(plan[1].why, Why::Undecided);
    assert_eq!(plan[1].undecided, [0]);
    let s = plan[1].pilot_spread.unwrap();
    assert_eq!(plan[1].planned_rounds, rounds_to_decide(s, 3, 0.05, (2, 4)));
    assert!(
        plan[2].planned_rounds > plan[1].planned_rounds,
        "twice the spread, more rounds: {plan:?}"
    );
}

#[test]
fn the_total_depends_on_the_pilots_spread_not_on_its_ratio() {
    let with_ratio = |ratio| {
        let cells = vec![PilotCell {
            group: 0,
            question: 0,
            pairs: pairs(ratio, 0.08),
        }];
        plan(&pilot(cells, vec![], 1), &TARGETS)[0].clone()
    };
    let (a, b) = (with_ratio(1.0), with_ratio(1.04));
    assert_eq!(a.why, Why::Undecided);
    assert_eq!(b.why, Why::Undecided);
    assert_eq!(a.planned_rounds, b.planned_rounds);
}

#[test]
fn rounds_to_decide_fit_both_intervals_inside_the_margin() {
    // 5 % per visit on each side: a per-round log-ratio SD of about 7 %. Holm's strictest
    // level over 24 cells at α / 2 is 0.05 / 96 two-sided per side, plus the equivalence
    // interval; the report's interval is Stein's, on the pilot's 3 degrees of freedom, so the
    // quantiles are t(3)'s: far more rounds than the ≈ 58 normal quantiles would ask.
    let n = rounds_to_decide(0.0707, 24, 0.05, (2, 4));
    let at = |n: f64| {
        let alpha = ALPHA / 2.0;
        (t_quantile(1.0 - alpha / 48.0, 3.0) + t_quantile(1.0 - alpha, 3.0)) * 0.0707 / n.sqrt()
    };
    assert!(at(n as f64) <= 1.05f64.ln() && at(n as f64 - 1.0) > 1.05f64.ln());
    assert!(n > 66, "{n}");
    assert!(
        rounds_to_decide(0.0707, 24, 0.05, (2, 10)) < n,
        "a larger pilot, fewer rounds"
    );
    assert!(
        rounds_to_decide(0.0707, 1, 0.05, (2, 4)) < n,
        "fewer tests, fewer rounds"
    );
    assert!(
        rounds_to_decide(0.0707, 24, 0.10, (2, 4)) < n,
        "a wider margin, fewer rounds"
    );
}

#[test]
fn a_group_with_no_crossover_gets_the_rounds_its_spread_needs_for_the_ci_target() {
    // Relative SD 4 %: ±2 % at 95 % needs (t · 0.04 / 0.02)² ≈ 18 rounds.
    let values = vec![10.4, 9.6, 10.2, 9.8];
    let p = pilot(vec![], vec![(0, values.clone())], 1);
    let plan = plan(&p, &TARGETS);
    assert_eq!(plan[0].why, Why::PointInterval);
    let n = plan[0].planned_rounds;
    let s = plan[0].pilot_spread.unwrap();
    assert!((s - 0.0365).abs() < 0.001, "{s}");
    assert!(t_quantile(0.975, n as f64 - 1.0) * s / (n as f64).sqrt() <= 0.02);
    assert!(t_quantile(0.975, n as f64 - 2.0) * s / (n as f64 - 1.0).sqrt() > 0.02);
}

#[test]
fn a_cell_without_an_interval_gets_no_rounds_and_the_cap_holds() {
    let broken = PilotCell {
        group: 0,
        question: 0,
        pairs: vec![(10.0, 0.0), (10.0, 0.0)],
    };
    let wide = PilotCell {
        group: 1,
        question: 1,
        pairs: pairs(1.0, 0.5),
    };
    let targets = Targets {
        max_rounds: 12,
        ..TARGETS
    };
    let plan = plan(&pilot(vec![broken, wide], vec![], 2), &targets);
    assert_eq!((plan[0].why, plan[0].planned_rounds), (Why::NotJudged, 4));
    assert_eq!(plan[1].planned_rounds, 12);
}

#[test]
fn a_round_visits_the_groups_short_of_their_totals_furthest_first() {
    let g = |group, planned_rounds| GroupRounds {
        group,
        why: Why::Undecided,
        pilot_rounds: 4,
        planned_rounds,
        pilot_spread: None,
        undecided: vec![],
    };
    let plan = [g(0, 4), g(1, 10), g(2, 8), g(3, 10)];
    assert_eq!(round_groups(&plan, &[4, 4, 4, 4]), [1, 3, 2]);
    assert_eq!(round_groups(&plan, &[4, 9, 8, 4]), [3, 1]);
}
