//! `bytepath compare OLD NEW`: per point, the ratio new/old of the headline figure (receiver
//! Gbit/s for stream, round trips/s for rr; higher is better for both) with its 95 % interval
//! from the visit-level spread of both folders (Welch's t on the log visit means: the two
//! studies ran at different times, so their visits are not paired), and a verdict in three
//! states (`stats::verdict`), each point's variance widened by the between-sweep spread τ²
//! (one folder's visits cannot see how the machine moved between the two studies), taken from
//! an A/A reference or a trimmed estimate that the moved points cannot inflate, never from
//! the plain spread of the points it judges (`between`): faster or slower only where the interval excludes 1,
//! equivalent only where it lies within ±margin, else undecided. All points are one family under Holm's
//! step-down, so an A/A comparison of 48 points flags none with 95 % probability (uncorrected,
//! 2.4 false verdicts were expected); the table shows each point's interval at the level its
//! test used and the summary line names the count of tests and the method. A point measured as
//! one stretch (schema 1) has no visits to judge it by and is said so, never judged on its
//! slices.
#[cfg(test)]
mod aa_simulation;
pub(crate) mod between;
mod interference;
mod json;
pub(crate) mod machine;

use crate::error::{Error, Status};
use crate::record::read_typed;
use crate::record::view::RunView;
use crate::stats::verdict::{self, Correction, Family, Judged, LogEstimate};
use crate::stats::visits::{welch_ratio, RatioInterval, WELCH_METHOD};
use crate::stats::Summary;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    /// The corrected equivalence test places new/old within ±margin of 1.
    Equivalent,
    /// Neither a change nor equivalence is shown.
    Undecided,
    /// One side has fewer than two visit means (or was measured as one stretch).
    CannotJudge,
}

/// One point present in both folders.
#[derive(Debug, Clone, PartialEq)]
pub struct PointChange {
    pub key: String,
    pub old: Option<Summary>,
    pub new: Option<Summary>,
    /// new/old and its 95 % interval, uncorrected.
    pub ratio: Option<RatioInterval>,
    /// The verdict of this point within the family of all points (corrected interval).
    pub judged: Option<Judged>,
    pub verdict: Verdict,
    /// Why no verdict could be given.
    pub why_not: Option<String>,
}

/// What `compare` was asked, besides the two folders.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Fail when a point's corrected interval lies wholly below 1 − this share.
    pub limit: Option<f64>,
    /// The equivalence margin, a share.
    pub margin: f64,
    /// `--normalize canary`.
    pub normalize: bool,
    /// `--between-spread`: an A/A pair's between-sweep spread τ, on the log scale.
    pub between_spread: Option<f64>,
    /// `--json`: one JSON document on stdout instead of the text.
    pub json: bool,
}

/// Compares the studies in `old` and `new`, prints the table (or the JSON document), and fails
/// when a point's corrected interval lies wholly below 1 − `limit` (a share, such as 0.05), if
/// one is given. With `normalize`, new figures are first divided by the machine's change
/// (`machine`).
pub fn run(old: &Path, new: &Path, options: Options) -> Result<Status, Error> {
    let change =
        machine::machine_change(&machine::read_canaries(old), &machine::read_canaries(new));
    let busy = (interference::disturbed(old), interference::disturbed(new));
    let old = by_key(read_typed(old)?);
    let mut new = by_key(read_typed(new)?);
    let normalized = match options.normalize {
        true => normalize_by_canary(&mut new, &change)?,
        false => Vec::new(),
    };
    let mut changes = compare(&old, &new);
    if let (true, Ok(m)) = (options.normalize, &change) {
        machine::widen_normalized(&mut changes, &new, m);
    }
    let (changes, family, between) = controlled(changes, options.margin, options.between_spread);
    let machine_note = machine::summary_note(&change, options.normalize);
    let busy_note = interference::note(busy.0, busy.1);
    if options.json {
        let sides = json::Sides {
            old: &old,
            new: &new,
        };
        let document = json::document(&changes, sides, (&family, &between), (&change, busy));
        println!("{document}");
    } else {
        println!("{}", machine::line(&change));
        println!("{}", interference::line(busy.0, busy.1));
        normalized.iter().for_each(|line| println!("{line}"));
        print!("{}", render(&changes, &old, &new, (&family, &between)));
        machine_note
            .iter()
            .chain(&busy_note)
            .for_each(|n| println!("{n}"));
    }
    fail_on_regression(&changes, options.limit)
}

