//! `sweep --bidir`'s question: what does the reverse direction cost the forward one? Each bidir
//! point and its one-way twin (same mechanism, size and threads) were visited in the same group
//! of every round, so each round gives one ratio of the forward direction's receiver Gbit/s with
//! the reverse running over its Gbit/s alone; the answer is that ratio's interval, in three
//! states: below 1 (the reverse costs it), above 1, equivalent within ±5 %, or undecided.
use super::paired;
use super::point::Point;
use super::ratio_family::{self, RatioFamily};
use super::tested::TestedAnswer;
use super::{place, Answer};
use crate::stats::verdict::Verdict;
use crate::stats::visits::RatioInterval;

pub const QUESTION: &str =
    "What does the reverse direction cost the forward one (--bidir against one-way, paired)?";

fn basis(margin: f64) -> String {
    format!(
        "per-round paired ratios of the forward direction's receiver Gbit/s, each bidir point \
         over its one-way twin (same mechanism, size and threads, visited in the same group of \
         every round); Student's t on the per-round log-ratios; below/above 1 when the interval \
         excludes 1; {}",
        ratio_family::basis(margin)
    )
}

/// The one-way point `p` (a bidir point) is paired with.
fn twin<'a>(p: &Point, points: &[&'a Point]) -> Option<&'a Point> {
    super::twin::twin(p, points, |q| !q.bidir)
}

/// The state of one ratio in the answer's words, without its figures.
fn word(state: Verdict, margin: f64) -> String {
    let words = (
        "leaves the forward direction faster",
        "costs the forward direction",
    );
    super::twin::word(state, margin, words)
}

/// The bidir points, each with its one-way twin where one completed.
fn pairs<'a>(points: &[&'a Point]) -> Vec<(&'a Point, Option<&'a Point>)> {
    points
        .iter()
        .copied()
        .filter(|p| p.bidir)
        .map(|p| (p, twin(p, points)))
        .collect()
}

/// Each pair's ratio (or why it has none), judged as one family.
fn family(pairs: &[(&Point, Option<&Point>)], margin: f64) -> RatioFamily {
    let ratios: Vec<Result<RatioInterval, String>> = pairs
        .iter()
        .map(|(p, one_way)| match one_way {
            Some(q) => paired::ratio(p, q),
            None => Err("no completed one-way twin to pair with".into()),
        })
        .collect();
    ratio_family::judge(&ratios, margin)
}

/// The answer, or `None` when the points hold no bidir point (then nothing was asked).
pub fn answer(points: &[&Point], margin: f64) -> Option<Answer> {
    let pairs = pairs(points);
    if pairs.is_empty() {
        return None;
    }
    let f = family(&pairs, margin);
    let (mut details, mut summary) = (Vec::new(), Vec::new());
    for ((p, one_way), cell) in pairs.iter().zip(&f.cells) {
        let at = place(p);
        match (cell, one_way) {
            (Ok(j), Some(q)) => {
                details.push(format!(
                    "{at}: forward Gbit/s with the reverse running over one-way {} ({:.2} against {:.2} Gbit/s): {}",
                    ratio_family::text(j, margin),
                    p.throughput_with_ci().0,
                    q.throughput_with_ci().0,
                    word(j.state, margin)
                ));
                summary.push(format!("{at}: {}", word(j.state, margin)));
            }
            (Err(why), Some(_)) => details.push(format!("{at}: undecided: {why}")),
            (_, None) => details.push(format!("{at}: no completed one-way twin to pair with")),
        }
    }
    if summary.is_empty() {
        return Some(Answer::cannot(
            QUESTION,
            format!(
                "Cannot be said: no bidir point pairs with a one-way twin over two rounds or more. {}",
                details.join("; ")
            ),
            basis(margin),
        ));
    }
    Some(Answer {
        question: QUESTION,
        finding: format!(
            "Per mechanism, size and threads: the forward direction's throughput while the reverse direction runs, over the same point one-way ({}):",
            f.control()
        ),
        details,
        rests_on: basis(margin),
        verdict: Some(summary.join("; ")),
    })
}

/// The family behind `answer`, cell by cell, for answers.json.
pub fn tested(points: &[&Point], margin: f64) -> Option<TestedAnswer> {
    let pairs = pairs(points);
    let names: Vec<String> = pairs.iter().map(|(p, _)| place(p)).collect();
    family(&pairs, margin).tested(QUESTION, &names)
}

#[cfg(test)]
#[path = "bidir_tests.rs"]
mod tests;
