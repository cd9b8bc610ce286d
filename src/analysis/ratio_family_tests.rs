//! A per-size list judged as one family: what a 24-comparison list decides that each
//! comparison alone would not, and how it states its control.
use super::*;
use crate::stats::verdict::judge_one;
use crate::stats::visits::paired_ratio;

/// The paired ratio of 8 rounds whose log-ratios are `centre` ± `spread`, alternating.
fn rounds(centre: f64, spread: f64) -> RatioInterval {
    let pairs: Vec<(f64, f64)> = (0..8)
        .map(|i| {
            let d = if i % 2 == 0 { spread } else { -spread };
            ((centre + d).exp(), 1.0)
        })
        .collect();
    paired_ratio(&pairs).unwrap()
}

/// 23 cells at exactly 1 and, last, one 6 % apart whose 95 % interval just excludes 1.
fn null_list() -> Vec<Result<RatioInterval, String>> {
    let mut list: Vec<Result<RatioInterval, String>> =
        (0..23).map(|_| Ok(rounds(0.0, 0.05))).collect();
    list.push(Ok(rounds(0.06, 0.056)));
    list
}

#[test]
fn a_marginal_beats_alone_is_undecided_in_a_family_of_24() {
    let list = null_list();
    let marginal = list[23].as_ref().unwrap();
    assert_eq!(
        judge_one(marginal, 0.05).state,
        Verdict::Beats,
        "alone, at 95 %, the marginal cell would be called"
    );
    let f = judge(&list, 0.05);
    assert_eq!(f.family.tests, 24);
    let last = f.cells[23].as_ref().unwrap();
    assert_eq!(last.state, Verdict::Undecided, "{last:?}");
    assert!(
        last.confidence > 0.99,
        "shown at the family's level: {last:?}"
    );
    assert!(
        f.cells
            .iter()
            .all(|c| c.as_ref().unwrap().state != Verdict::Beats),
        "no claim from 24 null cells"
    );
    let shown = text(last, 0.05);
    assert!(shown.starts_with("undecided (1.06×, 99."), "{shown}");
}

#[test]
fn a_clear_difference_survives_the_family_and_a_missing_interval_keeps_its_reason() {
    let mut list = null_list();
    list[23] = Ok(rounds(0.3, 0.02));
    list.push(Err("sendfile and readsend at 4 KiB: 1 round(s)".into()));
    let f = judge(&list, 0.05);
    assert_eq!(
        f.family.tests, 24,
        "the comparison without an interval is no test"
    );
    assert_eq!(f.cells[23].as_ref().unwrap().state, Verdict::Beats);
    assert_eq!(
        f.cells[24],
        Err("sendfile and readsend at 4 KiB: 1 round(s)".into())
    );
    let shown = text(f.cells[23].as_ref().unwrap(), 0.05);
    assert!(
        shown.starts_with("1.35× (99.79 % CI"),
        "Holm's first step, 0.05/24: {shown}"
    );
}

#[test]
fn the_family_states_its_count_corrections_and_margin() {
    let f = judge(&null_list(), 0.03);
    assert_eq!(
        f.control(),
        "one family: 24 tests, Holm at α = 0.05 (Benjamini–Hochberg for equivalence), \
         equivalence margin ±3 %"
    );
    assert_eq!(
        judge(&[], 0.05).control(),
        "no comparison had an interval to test"
    );
    let names: Vec<String> = (0..24).map(|i| format!("cell {i}")).collect();
    let tested = f.tested("q?", &names).unwrap();
    assert_eq!(
        (tested.tests, tested.margin, tested.cells.len()),
        (24, 0.03, 24)
    );
    assert!(basis(0.03).contains("±3 %") && basis(0.03).contains("[0.97, 1.03]"));
}

#[test]
fn equivalence_is_held_at_the_margin_given() {
    // A tight tie: within ±5 %, but not within ±1 %.
    let tie = vec![
        Ok(rounds(0.0, 0.02)),
        Ok(rounds(0.0, 0.02)),
        Ok(rounds(0.0, 0.02)),
    ];
    let wide = judge(&tie, 0.05);
    assert!(wide
        .cells
        .iter()
        .all(|c| c.as_ref().unwrap().state == Verdict::Equivalent));
    let j = wide.cells[0].as_ref().unwrap();
    assert!(
        text(j, 0.05).starts_with("equivalent within ±5 % (1.00×, 90 % CI"),
        "{}",
        text(j, 0.05)
    );
    let narrow = judge(&tie, 0.01);
    assert!(narrow
        .cells
        .iter()
        .all(|c| c.as_ref().unwrap().state == Verdict::Undecided));
}
