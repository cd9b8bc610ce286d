//! Derived answers from a sweep's results: crossover sizes, per-byte costs, cache savings,
//! copied fallbacks, scaling and the most surprising point. Every answer is computed from the
//! records and says which of them it rests on; none is written by hand.
pub(crate) mod bidir;
pub(crate) mod costs;
pub mod crossover;
pub(crate) mod crossover_outcome;
pub mod crossover_rule;
pub(crate) mod crr;
pub(crate) mod limited;
pub(crate) mod load;
pub mod paired;
pub(crate) mod pairs_table;
pub(crate) mod point;
pub(crate) mod profile;
pub(crate) mod profile_change;
pub(crate) mod questions;
pub(crate) mod ratio_family;
pub(crate) mod scaling;
pub(crate) mod separated;
pub(crate) mod serialization;
pub(crate) mod sink;
pub(crate) mod surprise;
pub mod synthetic;
pub(crate) mod tested;
pub(crate) mod twin;
pub(crate) mod under_load;

use crate::mechanism::MechanismKind;
use crate::record::probe_view::ProbeView;
use crate::record::view::RunView;
use point::Point;

/// One question of the report, its answer and the data the answer rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub question: &'static str,
    pub finding: String,
    /// Figures behind the finding, one line each (per thread count, per size, ...).
    pub details: Vec<String>,
    pub rests_on: String,
    /// The finding without its figures (who beats whom, from which size, which category): what
    /// a re-run must reproduce. `None` for an answer that is a figure, not a verdict.
    pub verdict: Option<String>,
}

impl Answer {
    /// An answer that cannot be given, and why.
    pub fn cannot(question: &'static str, finding: String, rests_on: String) -> Answer {
        Answer {
            question,
            finding,
            details: Vec::new(),
            rests_on,
            verdict: Some("cannot be said".into()),
        }
    }
}

/// The records of one results file and the points read from them.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// Every record, in file order, as the readers see it.
    pub records: Vec<RunView>,
    /// One point per (series, pattern, size, threads): the last record wins.
    pub points: Vec<Point>,
    /// Records replaced by a later record of the same point (a resumed or repeated sweep).
    pub superseded: usize,
    /// The folder's probe.json (`bytepath probe` of the machine), when the sweep recorded one.
    pub probe: Option<ProbeView>,
    /// The study's `--margin` (its marker's `spec.margin`), where it recorded one.
    pub margin: Option<f64>,
    /// The margin and looks the crossover families are judged with (rounds.json's, or the
    /// report's `--margin`).
    pub verdicts: crossover_rule::Settings,
    /// What the method text adds when the verdicts are judged at a margin other than the
    /// study's (`report --margin`, `report::margin_change`).
    pub margin_note: Option<String>,
}

impl Dataset {
    /// The equivalence margin verdicts are stated with: the study's own, else the default.
    pub fn margin(&self) -> f64 {
        self.margin.unwrap_or(crate::stats::verdict::DEFAULT_MARGIN)
    }

    /// Points with clean figures: not failed, not interrupted.
    pub fn completed(&self) -> Vec<&Point> {
        self.points.iter().filter(|p| p.completed()).collect()
    }

    /// One-way points of `pattern`: `--bidir` points are set against their one-way twins in
    /// the bidir answer alone, never against other mechanisms.
    pub fn completed_with_pattern(&self, pattern: &str) -> Vec<&Point> {
        self.points
            .iter()
            .filter(|p| p.completed() && p.pattern == pattern && !p.bidir)
            .collect()
    }
}

/// All answers the report gives, in the order it gives them.
pub fn answers(data: &Dataset) -> Vec<Answer> {
    let stream = data.completed_with_pattern("stream");
    let mut answers: Vec<Answer> = crossover_pairs(&stream)
        .into_iter()
        .map(|(challenger, baseline)| {
            crossover::answer(&stream, challenger, baseline, data.verdicts)
        })
        .collect();
    answers.extend(sink::answers(&stream, data.verdicts));
    answers.extend([
        costs::zerocopy_answer(&data.completed()),
        serialization::answer(&stream, data.margin()),
        scaling::answer(&stream, online_cpus(data)),
        costs::cache_answer(&stream),
        surprise::answer(&data.completed()),
    ]);
    // Only where the results hold `--bidir` points, and `--profile` blocks.
    answers.extend(bidir::answer(&data.completed(), data.margin()));
    answers.extend(crr::answer(&data.completed(), data.margin()));
    answers.extend(under_load::answer(&data.completed(), data.margin()));
    answers.extend(profile::answer(data));
    answers.extend(limited::answer(data));
    answers
}

/// The families behind the sweep's comparison answers, cell by cell, for answers.json.
pub fn tested_answers(data: &Dataset) -> Vec<tested::TestedAnswer> {
    let stream = data.completed_with_pattern("stream");
    let mut tested: Vec<tested::TestedAnswer> = crossover_pairs(&stream)
        .into_iter()
        .map(|(challenger, baseline)| {
            crossover::tested(&stream, challenger, baseline, data.verdicts)
        })
        .collect();
    tested.extend(sink::tested(&stream, data.verdicts));
    tested.extend(serialization::tested(&stream, data.margin()));
    tested.extend(bidir::tested(&data.completed(), data.margin()));
    tested.extend(crr::tested(&data.completed(), data.margin()));
    tested.extend(under_load::tested(&data.completed(), data.margin()));
    tested
}

