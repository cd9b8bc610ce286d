//! The ipc report's own questions, answered from its point records: the fastest transport per
//! size, the fixed and per-byte cost of a round trip, where bandwidth peaks (and, with two or
//! more `--pipe-sizes`, whether the buffer is why it falls), datagram loss and the minimum
//! round trip. Comparisons rest on per-round paired ratios (the transports at one size were
//! visited back to back in each round); every answer names the placement it was measured in.
use super::series::{at_size, buffers, name, of_transport, paired_basis, BUFFERED};
use crate::analysis::paired;
use crate::analysis::point::Point;
use crate::analysis::{capitalize, distinct, size_label, Answer, Dataset};
use crate::report::units::duration_ns;
use crate::report::write::Questions;
use crate::stats::verdict::{describe, judge, Correction, LogEstimate, Verdict};

/// ipc's questions and its report's title.
pub const IPC: Questions = Questions {
    title: "bytepath ipc report",
    answers,
    tested,
    tables,
    families: "Each question states its family: the fastest transport at a size compares every \
         pair of transports at that size (one Holm family per size; fastest only where it beats \
         every other); a peak rests on the steps between adjacent sizes of one transport (one \
         Holm family per transport); the buffer question holds the sizes of one transport as one \
         Holm family. Every visit count is exact (--visits): ipc makes no adaptive rounds.",
};

use super::series::{BUFFER, LOSS, MINIMUM};

/// The families behind the fastest and peak answers, cell by cell, for answers.json.
pub fn tested(data: &Dataset) -> Vec<crate::analysis::tested::TestedAnswer> {
    let margin = data.margin();
    let mut out = super::fastest::tested(&data.completed_with_pattern("rr"), margin);
    out.extend(super::peak::tested(
        &data.completed_with_pattern("stream"),
        margin,
    ));
    out
}

/// The fastest answer's pairs, one table per size, for report.md and report.html.
pub fn tables(data: &Dataset) -> Vec<crate::analysis::pairs_table::PairsTable> {
    super::fastest::tables(&data.completed_with_pattern("rr"), data.margin())
}

/// Every answer, in the report's order.
pub fn answers(data: &Dataset) -> Vec<Answer> {
    let rr = data.completed_with_pattern("rr");
    let stream = data.completed_with_pattern("stream");
    let place = placement(data);
    let margin = data.margin();
    let mut out = vec![
        super::fastest::fastest(&rr, margin),
        super::cost::cost(data, &rr, name),
        super::peak::peak(&stream, margin),
    ];
    if buffers(&stream).len() >= 2 {
        out.push(buffer(&stream, margin));
    }
    out.push(loss(&stream));
    out.push(minimum(&rr));
    for a in &mut out {
        a.rests_on = format!("{}; placement: {place}", a.rests_on);
    }
    out
}

/// Where the two sides ran, in the records' own words (every distinct placement).
fn placement(data: &Dataset) -> String {
    let mut places: Vec<&str> = data
        .points
        .iter()
        .map(|p| p.where_sides_run.as_str())
        .collect();
    places.sort();
    places.dedup();
    places.retain(|p| !p.is_empty());
    if places.is_empty() {
        "not recorded".into()
    } else {
        places.join("; ")
    }
}

