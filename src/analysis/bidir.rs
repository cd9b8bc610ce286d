//! `sweep --bidir`'s question: what does the reverse direction cost the forward one? Each bidir
//! point and its one-way twin (same mechanism, size and threads) were visited in the same group
//! of every round, so each round gives one ratio of the forward direction's receiver Gbit/s with
//! the reverse running over its Gbit/s alone; the answer is that ratio's interval, in three
//! states: below 1 (the reverse costs it), above 1, equivalent within ±5 %, or undecided.
use super::paired::{self, verdict};
use super::point::Point;
use super::{size_label, Answer};
use crate::stats::verdict::Verdict;

pub const QUESTION: &str =
    "What does the reverse direction cost the forward one (--bidir against one-way, paired)?";

const BASIS: &str = "per-round paired ratios of the forward direction's receiver Gbit/s, each \
     bidir point over its one-way twin (same mechanism, size and threads, visited in the same \
     group of every round); 95 % CI by Student's t on the per-round log-ratios; each point \
     alone (no family correction): below/above 1 when that interval excludes 1, \"equivalent \
     within ±5 %\" when two one-sided tests place it inside [0.95, 1.05] (90 % CI), \
     \"undecided\" otherwise";

/// The one-way point `p` (a bidir point) is paired with.
fn twin<'a>(p: &Point, points: &[&'a Point]) -> Option<&'a Point> {
    points.iter().copied().find(|q| {
        !q.bidir
            && q.mechanism == p.mechanism
            && q.pattern == p.pattern
            && q.transport == p.transport
            && q.recv == p.recv
            && q.size == p.size
            && q.threads == p.threads
    })
}

/// The state of one ratio in the answer's words, without its figures.
fn word(state: Verdict) -> &'static str {
    match state {
        Verdict::Slower => "costs the forward direction",
        Verdict::Beats => "leaves the forward direction faster",
        Verdict::Equivalent => "equivalent within ±5 %",
        Verdict::Undecided => "undecided",
    }
}

/// The answer, or `None` when the points hold no bidir point (then nothing was asked).
pub fn answer(points: &[&Point]) -> Option<Answer> {
    let bidir: Vec<&Point> = points.iter().copied().filter(|p| p.bidir).collect();
    if bidir.is_empty() {
        return None;
    }
    let (mut details, mut summary) = (Vec::new(), Vec::new());
    for p in &bidir {
        let at = format!(
            "{} {} ×{}",
            p.mechanism,
            size_label(p.size),
            p.threads as usize
        );
        let Some(one_way) = twin(p, points) else {
            details.push(format!("{at}: no completed one-way twin to pair with"));
            continue;
        };
        match paired::ratio(p, one_way) {
            Ok(r) => {
                let state = paired::state(&r);
                details.push(format!(
                    "{at}: forward Gbit/s with the reverse running over one-way {} ({:.2} against {:.2} Gbit/s): {}",
                    verdict(&r),
                    p.throughput_with_ci().0,
                    one_way.throughput_with_ci().0,
                    word(state)
                ));
                summary.push(format!("{at}: {}", word(state)));
            }
            Err(why) => details.push(format!("{at}: undecided: {why}")),
        }
    }
    if summary.is_empty() {
        return Some(Answer::cannot(
            QUESTION,
            format!(
                "Cannot be said: no bidir point pairs with a one-way twin over two rounds or more. {}",
                details.join("; ")
            ),
            BASIS.into(),
        ));
    }
    Some(Answer {
        question: QUESTION,
        finding: "Per mechanism, size and threads: the forward direction's throughput while the reverse direction runs, over the same point one-way:".into(),
        details,
        rests_on: BASIS.into(),
        verdict: Some(summary.join("; ")),
    })
}

#[cfg(test)]
#[path = "bidir_tests.rs"]
mod tests;
