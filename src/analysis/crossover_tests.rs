use super::*;
use crate::analysis::crossover_outcome::{sizes, Crossover};
use crate::analysis::load::parse;
use crate::analysis::synthetic::{jsonl, Shape};
use crate::analysis::Dataset;
use crate::stats::verdict::Verdict;

fn data(shapes: &[Shape]) -> Dataset {
    parse(&jsonl(shapes), "r").unwrap()
}

/// `data` with eight rounds a point instead of the fixture's five (rounds 5–7 repeat rounds
/// 0–2): what "equivalent" needs (`interval::MIN_EQUIVALENCE_PAIRS`).
fn data8(shapes: &[Shape]) -> Dataset {
    let mut d = data(shapes);
    for p in &mut d.points {
        let again: Vec<(usize, f64)> = p.visits.iter().take(3).map(|(r, v)| (r + 5, *v)).collect();
        p.visits.extend(again);
    }
    d
}

fn pair(size: u64, copy: f64, gather: f64) -> [Shape; 2] {
    [
        Shape::stream("copy", size, 1, copy),
        Shape::stream("gather", size, 1, gather),
    ]
}

#[test]
fn gather_beats_copy_from_the_first_size_of_a_run_of_paired_wins() {
    let shapes: Vec<Shape> = [
        pair(1024, 10.0, 10.01),
        pair(4096, 10.0, 12.0),
        pair(16384, 10.0, 13.0),
    ]
    .concat();
    let d = data(&shapes);
    let c = compare(&d.completed(), "gather", "copy", Settings::default());
    assert!(matches!(c[0].outcome, Crossover::BeatsFrom { from, .. } if from == 4096.0));
    let text = answer(&d.completed(), "gather", "copy", Settings::default()).finding;
    assert!(
        text.starts_with("At 1 thread: gather beats copy from 4 KiB on (+20 %"),
        "{text}"
    );
}

#[test]
fn tight_paired_intervals_near_one_are_equivalent_within_the_margin() {
    let shapes: Vec<Shape> = [pair(1024, 10.0, 10.01), pair(4096, 10.0, 9.99)].concat();
    // Five rounds are too few to call anything equivalent, however tight.
    let five = compare(
        &data(&shapes).completed(),
        "gather",
        "copy",
        Settings::default(),
    );
    assert!(
        matches!(five[0].outcome, Crossover::Undecided { .. }),
        "{:?}",
        five[0].outcome
    );
    let d = data8(&shapes);
    let c = compare(&d.completed(), "gather", "copy", Settings::default());
    assert_eq!(c[0].outcome, Crossover::Equivalent { up_to: 4096.0 });
    let a = answer(&d.completed(), "gather", "copy", Settings::default());
    assert!(
        a.finding
            .contains("gather and copy are equivalent within ±5 % at every size up to 4 KiB"),
        "{}",
        a.finding
    );
    assert!(
        a.rests_on.contains("2 tests, Holm at α = 0.05"),
        "{}",
        a.rests_on
    );
}

#[test]
fn a_verdict_flips_to_undecided_when_the_pair_is_noisier() {
    // The same 3 % gain: beats with quiet rounds, undecided with noisy ones (not "does not
    // beat": a 3 % gain is well inside what five noisy rounds can miss).
    let quiet: Vec<Shape> = pair(4096, 10.0, 10.3).into();
    let d = data(&quiet);
    assert!(matches!(
        compare(&d.completed(), "gather", "copy", Settings::default())[0].outcome,
        Crossover::BeatsFrom { .. }
    ));
    let mut noisy = quiet.clone();
    noisy.iter_mut().for_each(|s| s.pair_noise = 0.05);
    let d = data(&noisy);
    assert_eq!(
        compare(&d.completed(), "gather", "copy", Settings::default())[0].outcome,
        Crossover::Undecided {
            up_to: 4096.0,
            undecided_at: vec![4096.0]
        }
    );
    let a = answer(&d.completed(), "gather", "copy", Settings::default());
    assert_eq!(
        a.verdict.as_deref(),
        Some("1 thread: beats at no size shown; undecided at 4 KiB")
    );
}

