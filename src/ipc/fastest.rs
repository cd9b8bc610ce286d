//! The fastest round trip at each size: the transport that beats every other in all pairwise
//! paired comparisons at that size (one Holm family per size, `analysis::separated`), or "no
//! single fastest" with the transports the data do not separate. The fastest estimate tested
//! against the rest would name a winner among equals (the winner's curse).
use super::series::{at_size, cannot, name, paired_basis, round_trip_ns, FASTEST};
use crate::analysis::pairs_table::{self, PairsTable};
use crate::analysis::point::Point;
use crate::analysis::separated::{self, leadership, Leadership, Rounds, Words};
use crate::analysis::tested::{Cell, TestedAnswer};
use crate::analysis::{capitalize, distinct, size_label, Answer};
use crate::report::units::duration_ns;

/// How the fastest is told.
const WORDS: Words = Words {
    better: "beats",
    worse: "is slower",
    leads: "is fastest",
    noun: "fastest",
};

/// Why each size's pairs are one Holm family.
const WHY: &str = "Holm: 'fastest' is claimed only when one transport beats every other at \
     the size, so every pair's claim must hold together";

/// One size's family: its transports' points, named with their rounds, and every pair judged.
struct SizeFamily<'a> {
    size: f64,
    here: Vec<&'a Point>,
    candidates: Vec<(String, Rounds)>,
    leadership: Leadership,
}

/// Each size with round trips of two transports or more, as a family of pairs: what the cells,
/// the tables and the answer's lines are all read from.
fn families<'a>(rr: &[&'a Point], margin: f64) -> Vec<SizeFamily<'a>> {
    distinct(rr, |p| p.size)
        .into_iter()
        .map(|size| (size, at_size(rr, size)))
        .filter(|(_, here)| here.len() >= 2)
        .map(|(size, here)| {
            let candidates: Vec<(String, Rounds)> =
                here.iter().map(|p| (name(p), p.visits.clone())).collect();
            let leadership = leadership(&candidates, true, margin);
            SizeFamily {
                size,
                here,
                candidates,
                leadership,
            }
        })
        .collect()
}

/// Each size's family of pairwise comparisons, cell by cell, for answers.json.
pub fn tested(rr: &[&Point], margin: f64) -> Vec<TestedAnswer> {
    families(rr, margin)
        .into_iter()
        .map(|f| {
            let (c, l) = (&f.candidates, &f.leadership);
            let cells = l
                .pairs
                .iter()
                .zip(&l.family.judged)
                .map(|(&(i, j), judged)| Cell::new(format!("{} over {}", c[i].0, c[j].0), judged))
                .collect();
            TestedAnswer::new(FASTEST, &l.family, WHY, cells)
                .named(format!("at {}", size_label(f.size)))
        })
        .collect()
}

/// One size's comparisons as a detail line and its verdict ("shm" or "no single (shm, unix)").
fn size_line(f: &SizeFamily, margin: f64) -> (String, String) {
    let (candidates, l) = (&f.candidates, &f.leadership);
    let line = format!(
        "{}: {}{}",
        size_label(f.size),
        separated::describe(candidates, l, WORDS, margin),
        tail(&f.here, l)
    );
    let verdict = match l.leader {
        Some(i) => candidates[i].0.clone(),
        None => {
            let top: Vec<&str> = l.top.iter().map(|&i| candidates[i].0.as_str()).collect();
            format!("no single ({})", top.join(", "))
        }
    };
    (line, verdict)
}

/// What follows a size's comparisons: the leader's round trip, the family's control and the
/// pairs that could not be compared.
fn tail(here: &[&Point], l: &Leadership) -> String {
    let mut text = String::new();
    if let Some(i) = l.leader {
        text += &format!("; {} per round trip", duration_ns(round_trip_ns(here[i])));
    }
    text += &format!(" ({})", l.family.control());
    for why in &l.unpaired {
        text += &format!("; {why}");
    }
    text
}

/// Each size's pairs as a compact table under a one-line summary ("64 B: shm is fastest;
/// 3.20 µs per round trip (3 tests, Holm …)"), for report.md and report.html.
pub fn tables(rr: &[&Point], margin: f64) -> Vec<PairsTable> {
    families(rr, margin)
        .into_iter()
        .map(|f| {
            let l = &f.leadership;
            let names: Vec<String> = f.candidates.iter().map(|c| c.0.clone()).collect();
            let who = match l.leader {
                Some(i) => format!("{} {}", names[i], WORDS.leads),
                None => {
                    let top: Vec<&str> = l.top.iter().map(|&i| names[i].as_str()).collect();
                    format!("no single {}: {} not separated", WORDS.noun, top.join(", "))
                }
            };
            PairsTable {
                question: FASTEST,
                summary: format!("{}: {who}{}", size_label(f.size), tail(&f.here, l)),
                names: ["transport", "against"],
                ratio: "round trips/s ratio",
                rows: pairs_table::rows(&names, l, WORDS, margin),
            }
        })
        .collect()
}

pub fn fastest(rr: &[&Point], margin: f64) -> Answer {
    let (mut details, mut verdicts) = (Vec::new(), Vec::new());
    for f in families(rr, margin) {
        let (line, verdict) = size_line(&f, margin);
        details.push(line);
        verdicts.push((f.size, verdict));
    }
    if details.is_empty() {
        return cannot(
            FASTEST,
            "Cannot be said: no size has round trips of two transports (measure latency with at least two --transports).".into(),
            margin,
        );
    }
    let mut winners: Vec<&String> = verdicts.iter().map(|v| &v.1).collect();
    winners.dedup();
    let finding = match winners.as_slice() {
        [one] if !one.starts_with("no single") => format!(
            "{} has the fastest round trip at every size measured: it beats every other transport at each.",
            capitalize(one)
        ),
        _ => format!(
            "Per size, the transport that beats every other, or no single fastest where the data do not separate them: {}.",
            verdicts
                .iter()
                .map(|(s, v)| format!("{} {v}", size_label(*s)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let text: Vec<String> = verdicts
        .iter()
        .map(|(s, v)| format!("{} {v}", size_label(*s)))
        .collect();
    Answer {
        question: FASTEST,
        finding,
        details,
        rests_on: format!(
            "{}; at each size every pair of transports compared (round trips per second, the first over the second), the pairs of one size one Holm family; a transport is the fastest only when it beats every other",
            paired_basis(margin)
        ),
        verdict: Some(format!("fastest: {}", text.join(", "))),
    }
}
