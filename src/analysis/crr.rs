//! `sweep --patterns rr,crr`'s question: what does a connection cost? Each crr point (connect,
//! request, response, close) is set against its rr twin (same mechanism, transport, size and
//! threads: the same exchange on a connection that stays open). The two sit in different groups
//! of a round (a group is one pattern), so each round gives one ratio of figures measured
//! minutes apart at most, not back to back: the round's regime cancels, a shift inside the round
//! does not. The answer is that ratio's interval in three states, with the split of a crr
//! transaction from the record (connect, first response bytes, whole response, close) and each
//! side's CPU per transaction.
use super::paired;
use super::point::Point;
use super::ratio_family::{self, RatioFamily};
use super::tested::TestedAnswer;
use super::{place, Answer};
use crate::record::crr::CrrReport;
use crate::stats::verdict::{percent, Judged, Verdict};
use crate::stats::visits::RatioInterval;

pub const QUESTION: &str =
    "What does a connection cost (a crr transaction against an rr round trip, paired by round)?";

fn basis(margin: f64) -> String {
    format!(
        "per-round ratios of the rr point's round trips/s over its crr twin's transactions/s \
         (same mechanism, transport, size and threads; both visited in every round, in \
         different groups of it); Student's t on the per-round log-ratios; \"costs\" when the \
         interval lies above 1; {}. The split and CPU per transaction are the client's clock \
         and both sides' rusage over the measured windows of every visit (means, no interval)",
        ratio_family::basis(margin)
    )
}

/// The rr point `p` (a crr point) is set against.
fn twin<'a>(p: &Point, points: &[&'a Point]) -> Option<&'a Point> {
    points.iter().copied().find(|q| {
        q.pattern == "rr"
            && !q.bidir
            && q.mechanism == p.mechanism
            && q.transport == p.transport
            && q.size == p.size
            && q.threads == p.threads
    })
}

/// The state of one ratio (rr over crr) in the answer's words.
fn word(state: Verdict, margin: f64) -> String {
    match state {
        Verdict::Beats => "the connection costs".into(),
        Verdict::Slower => "a crr transaction is faster than a round trip".into(),
        Verdict::Equivalent => format!("equivalent within ±{}", percent(margin)),
        Verdict::Undecided => "undecided".into(),
    }
}

fn us(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.1} µs"))
}

/// "connect 20.7 µs, first byte 27.4 µs, response 27.4 µs, close 14.1 µs; CPU per transaction
/// client 35.5 µs, server 25.5 µs": the record's split, or why there is none.
fn split(c: Option<&CrrReport>) -> String {
    let Some(c) = c else {
        return "no crr block in the record".into();
    };
    format!(
        "connect {}, first byte {}, response {}, close {}; CPU per transaction client {}, server {}",
        us(c.connect_us_mean),
        us(c.first_byte_us_mean),
        us(c.response_us_mean),
        us(c.close_us_mean),
        us(c.client_cpu_us_per_transaction),
        us(c.server_cpu_us_per_transaction)
    )
}

/// The crr points, each with its rr twin where one completed.
fn pairs<'a>(points: &[&'a Point]) -> Vec<(&'a Point, Option<&'a Point>)> {
    points
        .iter()
        .copied()
        .filter(|p| p.pattern == "crr")
        .map(|p| (p, twin(p, points)))
        .collect()
}

/// Each pair's ratio, rr over crr (or why it has none), judged as one family.
fn family(pairs: &[(&Point, Option<&Point>)], margin: f64) -> RatioFamily {
    let ratios: Vec<Result<RatioInterval, String>> = pairs
        .iter()
        .map(|(p, rr)| match rr {
            Some(rr) => paired::ratio(rr, p),
            None => Err("no completed rr twin to pair with (add rr to --patterns)".into()),
        })
        .collect();
    ratio_family::judge(&ratios, margin)
}

/// One crr point's line, and its verdict's words when it had a ratio to judge.
fn line(
    (p, rr): (&Point, Option<&Point>),
    cell: &Result<Judged, String>,
    margin: f64,
) -> (String, Option<String>) {
    let at = place(p);
    let parts = split(p.crr.as_ref());
    match (cell, rr) {
        (Ok(j), Some(rr)) => {
            // Time per exchange on one flow: threads over the rate.
            let per = |rate: f64| p.threads * 1e6 / rate;
            let (crr, open) = (per(p.headline_value()), per(rr.headline_value()));
            let line = format!(
                "{at}: a crr transaction takes {} a round trip ({crr:.1} against {open:.1} µs per flow, so the connection adds {:.1} µs): {}; {parts}",
                ratio_family::text(j, margin),
                crr - open,
                word(j.state, margin)
            );
            (line, Some(word(j.state, margin)))
        }
        (Err(why), Some(_)) => (format!("{at}: undecided: {why}; {parts}"), None),
        (_, None) => (
            format!("{at}: {parts}; no completed rr twin to pair with (add rr to --patterns)"),
            None,
        ),
    }
}

/// The answer, or `None` when the points hold no crr point (then nothing was asked).
pub fn answer(points: &[&Point], margin: f64) -> Option<Answer> {
    let pairs = pairs(points);
    if pairs.is_empty() {
        return None;
    }
    let f = family(&pairs, margin);
    let (mut details, mut summary) = (Vec::new(), Vec::new());
    for (pair, cell) in pairs.iter().zip(&f.cells) {
        let (text, state) = line(*pair, cell, margin);
        if let Some(state) = state {
            summary.push(format!("{}: {state}", place(pair.0)));
        }
        details.push(text);
    }
    if summary.is_empty() {
        return Some(Answer {
            details,
            ..Answer::cannot(
                QUESTION,
                "Cannot be said: no crr point pairs with an rr twin over two rounds or more; the split of each transaction follows.".into(),
                basis(margin),
            )
        });
    }
    Some(Answer {
        question: QUESTION,
        finding: format!(
            "Per mechanism, size and threads: a crr transaction's time over a round trip on an open connection ({}), and the transaction's split:",
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
#[path = "crr_tests.rs"]
mod tests;