/// `--fail-on-regression`: the points whose corrected interval lies wholly below 1 − `limit`,
/// named on stderr, and exit 1 if there are any.
fn fail_on_regression(changes: &[PointChange], limit: Option<f64>) -> Result<Status, Error> {
    let regressed: Vec<&PointChange> = changes.iter().filter(|c| is_regression(c, limit)).collect();
    if let (Some(limit), false) = (limit, regressed.is_empty()) {
        eprintln!(
            "bytepath: {} point(s) got slower by more than {:.1} % (corrected interval wholly beyond it): {}",
            regressed.len(),
            limit * 100.0,
            regressed
                .iter()
                .map(|c| c.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(Status::Failed);
    }
    Ok(Status::Success)
}

/// `--normalize canary`: refuses when there is nothing to normalize by; returns the lines
/// that say it normalized and which points it could not scale.
fn normalize_by_canary(
    new: &mut BTreeMap<String, RunView>,
    change: &Result<machine::MachineChange, String>,
) -> Result<Vec<String>, Error> {
    let m = change.as_ref().map_err(|why| {
        crate::error::ConfigError(format!(
            "--normalize canary: {why}, so there is nothing to normalize by"
        ))
    })?;
    let left = machine::normalize(new, m);
    let mut lines = vec!["normalized: every new point's figure multiplied by the new/old canary cost of its component (memcpy for stream, the one-CPU pipe round trip for rr), its interval widened by that ratio's own".to_string()];
    if !left.is_empty() {
        lines.push(format!(
            "not normalized (no matching canary component): {}",
            left.join(", ")
        ));
    }
    Ok(lines)
}

/// The last completed record of each point (a resumed sweep may hold an interrupted one too).
fn by_key(records: Vec<RunView>) -> BTreeMap<String, RunView> {
    records
        .into_iter()
        .filter(RunView::completed)
        .map(|r| (r.config().point_key(), r))
        .collect()
}

fn summary(record: &RunView) -> Option<Summary> {
    record.statistics()?.summary
}

/// A point's visit means, or why it has none to compare.
pub fn visit_means(record: &RunView) -> Result<Vec<f64>, String> {
    match record.statistics() {
        Some(statistics) if statistics.basis.as_deref() == Some("visits") => {
            Ok(statistics.values())
        }
        _ => Err(
            "measured as one stretch (no visits): a re-run cannot be judged from its slices".into(),
        ),
    }
}

pub fn compare(
    old: &BTreeMap<String, RunView>,
    new: &BTreeMap<String, RunView>,
) -> Vec<PointChange> {
    old.iter()
        .filter_map(|(key, o)| new.get(key).map(|n| change(key, o, n)))
        .collect()
}

/// One point of two folders: Welch's interval of new/old on the log visit means.
pub fn change(key: &str, old: &RunView, new: &RunView) -> PointChange {
    let judged = visit_means(old).and_then(|o| {
        let n = visit_means(new)?;
        welch_ratio(&n, &o).ok_or_else(|| {
            format!(
                "{} and {} positive visit means; Welch's interval needs 2 on each side",
                o.len(),
                n.len()
            )
        })
    });
    PointChange {
        key: key.to_string(),
        old: summary(old),
        new: summary(new),
        verdict: if judged.is_ok() {
            Verdict::Undecided
        } else {
            Verdict::CannotJudge
        },
        why_not: judged.as_ref().err().cloned(),
        ratio: judged.ok(),
        judged: None,
    }
}

/// Judges every point that has an interval as one family: faster and slower by Holm's
/// step-down, because `--fail-on-regression` gates a build on any one point and so needs the
/// chance of any false verdict held to 5 %, not their expected share; equivalence by
/// Benjamini–Hochberg, since "these points held" reads as a share and gates nothing. Each
/// point's variance first takes the between-session spread τ² (`between::choose`: the A/A
/// `reference` when given, else a trimmed estimate from 10 points or more, else none),
/// returned with the family together with Cochran's Q against it.
pub fn controlled(
    mut changes: Vec<PointChange>,
    margin: f64,
    reference: Option<f64>,
) -> (Vec<PointChange>, Family, between::Between) {
    let within: Vec<LogEstimate> = changes
        .iter()
        .filter_map(|c| c.ratio.as_ref().map(LogEstimate::from_interval))
        .collect();
    let pairs: Vec<(f64, f64)> = within.iter().map(|e| (e.log_ratio, e.se)).collect();
    let between = between::choose(&pairs, reference);
    let tau2 = between.tau * between.tau;
    let estimates: Vec<LogEstimate> = within
        .iter()
        .map(|e| LogEstimate {
            se: (e.se * e.se + tau2).sqrt(),
            ..*e
        })
        .collect();
    let family = verdict::judge_with(
        &estimates,
        Correction::Holm,
        Correction::BenjaminiHochberg,
        margin,
    );
    let mut judged = family.judged.iter();
    for c in changes.iter_mut().filter(|c| c.ratio.is_some()) {
        let j = *judged.next().expect("one verdict per estimate");
        c.verdict = match j.state {
            verdict::Verdict::Beats => Verdict::Faster,
            verdict::Verdict::Slower => Verdict::Slower,
            verdict::Verdict::Equivalent => Verdict::Equivalent,
            verdict::Verdict::Undecided => Verdict::Undecided,
        };
        c.judged = Some(j);
    }
    (changes, family, between)
}

/// Slower, with the corrected interval wholly below 1 − `limit` (a share such as 0.05): a
/// point estimate beyond the limit is not enough.
fn is_regression(c: &PointChange, limit: Option<f64>) -> bool {
    match (c.judged, limit) {
        (Some(j), Some(limit)) => j.high < 1.0 - limit,
        _ => false,
    }
}

/// The header and one line per point: old and new mean with CI, new/old, the verdict.
fn point_lines(changes: &[PointChange]) -> String {
    let mut out = String::new();
    let fmt = |s: &Option<Summary>| {
        s.map_or("no CI".to_string(), |s| {
            format!("{:.4} ±{:.1}%", s.mean, s.ci95_rel * 100.0)
        })
    };
    let _ = writeln!(
        out,
        "{:<34} {:>20} {:>20} {:>24}  verdict",
        "point", "old mean ±CI", "new mean ±CI", "new/old [corrected CI]"
    );
    for c in changes {
        let r = c.judged.map_or("-".to_string(), |j| {
            let bounds =
                crate::stats::interval::shown(j.pairs, || format!("[{:.3}, {:.3}]", j.low, j.high));
            format!("{:.3} {bounds}", j.ratio)
        });
        let _ = writeln!(
            out,
            "{:<34} {:>20} {:>20} {:>24}  {}",
            c.key,
            fmt(&c.old),
            fmt(&c.new),
            r,
            describe(c.verdict)
        );
    }
    out
}

fn render(
    changes: &[PointChange],
    old: &BTreeMap<String, RunView>,
    new: &BTreeMap<String, RunView>,
    (family, between): (&Family, &between::Between),
) -> String {
    let mut out = point_lines(changes);
    let count = |v| changes.iter().filter(|c| c.verdict == v).count();
    let _ = writeln!(
        out,
        "\n{} points compared: {} faster, {} slower, {} equivalent within ±{}, {} undecided, {} cannot be judged; {}; {}",
        changes.len(),
        count(Verdict::Faster),
        count(Verdict::Slower),
        count(Verdict::Equivalent),
        verdict::percent(family.margin),
        count(Verdict::Undecided),
        count(Verdict::CannotJudge),
        family.control(),
        between.summary()
    );
    out.push_str(&between.lines());
    for (label, only) in [
        ("old", missing_from(old, new)),
        ("new", missing_from(new, old)),
    ] {
        if !only.is_empty() {
            let _ = writeln!(out, "only in {label}: {}", only.join(", "));
        }
    }
    let mut reasons: Vec<&str> = changes
        .iter()
        .filter_map(|c| c.why_not.as_deref())
        .collect();
    reasons.sort();
    reasons.dedup();
    for why in reasons {
        let _ = writeln!(out, "cannot be judged: {why}");
    }
    let _ = writeln!(out, "(figure: receiver Gbit/s for stream, client round trips/s for rr; higher is better; new/old: {WELCH_METHOD}, its variance plus τ², how much more new/old scatters between two sweeps of one build than their own visits allow (the machine moves between sweeps, differently for different points, and one sweep's visits cannot see that): from --between-spread, else trimmed from 10 points or more so that moved points cannot pass for spread; each point's interval is shown at its Holm step-down level; faster or slower needs that interval to exclude 1; equivalent needs two one-sided tests, Benjamini–Hochberg across points, to place new/old within the margin; else undecided)");
    out
}

fn missing_from(a: &BTreeMap<String, RunView>, b: &BTreeMap<String, RunView>) -> Vec<String> {
    a.keys().filter(|k| !b.contains_key(*k)).cloned().collect()
}

fn describe(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::Equivalent => "equivalent",
        Verdict::Undecided => "undecided",
        Verdict::CannotJudge => "cannot judge (no CI)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view(record: serde_json::Value) -> RunView {
        serde_json::from_value(record).unwrap()
    }

    fn visited(values: &[f64]) -> RunView {
        view(json!({"statistics": {"basis": "visits", "values": values,
                              "summary": crate::stats::visits::summarize_visits(values)}}))
    }

    /// One point judged as a family of one.
    fn alone(old: &RunView, new: &RunView) -> PointChange {
        controlled(vec![change("k", old, new)], 0.05, None)
            .0
            .remove(0)
    }

    #[test]
    fn two_visits_a_side_are_undecided_and_print_no_bounds() {
        let c = alone(&visited(&[10.0, 10.1]), &visited(&[20.0, 20.2]));
        assert_eq!(c.verdict, Verdict::Undecided, "{c:?}");
        let lines = point_lines(&[c]);
        assert!(
            lines.contains("2.000 too few rounds for an interval (2 pairs)"),
            "{lines}"
        );
    }

    #[test]
    fn a_clear_gain_is_faster_and_a_clear_loss_is_slower() {
        let old = visited(&[10.0, 10.4, 9.8, 10.1]);
        let new = visited(&[12.0, 12.3, 11.7, 12.1]);
        assert_eq!(alone(&old, &new).verdict, Verdict::Faster);
        assert_eq!(alone(&new, &old).verdict, Verdict::Slower);
    }

    #[test]
    fn noise_between_visits_is_undecided_not_no_change() {
        let old = visited(&[10.0, 11.0, 9.0, 10.5]);
        let new = visited(&[10.2, 11.1, 9.3, 10.4]);
        assert_eq!(alone(&old, &new).verdict, Verdict::Undecided);
    }

    #[test]
    fn tight_agreement_is_equivalent_within_the_margin_from_eight_visits_a_side() {
        let c = alone(&visited(&old_values()), &visited(&new_values()));
        assert_eq!(c.verdict, Verdict::Equivalent, "{c:?}");
        // The same agreement from six visits a side is not enough to call equivalent
        // (stats::interval::MIN_EQUIVALENCE_PAIRS).
        let c = alone(&visited(&old_values()[..6]), &visited(&new_values()[..6]));
        assert_eq!(c.verdict, Verdict::Undecided, "{c:?}");
    }

    fn old_values() -> Vec<f64> {
        vec![10.0, 10.1, 9.9, 10.0, 10.05, 9.95, 10.02, 9.98]
    }

    fn new_values() -> Vec<f64> {
        vec![10.02, 10.08, 9.93, 10.01, 10.0, 9.97, 9.99, 10.03]
    }

    #[test]
    fn a_point_without_visits_cannot_be_judged_and_says_why() {
        let one_stretch =
            view(json!({"statistics": {"basis": "slices", "values": [1.0, 2.0, 3.0]}}));
        let c = alone(&one_stretch, &visited(&[1.0, 2.0]));
        assert_eq!(c.verdict, Verdict::CannotJudge);
        assert!(c.why_not.unwrap().contains("one stretch"));
        let c = alone(&visited(&[1.0]), &visited(&[1.0, 2.0]));
        assert_eq!(c.verdict, Verdict::CannotJudge);
    }

    #[test]
    fn only_corrected_intervals_wholly_beyond_the_limit_are_regressions() {
        let old = visited(&[10.0, 10.1, 9.9, 10.0]);
        let small = alone(&old, &visited(&[9.7, 9.75, 9.72, 9.71])); // 3 % slower
        let big = alone(&old, &visited(&[8.0, 8.1, 7.9, 8.0])); // 20 % slower
                                                                // 8 % slower by its point estimate, but the interval reaches above 0.95.
        let loose = alone(&old, &visited(&[8.6, 9.6, 9.0, 9.6]));
        assert_eq!(small.verdict, Verdict::Slower);
        assert!(!is_regression(&small, Some(0.05)));
        assert!(is_regression(&big, Some(0.05)));
        assert!(!is_regression(&big, None));
        let j = loose.judged.unwrap();
        assert!(j.ratio < 0.95 && j.high > 0.95, "{j:?}");
        assert!(!is_regression(&loose, Some(0.05)));
    }

    #[test]
    fn a_marginal_change_alone_is_flagged_and_among_many_points_it_is_not() {
        let old = visited(&[10.0, 10.3, 9.8, 10.1]);
        let new = visited(&[10.5, 10.9, 10.2, 10.6]);
        assert_eq!(alone(&old, &new).verdict, Verdict::Faster);
        let mut changes: Vec<PointChange> = (0..40)
            .map(|i| change(&format!("p{i}"), &old, &visited(&[10.0, 10.3, 9.8, 10.1])))
            .collect();
        changes.push(change("marginal", &old, &new));
        let (changes, family, between) = controlled(changes, 0.05, None);
        assert_eq!(changes[40].verdict, Verdict::Undecided, "{:?}", changes[40]);
        assert_eq!(family.tests, 41);
        let text = render(
            &changes,
            &BTreeMap::new(),
            &BTreeMap::new(),
            (&family, &between),
        );
        assert!(text.contains("41 tests, Holm at α = 0.05"), "{text}");
        let stated = format!(
            "between-sweep spread τ = {:.1} % (trimmed over the 41 judged points",
            between.tau * 100.0
        );
        assert!(text.contains(&stated), "{text}");
        assert!(text.contains("between sweeps: Cochran's Q = "), "{text}");
    }

    /// A point of 17 visits with 3 % spread between them, its machine at `speed`.
    fn scattered(rng: &mut fastrand::Rng, speed: f64) -> RunView {
        let values: Vec<f64> = (0..17)
            .map(|_| 10.0 * speed * (0.03 * crate::stats::draw::standard_normal(rng)).exp())
            .collect();
        visited(&values)
    }

    #[test]
    fn a_point_20_percent_slower_among_scattered_ones_stays_flagged_with_the_between_sweep_spread()
    {
        let mut rng = fastrand::Rng::with_seed(36);
        // Each point moves by its own 2 % between the sweeps, as two sweeps of one build do.
        let mut changes: Vec<PointChange> = (0..47)
            .map(|i| {
                let shift = (0.02 * crate::stats::draw::standard_normal(&mut rng)).exp();
                let old = scattered(&mut rng, 1.0);
                change(&format!("p{i}"), &old, &scattered(&mut rng, shift))
            })
            .collect();
        let old = scattered(&mut rng, 1.0);
        changes.push(change("slow", &old, &scattered(&mut rng, 0.8)));
        let (changes, _, between) = controlled(changes, 0.05, None);
        assert_eq!(between.source, between::Source::Trimmed);
        assert!(
            between.tau < 0.04,
            "the one slow point cannot inflate τ: {between:?}"
        );
        assert_eq!(changes[47].verdict, Verdict::Slower, "{:?}", changes[47]);
        assert!(changes[..47].iter().all(|c| c.verdict != Verdict::Slower));
    }

    #[test]
    fn a_given_between_spread_widens_every_interval_and_is_stated() {
        let old = visited(&[10.0, 10.3, 9.8, 10.1, 10.2, 9.9]);
        let new = visited(&[9.0, 9.3, 8.8, 9.1, 9.2, 8.9]);
        let points = || vec![change("a", &old, &new), change("b", &old, &old)];
        let (plain, _, none) = controlled(points(), 0.05, None);
        let (wide, family, given) = controlled(points(), 0.05, Some(0.1));
        assert_eq!(none.source, between::Source::None);
        assert_eq!(plain[0].verdict, Verdict::Slower, "{:?}", plain[0]);
        assert_eq!(
            wide[0].verdict,
            Verdict::Undecided,
            "τ = 10 % hides a 10 % change"
        );
        let (p, w) = (plain[0].judged.unwrap(), wide[0].judged.unwrap());
        assert!(w.high - w.low > 2.0 * (p.high - p.low), "{p:?} {w:?}");
        let text = render(&wide, &BTreeMap::new(), &BTreeMap::new(), (&family, &given));
        assert!(
            text.contains("τ = 10.0 % (given: --between-spread, an A/A pair's)"),
            "{text}"
        );
        let text = render(&plain, &BTreeMap::new(), &BTreeMap::new(), (&family, &none));
        assert!(
            text.contains("τ not estimated: 2 points, an estimate needs 10"),
            "{text}"
        );
    }
}
