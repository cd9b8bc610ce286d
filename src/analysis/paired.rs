//! Paired comparisons of two points: the two mechanisms were visited back to back in every
//! round (order alternating), so each round gives one ratio in which the machine's regime of
//! that moment cancels; the answer is the ratio's 95 % interval over rounds
//! (`stats::visits::paired_ratio`). "Beats" means that interval excludes 1; otherwise the two
//! cannot be told apart on this machine. Overlap of two intervals is never a test.
use super::point::Point;
use crate::stats::interval;
use crate::stats::verdict::{judge_one, Verdict};
use crate::stats::visits::{paired_ratio, RatioInterval};

/// Rests-on text shared by every answer that compares two mechanisms.
pub const PAIRED_BASIS: &str = "per-round paired ratios of the headline figure (the two \
     mechanisms visited back to back in each round, order alternating); 95 % CI by Student's t \
     on the per-round log-ratios; \"beats\" means that interval excludes 1; from fewer than 3 \
     rounds no interval is printed and nothing is decided";

/// `a` over `b` from the rounds in which both were visited, or why it cannot be had.
pub fn ratio(a: &Point, b: &Point) -> Result<RatioInterval, String> {
    if a.visits.is_empty() || b.visits.is_empty() {
        return Err(format!(
            "no per-visit figures for {} (a point measured as one stretch, as sweeps before schema 2 did; measure it again to compare)",
            if a.visits.is_empty() { &a.key } else { &b.key }
        ));
    }
    let pairs = pairs_by_round(a, b);
    paired_ratio(&pairs).ok_or_else(|| {
        format!(
            "{} and {} share {} round(s) with figures; a paired interval needs 2",
            a.key,
            b.key,
            pairs.len()
        )
    })
}

/// ln(a/b) of each round both were visited in, in round order: the series whose lag-1
/// autocorrelation a family pools (`stats::visits::pooled_lag1`). Rounds without a positive
/// figure on both sides carry no ratio and are left out, as `paired_ratio` leaves them out.
pub fn log_ratios(a: &Point, b: &Point) -> Vec<f64> {
    logs_of(&pairs_by_round(a, b))
}

/// `log_ratios` from raw per-round figures `(round, value)`, paired as `ratio_of` pairs them.
pub fn log_ratios_of(a: &[(usize, f64)], b: &[(usize, f64)]) -> Vec<f64> {
    logs_of(&first_pairs(a, b))
}

fn logs_of(pairs: &[(f64, f64)]) -> Vec<f64> {
    pairs
        .iter()
        .filter(|(a, b)| *a > 0.0 && *b > 0.0 && a.is_finite() && b.is_finite())
        .map(|(a, b)| (a / b).ln())
        .collect()
}

/// `(a, b)` of each round both were visited in, in round order (a visit made again in a round
/// pairs by its first figure).
fn pairs_by_round(a: &Point, b: &Point) -> Vec<(f64, f64)> {
    let mut pairs: Vec<(usize, f64, f64)> = a
        .visits
        .iter()
        .filter_map(|(round, va)| {
            let (_, vb) = b.visits.iter().find(|(r, _)| r == round)?;
            Some((*round, *va, *vb))
        })
        .collect();
    pairs.sort_by_key(|(round, _, _)| *round);
    pairs.iter().map(|(_, a, b)| (*a, *b)).collect()
}

/// How `a` compares with `b` where both were measured: higher, lower or indistinguishable.
#[cfg(test)]
pub fn direction(
    a: &Point,
    b: &Point,
) -> Result<(crate::stats::visits::Direction, RatioInterval), String> {
    ratio(a, b).map(|r| (r.direction(), r))
}

/// "3.40× (95 % CI 3.10 to 3.70)": a ratio as a multiple with its paired interval (or, from
/// fewer than three pairs, "too few rounds for an interval (2 pairs)" in its place).
pub fn times(r: &RatioInterval) -> String {
    interval::ratio(r.ratio, (r.low, r.high), 0.95, Some(r.n))
}

/// `a` over `b` from raw per-round figures `(round, value)`: for studies whose records are not
/// run records (file transfers, servers' visits). `what` names the pair in the reason. One pair
/// per round: a visit made again in a round (a disturbed one repeated at the round's end) pairs
/// by its first figure, as `pairs_by_round` does, so a repeat neither counts as a round of its
/// own nor pairs with the other side's figure from another moment.
pub fn ratio_of(
    a: &[(usize, f64)],
    b: &[(usize, f64)],
    what: &str,
) -> Result<RatioInterval, String> {
    let pairs = first_pairs(a, b);
    paired_ratio(&pairs).ok_or_else(|| {
        let usable = pairs.iter().filter(|(a, b)| *a > 0.0 && *b > 0.0).count();
        format!(
            "{what}: {usable} round(s) with a figure above 0 for both (of {} measured); a paired interval needs 2",
            pairs.len()
        )
    })
}

