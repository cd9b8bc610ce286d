//! The bidir answer from synthetic points with known outcomes.
use super::*;
use crate::analysis::point::from_value as from_record;
use crate::analysis::synthetic::{record, Shape};

fn point(shape: Shape, bidir: bool) -> Point {
    let mut r = record(&shape);
    if bidir {
        r["bidir"] = serde_json::json!({"forward_gbps": shape.mean, "sum_gbps": 2.0 * shape.mean});
        r["sweep_point"]["key"] =
            format!("{}/stream/{}/1/bidir", shape.mechanism, shape.size).into();
    }
    from_record(&r, 1).unwrap()
}

#[test]
fn a_forward_direction_shown_slower_with_the_reverse_running_is_said_to_cost_it() {
    let one_way = point(Shape::stream("send", 65536, 1, 20.0), false);
    let both = point(Shape::stream("send", 65536, 1, 14.0), true);
    assert!(both.bidir && !one_way.bidir);
    assert!(both.series().ends_with("(bidir)"), "{}", both.series());
    let a = answer(&[&one_way, &both], 0.05).expect("a bidir point");
    assert_eq!(a.question, QUESTION);
    assert_eq!(
        a.verdict.as_deref(),
        Some("send 64 KiB ×1: costs the forward direction")
    );
    assert!(a.details[0].contains("0.70× (95 % CI"), "{:?}", a.details);
}

#[test]
fn a_cost_within_the_rounds_noise_is_undecided_and_no_twin_is_said() {
    let one_way = point(Shape::stream("copy", 4096, 1, 10.0), false);
    let mut close = Shape::stream("copy", 4096, 1, 9.8);
    close.pair_noise = 0.1;
    let both = point(close, true);
    let a = answer(&[&one_way, &both], 0.05).unwrap();
    assert_eq!(a.verdict.as_deref(), Some("copy 4 KiB ×1: undecided"));
    assert!(a.details[0].contains("undecided (0.9"), "{:?}", a.details);
    let alone = answer(&[&both], 0.05).unwrap();
    assert_eq!(alone.verdict.as_deref(), Some("cannot be said"));
    assert!(
        alone.finding.contains("no completed one-way twin"),
        "{}",
        alone.finding
    );
    assert!(
        answer(&[&one_way], 0.05).is_none(),
        "no bidir point: nothing asked"
    );
}

#[test]
fn the_bidir_points_are_one_family_stated_at_the_margin_given() {
    let points = [
        point(Shape::stream("send", 65536, 1, 20.0), false),
        point(Shape::stream("send", 65536, 1, 14.0), true),
        point(Shape::stream("copy", 4096, 1, 10.0), false),
        point(Shape::stream("copy", 4096, 1, 7.0), true),
    ];
    let refs: Vec<&Point> = points.iter().collect();
    let a = answer(&refs, 0.1).unwrap();
    assert!(
        a.finding.contains(
            "one family: 2 tests, Holm at α = 0.05 (Benjamini–Hochberg for equivalence), \
             equivalence margin ±10 %"
        ),
        "{}",
        a.finding
    );
    assert!(
        a.rests_on.contains("±10 %") && a.rests_on.contains("[0.90, 1.10]"),
        "{}",
        a.rests_on
    );
    assert!(!format!("{a:?}").contains("±5 %"), "{a:?}");
    // Two tests: the first step of Holm's is shown at 97.5 %, not 95 %.
    assert!(
        a.details.iter().any(|d| d.contains("(97.5 % CI")),
        "{:?}",
        a.details
    );
    let t = tested(&refs, 0.1).unwrap();
    assert_eq!((t.tests, t.margin), (2, 0.1));
    assert_eq!(t.cells[0].cell, "send 64 KiB ×1");
}
