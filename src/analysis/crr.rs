//! `sweep --patterns rr,crr`'s question: what does a connection cost? Each crr point (connect,
//! request, response, close) is set against its rr twin (same mechanism, transport, size and
//! threads: the same exchange on a connection that stays open). The two sit in different groups
//! of a round (a group is one pattern), so each round gives one ratio of figures measured
//! minutes apart at most, not back to back: the round's regime cancels, a shift inside the round
//! does not. The answer is that ratio's interval in three states, with the split of a crr
//! transaction from the record (connect, first response bytes, whole response, close) and each
//! side's CPU per transaction.
use super::paired::{self, verdict};
use super::point::Point;
use super::{size_label, Answer};
use crate::record::crr::CrrReport;
use crate::stats::verdict::Verdict;

pub const QUESTION: &str =
    "What does a connection cost (a crr transaction against an rr round trip, paired by round)?";

const BASIS: &str = "per-round ratios of the rr point's round trips/s over its crr twin's \
     transactions/s (same mechanism, transport, size and threads; both visited in every round, \
     in different groups of it); 95 % CI by Student's t on the per-round log-ratios; each point \
     alone (no family correction): \"costs\" when that interval lies above 1, \"equivalent \
     within ±5 %\" when two one-sided tests place it inside [0.95, 1.05] (90 % CI), \
     \"undecided\" otherwise. The split and CPU per transaction are the client's clock and both \
     sides' rusage over the measured windows of every visit (means, no interval)";

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
fn word(state: Verdict) -> &'static str {
    match state {
        Verdict::Beats => "the connection costs",
        Verdict::Slower => "a crr transaction is faster than a round trip",
        Verdict::Equivalent => "equivalent within ±5 %",
        Verdict::Undecided => "undecided",
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

/// "send 64 B ×1": where a crr point sits.
fn at(p: &Point) -> String {
    format!(
        "{} {} ×{}",
        p.mechanism,
        size_label(p.size),
        p.threads as usize
    )
}

/// One crr point's line, and its verdict's words when it has an rr twin to pair with.
fn judge(p: &Point, points: &[&Point]) -> (String, Option<&'static str>) {
    let at = at(p);
    let parts = split(p.crr.as_ref());
    let Some(rr) = twin(p, points) else {
        let line =
            format!("{at}: {parts}; no completed rr twin to pair with (add rr to --patterns)");
        return (line, None);
    };
    match paired::ratio(rr, p) {
        Ok(r) => {
            let state = paired::state(&r);
            // Time per exchange on one flow: threads over the rate.
            let per = |rate: f64| p.threads * 1e6 / rate;
            let (crr, open) = (per(p.headline_value()), per(rr.headline_value()));
            let line = format!(
                "{at}: a crr transaction takes {} a round trip ({crr:.1} against {open:.1} µs per flow, so the connection adds {:.1} µs): {}; {parts}",
                verdict(&r),
                crr - open,
                word(state)
            );
            (line, Some(word(state)))
        }
        Err(why) => (format!("{at}: undecided: {why}; {parts}"), None),
    }
}

/// The answer, or `None` when the points hold no crr point (then nothing was asked).
pub fn answer(points: &[&Point]) -> Option<Answer> {
    let crr: Vec<&Point> = points
        .iter()
        .copied()
        .filter(|p| p.pattern == "crr")
        .collect();
    if crr.is_empty() {
        return None;
    }
    let (mut details, mut summary) = (Vec::new(), Vec::new());
    for p in &crr {
        let (line, state) = judge(p, points);
        if let Some(state) = state {
            summary.push(format!("{}: {state}", at(p)));
        }
        details.push(line);
    }
    if summary.is_empty() {
        return Some(Answer {
            details,
            ..Answer::cannot(
                QUESTION,
                "Cannot be said: no crr point pairs with an rr twin over two rounds or more; the split of each transaction follows.".into(),
                BASIS.into(),
            )
        });
    }
    Some(Answer {
        question: QUESTION,
        finding: "Per mechanism, size and threads: a crr transaction's time over a round trip on an open connection, and the transaction's split:".into(),
        details,
        rests_on: BASIS.into(),
        verdict: Some(summary.join("; ")),
    })
}

#[cfg(test)]
#[path = "crr_tests.rs"]
mod tests;
