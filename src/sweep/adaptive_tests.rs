use super::*;
use crate::analysis::crossover_rule::PILOT_ALPHA;

const TARGETS: Targets = Targets {
    margin: 0.05,
    ci: 0.02,
    max_rounds: 1000,
    rounds_left: 40,
    pilot_alpha: PILOT_ALPHA,
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
fn a_group_decided_at_the_pilot_gets_no_more_rounds_and_the_open_ones_share_the_budget() {
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
    for open in &plan[1..] {
        assert_eq!(open.why, Why::Undecided);
        assert_eq!(open.undecided, [0]);
        // 40 group-rounds left, two groups open: 20 each, whatever their spreads.
        assert_eq!(open.planned_rounds, 4 + 20, "{plan:?}");
    }
}

#[test]
fn a_groups_total_follows_the_budget_and_the_other_open_groups_never_its_own_figures() {
    let open = |ratio, spread, others: usize, rounds_left| {
        let mut cells = vec![PilotCell {
            group: 0,
            question: 0,
            pairs: pairs(ratio, spread),
        }];
        cells.extend((1..=others).map(|group| PilotCell {
            group,
            question: 1,
            pairs: pairs(1.0, 0.08),
        }));
        let targets = Targets {
            rounds_left,
            ..TARGETS
        };
        plan(&pilot(cells, vec![], others + 1), &targets)[0].clone()
    };
    let base = open(1.0, 0.08, 1, 40);
    assert_eq!((base.why, base.planned_rounds), (Why::Undecided, 24));
    assert_eq!(open(1.04, 0.08, 1, 40).planned_rounds, 24, "its ratio");
    assert_eq!(open(1.0, 0.3, 1, 40).planned_rounds, 24, "its spread");
    assert_eq!(
        open(1.0, 0.08, 3, 40).planned_rounds,
        14,
        "more groups open"
    );
    assert_eq!(open(1.0, 0.08, 1, 2).planned_rounds, 5, "less budget");
    assert_eq!(open(1.0, 0.08, 1, 0).planned_rounds, 4, "no budget");
}

#[test]
fn a_group_with_no_crossover_shares_the_budget_whatever_its_own_spread_and_the_cap_holds() {
    // A group with no crossover cell is open like an undecided one: 40 group-rounds left, two
    // groups open, 20 each, whether its points' relative SD is 4 % or 40 %. Before, its total
    // followed its own spread (Stein's rule) while its answers reported the plain interval.
    let open = PilotCell {
        group: 1,
        question: 0,
        pairs: pairs(1.0, 0.08),
    };
    for values in [vec![10.4, 9.6, 10.2, 9.8], vec![14.0, 6.0, 12.0, 8.0]] {
        let p = pilot(vec![open.clone()], vec![(0, values)], 2);
        let plan = plan(&p, &TARGETS);
        assert_eq!(plan[0].why, Why::PointInterval);
        assert!(plan[0].pilot_spread.is_some(), "its spread is recorded");
        assert_eq!(
            (plan[0].planned_rounds, plan[1].planned_rounds),
            (24, 24),
            "{plan:?}"
        );
    }
    let capped = Targets {
        max_rounds: 12,
        ..TARGETS
    };
    let p = pilot(vec![open], vec![(0, vec![10.4, 9.6, 10.2, 9.8])], 2);
    let plan = super::plan(&p, &capped);
    assert_eq!((plan[0].planned_rounds, plan[1].planned_rounds), (12, 12));
}

#[test]
fn a_group_with_no_crossover_alone_takes_the_budget_and_records_its_spread() {
    let values = vec![10.4, 9.6, 10.2, 9.8];
    let p = pilot(vec![], vec![(0, values)], 1);
    let plan = plan(&p, &TARGETS);
    assert_eq!(plan[0].why, Why::PointInterval);
    assert_eq!(plan[0].planned_rounds, 44);
    let s = plan[0].pilot_spread.unwrap();
    assert!((s - 0.0365).abs() < 0.001, "{s}");
}

#[test]
fn a_cell_without_an_interval_gets_no_rounds() {
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
    let plan = plan(&pilot(vec![broken, wide], vec![], 2), &TARGETS);
    assert_eq!((plan[0].why, plan[0].planned_rounds), (Why::NotJudged, 4));
    assert_eq!(plan[1].planned_rounds, 44, "the open group takes all 40");
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

#[test]
fn a_pilot_of_four_rounds_decides_no_equivalence_however_tight() {
    // 1.00 with a 0.1 % spread: inside ±5 % by far, but four rounds may not say "equivalent",
    // so the group stays open for its share.
    let tight = PilotCell {
        group: 0,
        question: 0,
        pairs: pairs(1.0, 0.001),
    };
    let plan = plan(&pilot(vec![tight], vec![], 1), &TARGETS);
    assert_eq!((plan[0].why, plan[0].planned_rounds), (Why::Undecided, 44));
}

#[test]
fn the_pilots_look_widens_by_its_questions_rounds_autocorrelation() {
    // Four rounds whose log-ratios climb steadily (mean 0.6, SD 0.13): plain, 1.8× beats at
    // the pilot's α; a climb is lag-1 correlation, and widened by it the cell stays open.
    let climbing: Vec<(f64, f64)> = [-1.5, -0.5, 0.5, 1.5]
        .iter()
        .map(|z: &f64| (10.0 * (0.6 + 0.1 * z).exp(), 10.0))
        .collect();
    let alternating: Vec<(f64, f64)> = [-1.5, 0.5, -0.5, 1.5]
        .iter()
        .map(|z: &f64| (10.0 * (0.6 + 0.1 * z).exp(), 10.0))
        .collect();
    let cell = |pairs| PilotCell {
        group: 0,
        question: 0,
        pairs,
    };
    let p = pilot(vec![cell(climbing.clone())], vec![], 1);
    let rho = question_rho(&p)[0].1.unwrap();
    assert!(
        (rho.measured - 0.25).abs() < 1e-9 && rho.rho == 0.95,
        "{rho:?}"
    );
    assert_eq!(plan(&p, &TARGETS)[0].why, Why::Undecided);
    // The same values in an order with no lag-1 correlation: decided at the pilot.
    let p = pilot(vec![cell(alternating)], vec![], 1);
    assert_eq!(question_rho(&p)[0].1.unwrap().rho, 0.0);
    assert_eq!(plan(&p, &TARGETS)[0].why, Why::DecidedAtPilot);
}