/// `(a, b)` of each round of `a` that `b` has a figure in, each round once (its first figure).
/// In round order, so that the series is a time series.
fn first_pairs(a: &[(usize, f64)], b: &[(usize, f64)]) -> Vec<(f64, f64)> {
    let mut seen: Vec<usize> = Vec::new();
    let mut pairs: Vec<(usize, f64, f64)> = a
        .iter()
        .filter_map(|(round, va)| {
            if seen.contains(round) {
                return None;
            }
            seen.push(*round);
            let (_, vb) = b.iter().find(|(r, _)| r == round)?;
            Some((*round, *va, *vb))
        })
        .collect();
    pairs.sort_by_key(|(round, _, _)| *round);
    pairs.iter().map(|(_, a, b)| (*a, *b)).collect()
}

/// "1.40× (…)" when the interval excludes 1, "equivalent within ±M (…, 90 % CI …)" when two
/// one-sided tests place it within the margin `margin` (a share), else "undecided (…)": never
/// "no difference". One comparison alone; a list of them is `ratio_family`'s.
pub fn verdict_within(r: &RatioInterval, margin: f64) -> String {
    let j = judge_one(r, margin);
    match j.state {
        Verdict::Beats | Verdict::Slower => times(r),
        Verdict::Equivalent => format!(
            "equivalent within ±{} ({:.2}×, 90 % CI {:.2} to {:.2})",
            crate::stats::verdict::percent(margin),
            r.ratio,
            j.equivalence_low,
            j.equivalence_high
        ),
        Verdict::Undecided => format!(
            "undecided ({:.2}×, {})",
            r.ratio,
            interval::ci(0.95, j.pairs, || (
                format!("{:.2}", r.low),
                format!("{:.2}", r.high)
            ))
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::point::from_value as from_record;
    use crate::analysis::synthetic::{record, Shape};
    use crate::stats::verdict::DEFAULT_MARGIN;
    use crate::stats::visits::Direction;

    fn point(shape: Shape) -> Point {
        from_record(&record(&shape), 1).unwrap()
    }

    #[test]
    fn a_clear_gain_is_higher_even_when_each_points_own_interval_is_wide() {
        // ±20 % per point from the shared regimes: overlapping intervals, yet a 10 % gain
        // shows in every round.
        let mut a = Shape::stream("gather", 4096, 1, 11.0);
        let mut b = Shape::stream("copy", 4096, 1, 10.0);
        a.ci_rel = 0.2;
        b.ci_rel = 0.2;
        let (pa, pb) = (point(a), point(b));
        let (ha, hb) = (pa.headline.unwrap(), pb.headline.unwrap());
        assert!(ha.ci95_low < hb.ci95_high, "the intervals overlap");
        let (d, r) = direction(&pa, &pb).unwrap();
        assert_eq!(d, Direction::Higher, "{r:?}");
        assert!((r.ratio - 1.1).abs() < 0.01);
    }

    #[test]
    fn a_difference_within_the_rounds_noise_cannot_be_told_apart() {
        let mut a = Shape::stream("gather", 4096, 1, 10.02);
        a.pair_noise = 0.02;
        let (d, r) = direction(&point(a), &point(Shape::stream("copy", 4096, 1, 10.0))).unwrap();
        assert_eq!(d, Direction::Indistinguishable, "{r:?}");
    }

    #[test]
    fn points_without_visits_say_why_they_cannot_be_paired() {
        let mut r = record(&Shape::stream("copy", 4096, 1, 10.0));
        r["statistics"]["basis"] = "slices".into();
        let old = from_record(&r, 1).unwrap();
        let why = ratio(&point(Shape::stream("gather", 4096, 1, 10.0)), &old).unwrap_err();
        assert!(why.contains("measured as one stretch"), "{why}");
    }

    #[test]
    fn two_rounds_are_undecided_and_print_no_bounds() {
        let two = RatioInterval {
            ratio: 1.5,
            low: 1.1,
            high: 2.0,
            n: 2,
            df: 1.0,
        };
        assert_eq!(judge_one(&two, DEFAULT_MARGIN).state, Verdict::Undecided);
        assert_eq!(
            verdict_within(&two, DEFAULT_MARGIN),
            "undecided (1.50×, too few rounds for an interval (2 pairs))"
        );
        assert_eq!(
            times(&two),
            "1.50× (too few rounds for an interval (2 pairs))"
        );
    }

    #[test]
    fn a_visit_made_again_in_its_round_is_not_a_pair_of_its_own() {
        // Two rounds, each model's visit made again at the round's end: two pairs, not four.
        let a = [(0, 20.0), (0, 22.0), (1, 21.0), (1, 19.0)];
        let b = [(0, 10.0), (0, 10.5), (1, 10.2), (1, 9.9)];
        let r = ratio_of(&a, &b, "a and b").unwrap();
        assert_eq!(r.n, 2, "{r:?}");
        assert!(
            (r.ratio - (2.0f64 * 21.0 / 10.2).sqrt()).abs() < 1e-9,
            "{r:?}"
        );
        assert_eq!(judge_one(&r, DEFAULT_MARGIN).state, Verdict::Undecided);
    }

    #[test]
    fn rounds_are_matched_not_positions() {
        let a = point(Shape::stream("gather", 4096, 1, 10.0));
        let mut b = a.clone();
        b.key = "other".into();
        b.visits = vec![(7, 1.0), (8, 1.0)];
        assert!(ratio(&a, &b).unwrap_err().contains("share 0 round(s)"));
    }
}