/// One transport's buffers (`t`): at each size its largest buffer against its smallest, the
/// sizes one Holm family; the detail lines and the verdict, or `None` with one buffer.
fn buffer_of(t: &str, of: &[&Point], margin: f64) -> Option<(Vec<String>, String)> {
    let b = distinct(of, |p| p.buffer.unwrap_or(0.0));
    let (&small, &large) = (b.first()?, b.last()?);
    if small == large {
        return None;
    }
    let (mut lines, mut estimates, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
    for size in distinct(of, |p| p.size) {
        let here = at_size(of, size);
        let find = |buf: f64| here.iter().find(|p| p.buffer == Some(buf)).copied();
        let (Some(a), Some(z)) = (find(large), find(small)) else {
            continue;
        };
        match paired::ratio(a, z) {
            Ok(r) => {
                estimates.push(LogEstimate::from_interval(&r));
                sizes.push(size);
            }
            Err(why) => lines.push(format!("{t} {}: {why}", size_label(size))),
        }
    }
    let family = judge(&estimates, Correction::Holm, margin);
    let mut gains = Vec::new();
    for (size, j) in sizes.iter().zip(&family.judged) {
        if j.state == Verdict::Beats {
            gains.push(size_label(*size));
        }
        lines.push(format!(
            "{t} {}: {} buffer against {}: {} ({})",
            size_label(*size),
            size_label(large),
            size_label(small),
            describe(j, margin, "faster", "slower"),
            family.control()
        ));
    }
    let verdict = match gains.is_empty() {
        true => format!("{t}: the larger buffer is not shown faster at any size"),
        false => format!("{t}: the larger buffer is faster at {}", gains.join(", ")),
    };
    Some((lines, verdict))
}

/// With two or more buffers: at each size, the largest buffer against the smallest.
fn buffer(stream: &[&Point], margin: f64) -> Answer {
    let (mut details, mut verdicts) = (Vec::new(), Vec::new());
    for t in BUFFERED {
        if let Some((lines, verdict)) = buffer_of(t, &of_transport(stream, t), margin) {
            details.extend(lines);
            verdicts.push(verdict);
        }
    }
    let finding = format!(
        "{} (the seeds' untested hypothesis: pipe bandwidth falls past 16 KiB because of the 64 KiB pipe buffer).",
        capitalize(&verdicts.join("; "))
    );
    Answer {
        question: BUFFER,
        finding,
        details,
        rests_on: format!(
            "the same transport and size with each buffer (--pipe-sizes); {}; the sizes of one transport one Holm family",
            paired_basis(margin)
        ),
        verdict: Some(verdicts.join(", ")),
    }
}

fn loss(stream: &[&Point]) -> Answer {
    let datagram: Vec<&Point> = stream
        .iter()
        .filter(|p| p.datagrams_lost_percent.is_some())
        .copied()
        .collect();
    if datagram.is_empty() {
        return Answer::cannot(
            LOSS,
            "Cannot be said: no datagram transport's bandwidth was measured (udp, unix-dgram with --measure bandwidth).".into(),
            "the datagram counts of the bandwidth points".into(),
        );
    }
    let details: Vec<String> = datagram
        .iter()
        .map(|p| {
            format!(
                "{} {}: {:.2} % lost",
                name(p),
                size_label(p.size),
                p.datagrams_lost_percent.unwrap_or(0.0)
            )
        })
        .collect();
    let worst = datagram
        .iter()
        .max_by(|a, b| {
            let lost = |p: &Point| p.datagrams_lost_percent.unwrap_or(0.0);
            lost(a).total_cmp(&lost(b))
        })
        .expect("points");
    Answer {
        question: LOSS,
        finding: format!(
            "The most lost was {:.2} % ({} at {}), sending as fast as the sender could.",
            worst.datagrams_lost_percent.unwrap_or(0.0),
            name(worst),
            size_label(worst.size)
        ),
        details,
        rests_on: "numbered datagrams counted at both ends of each bandwidth point, summed over its visits (sent, received, lost both ways)".into(),
        verdict: None,
    }
}

fn minimum(rr: &[&Point]) -> Answer {
    let details: Vec<String> = rr
        .iter()
        .filter_map(|p| {
            let l = p.latency.as_ref()?;
            Some(format!(
                "{} {}: min {} beside p50 {} (p99 {})",
                name(p),
                size_label(p.size),
                l.min_ns.map_or("not recorded".into(), duration_ns),
                duration_ns(l.p50_ns),
                duration_ns(l.p99_ns)
            ))
        })
        .collect();
    if details.is_empty() {
        return Answer::cannot(
            MINIMUM,
            "Cannot be said: no round trips were measured (--measure latency).".into(),
            "each latency point's round-trip histogram".into(),
        );
    }
    Answer {
        question: MINIMUM,
        finding: "The minimum round trip (the seeds' statistic) is the floor a transport can reach; the median is what a message usually pays. Both per transport and size:".into(),
        details,
        rests_on: "the client's round-trip histogram of each visit: the minimum over all visits, the median of the visits' p50 and p99".into(),
        verdict: None,
    }
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
