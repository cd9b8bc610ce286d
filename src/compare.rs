//! `bytepath compare OLD NEW`: per point, the ratio new/old of the statistics' mean (receiver
//! Gbit/s for stream, round trips/s for rr; higher is better for both) with its 95 % interval,
//! and a verdict: faster or slower only where that interval excludes 1.
use crate::cli::CompareArgs;
use crate::config::parse_percent;
use crate::error::{Error, Status};
use crate::record::{point_key, read_results};
use crate::stats::{ratio, Summary};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    NoSignificantChange,
    /// One side has no confidence interval (fewer than two slices).
    CannotJudge,
}

/// One point present in both folders.
#[derive(Debug, Clone, PartialEq)]
pub struct PointChange {
    pub key: String,
    pub old: Option<Summary>,
    pub new: Option<Summary>,
    /// new/old and its 95 % interval.
    pub ratio: Option<(f64, f64, f64)>,
    pub verdict: Verdict,
}

pub fn command(args: &CompareArgs) -> Result<Status, Error> {
    let limit = match &args.fail_on_regression {
        Some(text) => Some(parse_percent("--fail-on-regression", text, 100.0)?),
        None => None,
    };
    let old = by_key(&read_results(&args.old)?);
    let new = by_key(&read_results(&args.new)?);
    let changes = compare(&old, &new);
    print!("{}", render(&changes, &old, &new));
    let regressed: Vec<&PointChange> = changes.iter().filter(|c| is_regression(c, limit)).collect();
    if let (Some(limit), false) = (limit, regressed.is_empty()) {
        eprintln!(
            "bytepath: {} point(s) got slower by more than {:.1} %: {}",
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

/// The last completed record of each point (a resumed sweep may hold an interrupted one too).
fn by_key(records: &[Value]) -> BTreeMap<String, Value> {
    records
        .iter()
        .filter(|r| r["status"] == "completed")
        .map(|r| (point_key(&r["config"]), r.clone()))
        .collect()
}

fn summary(record: &Value) -> Option<Summary> {
    serde_json::from_value(record["statistics"]["summary"].clone()).ok()
}

pub fn compare(old: &BTreeMap<String, Value>, new: &BTreeMap<String, Value>) -> Vec<PointChange> {
    old.iter()
        .filter_map(|(key, o)| new.get(key).map(|n| change(key, summary(o), summary(n))))
        .collect()
}

pub fn change(key: &str, old: Option<Summary>, new: Option<Summary>) -> PointChange {
    let r = match (&old, &new) {
        (Some(o), Some(n)) if o.mean > 0.0 => Some(ratio(n, o)),
        _ => None,
    };
    let verdict = match r {
        None => Verdict::CannotJudge,
        Some((_, lo, _)) if lo > 1.0 => Verdict::Faster,
        Some((_, _, hi)) if hi < 1.0 => Verdict::Slower,
        Some(_) => Verdict::NoSignificantChange,
    };
    PointChange {
        key: key.to_string(),
        old,
        new,
        ratio: r,
        verdict,
    }
}

/// Slower, significantly, and by more than `limit` (a share such as 0.05).
fn is_regression(c: &PointChange, limit: Option<f64>) -> bool {
    match (c.verdict, c.ratio, limit) {
        (Verdict::Slower, Some((r, _, _)), Some(limit)) => r < 1.0 - limit,
        _ => false,
    }
}

fn render(
    changes: &[PointChange],
    old: &BTreeMap<String, Value>,
    new: &BTreeMap<String, Value>,
) -> String {
    let mut out = String::new();
    let fmt = |s: &Option<Summary>| {
        s.map_or("no CI".to_string(), |s| {
            format!("{:.4} ±{:.1}%", s.mean, s.ci95_rel * 100.0)
        })
    };
    let _ = writeln!(
        out,
        "{:<34} {:>20} {:>20} {:>24}  verdict",
        "point", "old mean ±CI", "new mean ±CI", "new/old [95 % CI]"
    );
    for c in changes {
        let r = c.ratio.map_or("-".to_string(), |(r, lo, hi)| {
            format!("{r:.3} [{lo:.3}, {hi:.3}]")
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
    let count = |v| changes.iter().filter(|c| c.verdict == v).count();
    let _ = writeln!(
        out,
        "\n{} points compared: {} faster, {} slower, {} no significant change, {} cannot be judged",
        changes.len(),
        count(Verdict::Faster),
        count(Verdict::Slower),
        count(Verdict::NoSignificantChange),
        count(Verdict::CannotJudge)
    );
    for (label, only) in [
        ("old", missing_from(old, new)),
        ("new", missing_from(new, old)),
    ] {
        if !only.is_empty() {
            let _ = writeln!(out, "only in {label}: {}", only.join(", "));
        }
    }
    let _ = writeln!(out, "(figure: receiver Gbit/s for stream, client round trips/s for rr; higher is better; a verdict needs the ratio's 95 % interval to exclude 1)");
    out
}

fn missing_from(a: &BTreeMap<String, Value>, b: &BTreeMap<String, Value>) -> Vec<String> {
    a.keys().filter(|k| !b.contains_key(*k)).cloned().collect()
}

fn describe(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::NoSignificantChange => "no significant change",
        Verdict::CannotJudge => "cannot judge (no CI)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    fn s(values: &[f64]) -> Option<Summary> {
        summarize(values)
    }

    #[test]
    fn a_clear_gain_is_faster_and_a_clear_loss_is_slower() {
        let old = s(&[10.0, 10.1, 9.9, 10.0, 10.05]);
        let new = s(&[12.0, 12.1, 11.9, 12.0, 12.05]);
        assert_eq!(change("k", old, new).verdict, Verdict::Faster);
        assert_eq!(change("k", new, old).verdict, Verdict::Slower);
    }

    #[test]
    fn overlapping_noise_is_no_significant_change() {
        let old = s(&[10.0, 11.0, 9.0, 10.5, 9.5]);
        let new = s(&[10.2, 11.1, 9.3, 10.4, 9.9]);
        assert_eq!(change("k", old, new).verdict, Verdict::NoSignificantChange);
    }

    #[test]
    fn a_point_without_a_ci_cannot_be_judged() {
        assert_eq!(
            change("k", None, s(&[1.0, 2.0])).verdict,
            Verdict::CannotJudge
        );
    }

    #[test]
    fn only_significant_losses_beyond_the_limit_are_regressions() {
        let old = s(&[10.0, 10.1, 9.9, 10.0]);
        let small = change("k", old, s(&[9.7, 9.75, 9.72, 9.71])); // 3 % slower
        let big = change("k", old, s(&[8.0, 8.1, 7.9, 8.0])); // 20 % slower
        assert_eq!(small.verdict, Verdict::Slower);
        assert!(!is_regression(&small, Some(0.05)));
        assert!(is_regression(&big, Some(0.05)));
        assert!(!is_regression(&big, None));
    }
}