/// The crossover questions asked, as the mechanisms' descriptors set them: those marked
/// `always` (gather and zerocopy against copy) always, the others only where the results
/// hold the mechanism. A sink's sweep asks its own (`sink`): its points are udp, on a sink or
/// beside it.
fn crossover_pairs(stream: &[&Point]) -> Vec<(&'static str, &'static str)> {
    if stream.iter().any(|p| p.sink) {
        return Vec::new();
    }
    MechanismKind::ALL
        .iter()
        .filter_map(|m| {
            let c = m.crossover.as_ref()?;
            let held = stream.iter().any(|p| p.mechanism == m.name());
            (c.always || held).then(|| (m.name(), c.against.name()))
        })
        .collect()
}

fn online_cpus(data: &Dataset) -> Option<f64> {
    data.records
        .iter()
        .find_map(|r| r.environment.as_ref()?.online_cpus.as_ref()?.as_f64())
}

/// "send 64 KiB ×1": where a point sits, as the bidir and crr answers name it.
pub(crate) fn place(p: &Point) -> String {
    format!(
        "{} {} ×{}",
        p.mechanism,
        size_label(p.size),
        p.threads as usize
    )
}

/// A message size as people write it: 64 B, 4 KiB, 1 MiB (exact powers of two without decimals).
pub fn size_label(size: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = size;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Where a mechanism sorts: in the order of `MechanismKind::ALL` (the reference first, then
/// by fewer copies), then any other.
pub fn mechanism_rank(mechanism: &str) -> usize {
    let all = MechanismKind::ALL;
    all.iter()
        .position(|m| m.name() == mechanism)
        .unwrap_or(all.len())
}

/// "1 point" / "3 points".
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// "1 thread" / "4 threads".
pub fn threads_label(threads: f64) -> String {
    if threads == 1.0 {
        "1 thread".into()
    } else {
        format!("{threads:.0} threads")
    }
}

/// The point of `series` at (size, threads), if measured.
pub fn find<'a>(points: &[&'a Point], series: &str, size: f64, threads: f64) -> Option<&'a Point> {
    points
        .iter()
        .find(|p| p.series() == series && p.size == size && p.threads == threads)
        .copied()
}

/// `s` with its first letter in upper case (answers are built from clauses).
pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

/// Sorted, distinct values of `f` over `points`.
pub fn distinct(points: &[&Point], f: impl Fn(&Point) -> f64) -> Vec<f64> {
    let mut v: Vec<f64> = points.iter().map(|p| f(p)).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// "64 B to 1 MiB" over the sizes of `points`, or "no sizes".
pub fn size_range(points: &[&Point]) -> String {
    let sizes = distinct(points, |p| p.size);
    match (sizes.first(), sizes.last()) {
        (Some(a), Some(b)) if a == b => size_label(*a),
        (Some(a), Some(b)) => format!("{} to {}", size_label(*a), size_label(*b)),
        _ => "no sizes".into(),
    }
}

/// A relative change as a signed percentage: +23 %, -8 %.
pub fn percent_change(ratio: f64) -> String {
    let p = (ratio - 1.0) * 100.0;
    if p < 0.0 {
        format!("-{:.0} %", -p)
    } else {
        format!("+{p:.0} %")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_further_paths_are_asked_about_only_where_measured() {
        use synthetic::{jsonl, Shape};
        let questions = |shapes: &[Shape]| -> Vec<&'static str> {
            let data = load::parse(&jsonl(shapes), "r").unwrap();
            answers(&data).iter().map(|a| a.question).collect()
        };
        let plain = questions(&[Shape::stream("copy", 4096, 1, 10.0)]);
        assert!(!plain.iter().any(|q| q.contains("io_uring")), "{plain:?}");
        let with_uring = questions(&[
            Shape::stream("send", 4096, 1, 10.0),
            Shape::stream("uring", 4096, 1, 12.0),
        ]);
        assert_eq!(
            with_uring.len(),
            plain.len() + 1,
            "one more question: {with_uring:?}"
        );
        assert!(with_uring
            .iter()
            .any(|q| q.contains("io_uring send (uring) beat send()")));
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_label(64.0), "64 B");
        assert_eq!(size_label(4096.0), "4 KiB");
        assert_eq!(size_label(1536.0), "1.5 KiB");
        assert_eq!(size_label(1048576.0), "1 MiB");
    }

    #[test]
    fn changes_carry_their_sign() {
        assert_eq!(percent_change(1.234), "+23 %");
        assert_eq!(percent_change(0.92), "-8 %");
    }

    #[test]
    fn the_demo_sweep_answers_every_question() {
        let data = load::parse(&synthetic::jsonl(&synthetic::demo_sweep(true)), "r").unwrap();
        let answers = answers(&data);
        assert_eq!(answers.len(), 7);
        for a in &answers {
            assert!(!a.finding.is_empty() && !a.rests_on.is_empty(), "{a:?}");
        }
    }
}