#[test]
fn a_marginal_win_alone_beats_and_among_many_cells_the_family_holds_it() {
    // 2.5 % faster with noisy pairs: beats on its own; once 24 cells are tested it is no
    // longer shown faster (and five rounds are too few for "equivalent").
    let mut one: Vec<Shape> = pair(4096, 10.0, 10.25).into();
    one.iter_mut().for_each(|s| s.pair_noise = 0.01);
    let d = data(&one);
    let alone = tested(&d.completed(), "gather", "copy", Settings::default());
    assert_eq!(
        (alone.tests, alone.count(Verdict::Beats)),
        (1, 1),
        "{alone:?}"
    );
    let mut many = one.clone();
    for size in (0..23).map(|i| 8192u64 << i) {
        let mut p: Vec<Shape> = pair(size, 10.0, 10.0).into();
        p.iter_mut().for_each(|s| s.pair_noise = 0.01);
        many.extend(p);
    }
    let d = data(&many);
    let family = tested(&d.completed(), "gather", "copy", Settings::default());
    assert_eq!(family.tests, 24);
    let first = &family.cells[0];
    assert_eq!(
        (first.cell.as_str(), first.judged.state),
        ("4 KiB at 1 thread", Verdict::Undecided)
    );
    assert!(
        (first.judged.confidence - (1.0 - 0.05 / 24.0)).abs() < 1e-9,
        "{first:?}"
    );
}

#[test]
fn sizes_are_listed_as_runs_of_measured_sizes() {
    let measured = [64.0, 256.0, 1024.0, 4096.0];
    assert_eq!(
        sizes(&[64.0, 256.0, 4096.0], &measured),
        "64 B to 256 B, 4 KiB"
    );
}

#[test]
fn the_verdict_answers_the_question_asked_per_thread_count() {
    let mut shapes: Vec<Shape> = [pair(1024, 10.0, 8.0), pair(4096, 10.0, 10.01)].concat();
    shapes.extend(pair(1024, 10.0, 12.0).map(|s| Shape { threads: 2, ..s }));
    shapes.extend(pair(4096, 10.0, 8.0).map(|s| Shape { threads: 2, ..s }));
    let a = answer(
        &data8(&shapes).completed(),
        "gather",
        "copy",
        Settings::default(),
    );
    assert_eq!(
        a.verdict.as_deref(),
        Some("1 thread: does not beat it at any size; 2 threads: faster at 1 KiB only, not from any size on"),
        "copy being faster at 1 KiB (1 thread) is in the finding, not in this verdict"
    );
    assert!(
        a.finding.contains("copy is faster at 1 KiB"),
        "{}",
        a.finding
    );
}

#[test]
fn a_win_that_does_not_last_is_not_a_crossover() {
    let shapes: Vec<Shape> = [pair(1024, 10.0, 12.0), pair(4096, 10.0, 8.0)].concat();
    let d = data(&shapes);
    let c = compare(&d.completed(), "gather", "copy", Settings::default());
    assert_eq!(
        c[0].outcome,
        Crossover::NotFromAnySize {
            faster_at: vec![1024.0],
            slower_at: vec![4096.0],
            undecided_at: vec![],
            up_to: 4096.0
        }
    );
}

#[test]
fn without_visits_it_cannot_be_said_and_says_why() {
    let mut shapes: Vec<Shape> = pair(4096, 10.0, 20.0).into();
    shapes.iter_mut().for_each(|s| s.statistics = false);
    let d = data(&shapes);
    let text = answer(&d.completed(), "gather", "copy", Settings::default()).finding;
    assert!(
        text.contains("cannot be said: no per-visit figures"),
        "{text}"
    );
}

#[test]
fn without_the_mechanisms_it_cannot_be_said() {
    let d = data(&[Shape::stream("copy", 4096, 1, 10.0)]);
    let a = answer(&d.completed(), "zerocopy", "copy", Settings::default());
    assert!(a.finding.starts_with("Cannot be said"), "{}", a.finding);
}

#[test]
fn each_thread_count_gets_its_own_line() {
    let mut shapes: Vec<Shape> = pair(4096, 10.0, 12.0).into();
    shapes.push(Shape::stream("copy", 4096, 2, 18.0));
    shapes.push(Shape::stream("gather", 4096, 2, 18.02));
    let a = answer(
        &data8(&shapes).completed(),
        "gather",
        "copy",
        Settings::default(),
    );
    assert!(
        a.finding.starts_with("At 1 thread: gather beats copy"),
        "{}",
        a.finding
    );
    assert_eq!(a.details.len(), 1);
    assert!(
        a.details[0].starts_with("at 2 threads: gather and copy are equivalent within ±5 %"),
        "{}",
        a.details[0]
    );
}

