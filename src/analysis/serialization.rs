//! What serialization alone costs: copy (the 8 fields serialized into one buffer, then one
//! send) against send (the same bytes already in one buffer), at the same size and thread
//! count. The cost is the sending side's CPU per byte (getrusage of its threads). Each round
//! visited the two back to back, so each round gives one ratio of copy's sender CPU-ns per byte
//! over send's in which the machine's regime of that moment cancels; each size's verdict rests
//! on those per-round ratios, and the sizes are one family (Holm for "costs more" or "less",
//! Benjamini–Hochberg for "equivalent"). Throughput is compared the same way, as a second
//! family, for the reader who wants the price in Gbit/s.
use super::paired::{self, PAIRED_BASIS};
use super::point::Point;
use super::tested::{Cell, TestedAnswer};
use super::{distinct, find, percent_change, size_label, size_range, threads_label, Answer};
use crate::mechanism::MechanismKind;
use crate::stats::quantile;
use crate::stats::verdict::{judge_with, Correction, Family, Judged, LogEstimate, Verdict};

pub const QUESTION: &str = "What does serialization alone cost (copy against the send reference)?";
const WHY: &str = "Holm for 'costs more' or 'less' (each such size is a claim a reader acts \
     on); Benjamini–Hochberg for 'equivalent' (a map of the sizes where the cost is within the \
     margin)";

/// One size's copy and send at the chosen thread count.
struct SizePair<'a> {
    size: f64,
    copy: &'a Point,
    send: &'a Point,
}

/// The copy and send pairs of the first thread count that has any, by size.
fn size_pairs<'a>(points: &[&'a Point]) -> Option<(f64, Vec<SizePair<'a>>)> {
    for threads in distinct(points, |p| p.threads) {
        let pairs: Vec<SizePair> = distinct(points, |p| p.size)
            .into_iter()
            .filter_map(|size| {
                let copy = find(points, MechanismKind::COPY.name(), size, threads)?;
                let send = find(points, MechanismKind::SEND.name(), size, threads)?;
                Some(SizePair { size, copy, send })
            })
            .collect();
        if !pairs.is_empty() {
            return Some((threads, pairs));
        }
    }
    None
}

/// Each size's paired estimate of copy over send for `figure` (per-visit (round, value)), or
/// why it has none, judged as one family.
fn family(
    pairs: &[SizePair],
    figure: fn(&Point) -> &[(usize, f64)],
    margin: f64,
) -> (Vec<Result<Judged, String>>, Family) {
    let estimates: Vec<Result<LogEstimate, String>> = pairs
        .iter()
        .map(|p| {
            let what = format!("copy and send at {}", size_label(p.size));
            paired::ratio_of(figure(p.copy), figure(p.send), &what)
                .map(|r| LogEstimate::from_interval(&r))
        })
        .collect();
    let tested: Vec<LogEstimate> = estimates.iter().filter_map(|e| e.clone().ok()).collect();
    let family = judge_with(
        &tested,
        Correction::Holm,
        Correction::BenjaminiHochberg,
        margin,
    );
    let mut judged = family.judged.iter();
    let cells = estimates
        .into_iter()
        .map(|e| e.map(|_| *judged.next().expect("one per estimate")))
        .collect();
    (cells, family)
}

fn cpu_visits(p: &Point) -> &[(usize, f64)] {
    &p.sender_cpu_visits
}

fn headline_visits(p: &Point) -> &[(usize, f64)] {
    &p.visits
}

/// "more", "less", "within ±5 %" or "undecided": copy's sender CPU against send's.
fn cpu_word(j: &Judged, margin: f64) -> String {
    match j.state {
        Verdict::Beats => "more".into(),
        Verdict::Slower => "less".into(),
        Verdict::Equivalent => format!("within ±{}", crate::stats::verdict::percent(margin)),
        Verdict::Undecided => "undecided".into(),
    }
}

