//! When an interval is shown at all. A Student's t interval from two pairs (rounds, visits,
//! repetitions) rests on one degree of freedom, where t(0.975, 1) = 12.7 and the 99.67 % level
//! of a Holm step-down reaches t in the hundreds: bounds such as "0.00 to 5.6e27" are arithmetic,
//! not knowledge. Below `MIN_PAIRS` every answer says so in words instead of printing bounds,
//! and the comparison is never decided (`verdict::judge_at` holds it undecided). This module is
//! the one place that rule and its wording live; every answer that prints an interval over
//! pairs formats it through here (`ratio`, `ci`, `shown`, or `verdict::describe` for a `Judged`).

/// The fewest pairs an interval is shown from: two degrees of freedom, t(0.975, 2) = 4.3.
pub const MIN_PAIRS: usize = 3;

/// The fewest pairs "equivalent" is said from (for a Welch estimate, the smaller side's
/// visits). Equivalence from few pairs needs a small spread, the very figure few pairs
/// estimate worst: the SD of 4 pairs (3 degrees of freedom) reads below half the true SD in
/// 14 % of draws (P(χ²₃ < 0.75)), of 8 pairs in 2.7 %, and the t test's allowance for that
/// holds only for normal rounds, which a machine's are not. "Beats" from few pairs needs a
/// large ratio instead, so it keeps `MIN_PAIRS`.
pub const MIN_EQUIVALENCE_PAIRS: usize = 8;

/// Whether an interval over `pairs` is too weak to show or to decide on. `None` is an interval
/// that does not rest on pairs (a fit, a record written before the rule): shown as it is.
pub fn too_few(pairs: Option<usize>) -> bool {
    pairs.is_some_and(|n| n < MIN_PAIRS)
}

/// Whether `pairs` are too few to call two things equivalent (`MIN_EQUIVALENCE_PAIRS`);
/// `None` (not pairs) never is.
pub fn too_few_for_equivalence(pairs: Option<usize>) -> bool {
    pairs.is_some_and(|n| n < MIN_EQUIVALENCE_PAIRS)
}

/// "too few rounds for an interval (2 pairs)": what stands where the bounds would.
pub fn too_few_text(pairs: usize) -> String {
    let noun = if pairs == 1 { "pair" } else { "pairs" };
    format!("too few rounds for an interval ({pairs} {noun})")
}

/// The bounds text the caller wrote ("[1.30, 1.51]", "30 to 40 %"), or the too-few text in
/// its place: `bounds` is only called when the interval is shown.
pub fn shown(pairs: Option<usize>, bounds: impl FnOnce() -> String) -> String {
    match pairs {
        Some(n) if n < MIN_PAIRS => too_few_text(n),
        _ => bounds(),
    }
}

/// "95 % CI 1.30 to 1.51" with bounds the caller formatted in its own unit, or the too-few
/// text.
pub fn ci(
    confidence: f64,
    pairs: Option<usize>,
    bounds: impl FnOnce() -> (String, String),
) -> String {
    shown(pairs, || {
        let (low, high) = bounds();
        format!("{} CI {low} to {high}", percent(confidence))
    })
}

/// "1.40× (95 % CI 1.30 to 1.51)", or "1.13× (too few rounds for an interval (2 pairs))": a
/// ratio with its interval at `confidence`, for answers that hold (ratio, low, high, level,
/// pairs) rather than a `Judged`.
pub fn ratio(ratio: f64, (low, high): (f64, f64), confidence: f64, pairs: Option<usize>) -> String {
    let interval = ci(confidence, pairs, || {
        (format!("{low:.2}"), format!("{high:.2}"))
    });
    format!("{ratio:.2}× ({interval})")
}

/// A share as a percentage with no needless decimals: 0.95 → "95 %", 0.9875 → "98.75 %".
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    let text = format!("{p:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} %")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_pairs_print_no_bounds() {
        let text = ratio(1.13, (0.0, 5.6e27), 0.9967, Some(2));
        assert_eq!(text, "1.13× (too few rounds for an interval (2 pairs))");
        assert!(!text.contains("CI"), "{text}");
        assert_eq!(too_few_text(1), "too few rounds for an interval (1 pair)");
    }

    #[test]
    fn three_pairs_and_intervals_not_from_pairs_print_their_bounds() {
        assert_eq!(
            ratio(1.4, (1.3, 1.51), 0.95, Some(3)),
            "1.40× (95 % CI 1.30 to 1.51)"
        );
        assert_eq!(
            ci(0.9, None, || ("30".into(), "40 %".into())),
            "90 % CI 30 to 40 %"
        );
        assert!(!too_few(None) && too_few(Some(2)) && !too_few(Some(3)));
    }
}