#[test]
fn undecided_sizes_below_the_first_beating_size_put_the_crossover_between_two_sizes() {
    let mut open: Vec<Shape> = pair(4096, 10.0, 10.0).into();
    open.iter_mut().for_each(|s| s.pair_noise = 0.05);
    let shapes: Vec<Shape> = [
        pair(1024, 10.0, 8.0).to_vec(),
        open,
        pair(16384, 10.0, 12.0).to_vec(),
    ]
    .concat();
    let d = data(&shapes);
    let c = compare(&d.completed(), "gather", "copy", Settings::default());
    assert!(
        matches!(
            &c[0].outcome,
            Crossover::BeatsFrom { from, undecided_below: Some((Some(below), run)), .. }
                if *from == 16384.0 && *below == 1024.0 && run == &[4096.0]
        ),
        "{:?}",
        c[0].outcome
    );
    let a = answer(&d.completed(), "gather", "copy", Settings::default());
    assert_eq!(
        a.verdict.as_deref(),
        Some("1 thread: beats from 16 KiB on, crossover between 1 KiB and 16 KiB (undecided at 4 KiB)")
    );
    assert!(
        a.finding.contains(
            "below that it is undecided at 4 KiB, so the crossover lies between 1 KiB and 16 KiB"
        ),
        "{}",
        a.finding
    );
    // With 1 KiB undecided too, nothing below 16 KiB is decided.
    let mut none_decided = shapes.clone();
    none_decided[..2]
        .iter_mut()
        .for_each(|s| s.pair_noise = 0.05);
    none_decided[1].mean = 10.0;
    let a = answer(
        &data(&none_decided).completed(),
        "gather",
        "copy",
        Settings::default(),
    );
    assert_eq!(
        a.verdict.as_deref(),
        Some("1 thread: beats from 16 KiB on, crossover at or below 16 KiB (undecided at 1 KiB,4 KiB)")
    );
    // Where the size below is decided, "from X on" stands alone.
    let decided: Vec<Shape> = [pair(1024, 10.0, 8.0), pair(16384, 10.0, 12.0)].concat();
    let a = answer(
        &data(&decided).completed(),
        "gather",
        "copy",
        Settings::default(),
    );
    assert_eq!(a.verdict.as_deref(), Some("1 thread: beats from 16 KiB"));
}

fn estimate(ratio: f64, t: f64, pairs: usize) -> LogEstimate {
    LogEstimate {
        log_ratio: ratio.ln(),
        se: ratio.ln() / t,
        df: (pairs - 1) as f64,
        pairs: Some(pairs),
    }
}

#[test]
fn a_cell_of_the_pilots_rounds_alone_is_judged_at_the_pilots_alpha() {
    // t = 4.0 on 4 df: p ≈ 0.016, inside the last look's 0.04, outside the pilot's 0.01.
    let adaptive = Settings {
        margin: 0.05,
        looks: 2,
        pilot_rounds: 5,
    };
    let at_pilot = judge_looks(&[estimate(1.1, 4.0, 5)], adaptive);
    assert_eq!(at_pilot.judged[0].state, Verdict::Undecided);
    assert!((at_pilot.judged[0].confidence - 0.99).abs() < 1e-12);
    // One round past the pilot: the last look's α.
    let e = LogEstimate {
        df: 5.0,
        pairs: Some(6),
        ..estimate(1.1, 4.5, 5)
    };
    let last = judge_looks(&[e], adaptive);
    assert_eq!(last.judged[0].state, Verdict::Beats);
    assert!((last.judged[0].confidence - 0.96).abs() < 1e-12);
    // A folder that does not record its pilot's rounds is judged at the last look's α.
    let older = Settings {
        pilot_rounds: 0,
        ..adaptive
    };
    let judged = judge_looks(&[estimate(1.1, 4.0, 5)], older).judged[0];
    assert_eq!((judged.state, judged.confidence), (Verdict::Beats, 0.96));
}

#[test]
fn the_familys_rounds_autocorrelation_widens_its_intervals_and_is_stated() {
    // Rounds that drift together: gather's edge over copy grows round by round.
    let mut d = data8(&[pair(1024, 10.0, 11.0), pair(4096, 10.0, 11.0)].concat());
    for p in d.points.iter_mut().filter(|p| p.mechanism == "gather") {
        p.visits = (0..12).map(|r| (r, 10.5 + 0.1 * r as f64)).collect();
    }
    for p in d.points.iter_mut().filter(|p| p.mechanism == "copy") {
        p.visits = (0..12).map(|r| (r, 10.0)).collect();
    }
    let (_, family) = judge(&d.completed(), "gather", "copy", Settings::default());
    let rho = family.rho.expect("ρ from two cells of 12 rounds");
    assert!(rho.measured > 0.5 && rho.rho > 0.7, "{rho:?}");
    let at = |m: &str| {
        d.completed()
            .into_iter()
            .find(|p| p.mechanism == m && p.size == 4096.0)
            .unwrap()
    };
    let plain = paired::ratio(at("gather"), at("copy")).unwrap();
    let plain = LogEstimate::from_interval(&plain);
    let widened = plain.widened(rho.rho);
    assert!(widened.se > 2.0 * plain.se, "{widened:?} {plain:?}");
    let a = answer(&d.completed(), "gather", "copy", Settings::default());
    assert!(
        a.rests_on.contains("lag-1 autocorrelation ρ = "),
        "{}",
        a.rests_on
    );
    assert!(a.rests_on.contains("not simultaneous"), "{}", a.rests_on);
}