/// "more at 4 KiB, 64 KiB; undecided at 256 B", in the order more, less, within, undecided.
fn by_state(
    pairs: &[SizePair],
    cells: &[Result<Judged, String>],
    word: impl Fn(&Judged) -> String,
) -> String {
    let words: Vec<Option<String>> = cells.iter().map(|c| c.as_ref().ok().map(&word)).collect();
    let mut order: Vec<String> = words.iter().flatten().cloned().collect();
    let rank = |w: &String| match w.as_str() {
        "more" | "higher" => 0,
        "less" | "lower" => 1,
        "undecided" => 3,
        _ => 2, // within the margin
    };
    order.sort_by_key(rank);
    order.dedup();
    order
        .iter()
        .map(|w| {
            let at: Vec<String> = pairs
                .iter()
                .zip(&words)
                .filter(|(_, x)| x.as_ref() == Some(w))
                .map(|(p, _)| size_label(p.size))
                .collect();
            format!("{w} at {}", at.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One size's line: both CPU figures, the paired CPU ratio, the paired throughput.
fn detail(
    p: &SizePair,
    cpu: &Result<Judged, String>,
    throughput: &Result<Judged, String>,
) -> String {
    let figures = match (p.copy.sender_cpu_ns_per_byte, p.send.sender_cpu_ns_per_byte) {
        (Some(c), Some(s)) => format!("sender {c:.3} vs {s:.3} CPU-ns/byte ({:+.3})", c - s),
        _ => "sender CPU-ns/byte not measured".into(),
    };
    let paired = |j: &Result<Judged, String>, what: &str| match j {
        Ok(j) => format!(
            "{what} {} ({}; paired {})",
            percent_change(j.ratio),
            state_name(j.state, what),
            crate::stats::interval::ci(0.95, j.pairs, || (
                percent_change(j.low),
                percent_change(j.high)
            ))
        ),
        Err(why) => format!("{what}: not compared ({why})"),
    };
    format!(
        "{}: {figures}; {}; {}",
        size_label(p.size),
        paired(cpu, "CPU per byte"),
        paired(throughput, "throughput")
    )
}

fn state_name(state: Verdict, what: &str) -> &'static str {
    match (state, what.starts_with("CPU")) {
        (Verdict::Beats, true) => "more",
        (Verdict::Slower, true) => "less",
        (Verdict::Beats, false) => "higher",
        (Verdict::Slower, false) => "lower",
        (Verdict::Equivalent, _) => "equivalent",
        (Verdict::Undecided, _) => "undecided",
    }
}

/// The median extra CPU-ns per byte copy costs over the sizes where it costs more.
fn median_extra(pairs: &[SizePair], cpu: &[Result<Judged, String>]) -> Option<f64> {
    let mut extra: Vec<f64> = pairs
        .iter()
        .zip(cpu)
        .filter(|(_, j)| j.as_ref().is_ok_and(|j| j.state == Verdict::Beats))
        .filter_map(|(p, _)| Some(p.copy.sender_cpu_ns_per_byte? - p.send.sender_cpu_ns_per_byte?))
        .collect();
    extra.sort_by(f64::total_cmp);
    (!extra.is_empty()).then(|| quantile(&extra, 0.5))
}

/// The answer and, where any size was tested, its family for answers.json.
fn judged(points: &[&Point], margin: f64) -> (Answer, Option<TestedAnswer>) {
    let rests_on = rests_on(points);
    let Some((threads, pairs)) = size_pairs(points) else {
        let finding = "Cannot be said: the results hold no copy and send stream points at the \
                       same size and thread count (add send to the sweep's mechanisms).";
        return (cannot(finding, rests_on), None);
    };
    let (cpu, family) = family(&pairs, cpu_visits, margin);
    let (throughput, throughput_family) = family_of_throughput(&pairs, margin);
    let details: Vec<String> = pairs
        .iter()
        .zip(cpu.iter().zip(&throughput))
        .map(|(p, (c, t))| detail(p, c, t))
        .collect();
    if family.tests == 0 {
        let finding = format!(
            "Cannot be said at {}: no size has per-visit sender CPU for both copy and send \
             (records from before bytepath kept it; measure again).",
            threads_label(threads)
        );
        let mut answer = cannot(&finding, rests_on);
        answer.details = details;
        return (answer, None);
    }
    let states = by_state(&pairs, &cpu, |j| cpu_word(j, margin));
    let extra = median_extra(&pairs, &cpu)
        .map(|e| format!(" Where it costs more, the median extra is {e:+.3} CPU-ns per byte."))
        .unwrap_or_default();
    let finding = format!(
        "At {}, serializing the 8 fields into one buffer costs the sender, in CPU per byte \
         against send: {states}.{extra} Throughput of copy against send: {}. CPU: {}; \
         throughput: {}.",
        threads_label(threads),
        by_state(&pairs, &throughput, |j| state_name(j.state, "throughput")
            .into()),
        family.control(),
        throughput_family.control()
    );
    let cells = cells(&pairs, &cpu, threads);
    let answer = Answer {
        question: QUESTION,
        verdict: Some(format!("sender CPU per byte: {states}")),
        finding,
        details,
        rests_on,
    };
    (
        answer,
        Some(TestedAnswer::new(QUESTION, &family, WHY, cells)),
    )
}

fn rests_on(points: &[&Point]) -> String {
    let (copy, send) = (MechanismKind::COPY.name(), MechanismKind::SEND.name());
    let used: Vec<&Point> = points
        .iter()
        .filter(|p| p.series() == copy || p.series() == send)
        .copied()
        .collect();
    format!(
        "the sending side's CPU-ns per payload byte (getrusage of its threads) in each visit of \
         the copy and send stream points at the same size and thread count ({}), paired by \
         round (the two visited back to back); their throughput from {PAIRED_BASIS}",
        size_range(&used)
    )
}

/// The tested sizes as answers.json cells.
fn cells(pairs: &[SizePair], cpu: &[Result<Judged, String>], threads: f64) -> Vec<Cell> {
    pairs
        .iter()
        .zip(cpu)
        .filter_map(|(p, j)| {
            let label = format!("{} at {}", size_label(p.size), threads_label(threads));
            j.as_ref().ok().map(|j| Cell::new(label, j))
        })
        .collect()
}

fn family_of_throughput(pairs: &[SizePair], margin: f64) -> (Vec<Result<Judged, String>>, Family) {
    family(pairs, headline_visits, margin)
}

fn cannot(finding: &str, rests_on: String) -> Answer {
    Answer {
        question: QUESTION,
        finding: finding.into(),
        details: Vec::new(),
        rests_on,
        verdict: Some("cannot be said".into()),
    }
}

/// What serializing 8 fields into one buffer costs: copy against the send reference.
pub fn answer(points: &[&Point], margin: f64) -> Answer {
    judged(points, margin).0
}

/// The sizes' family behind `answer`, cell by cell, for answers.json.
pub fn tested(points: &[&Point], margin: f64) -> Option<TestedAnswer> {
    judged(points, margin).1
}

#[cfg(test)]
#[path = "serialization_tests.rs"]
mod tests;
