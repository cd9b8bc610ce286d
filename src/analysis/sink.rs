//! The seeds' crossover where zero copy is not copied: on a sink (`sweep --sink`) no local
//! receiver takes the datagrams, so the kernel lends a zero-copy send's pages to the device
//! instead of copying them, and "from which size does zero copy beat copy?" gets a measured
//! answer on the sending side. It is judged on two figures, each per round and paired: the
//! sender's Gbit/s and its CPU-ns per byte (copy's over the challenger's, so above 1 is the
//! challenger cheaper). Every cell of both figures of one pair is one test of a Holm family,
//! as every crossover is. Where the sweep also visited its points over loopback UDP
//! (`--beside-loopback`), the same question is answered there beside it: where a local
//! receiver makes the kernel copy every zero-copy byte.
use super::crossover::{
    self, describe, verdict, Figure, PerThreads, HEADLINE, STEP_DOWN, WHY_HOLM,
};
use super::crossover_rule::Settings;
use super::paired::{self, PAIRED_BASIS};
use super::point::Point;
use super::tested::{Cell, TestedAnswer};
use super::{capitalize, size_label, size_range, threads_label, Answer};
use crate::mechanism::MechanismKind;
use crate::stats::visits::RatioInterval;

pub const QUESTION: &str = "On the sending side, with zero copy that is not copied (a sink): from which message size does each zero-copy mechanism beat copy?";
pub const LOOPBACK_QUESTION: &str = "Beside it, over loopback UDP, where a local receiver makes the kernel copy every zero-copy byte: from which message size does each zero-copy mechanism beat copy?";

/// The sending side's CPU-ns per byte, copy's over the challenger's per round: above 1 where
/// the challenger spends less CPU per byte.
const SENDER_CPU: Figure = Figure {
    name: "sender CPU-ns per byte",
    ratio: cpu_ratio,
    series: cpu_series,
};

fn cpu_series(challenger: &Point, baseline: &Point) -> Vec<f64> {
    paired::log_ratios_of(&baseline.sender_cpu_visits, &challenger.sender_cpu_visits)
}

fn cpu_ratio(challenger: &Point, baseline: &Point) -> Result<RatioInterval, String> {
    paired::ratio_of(
        &baseline.sender_cpu_visits,
        &challenger.sender_cpu_visits,
        &format!(
            "{} against {}: sender CPU-ns per byte",
            challenger.key, baseline.key
        ),
    )
}

const FIGURES: [Figure; 2] = [HEADLINE, SENDER_CPU];

/// Where the points stand: on the sink, or over loopback UDP beside it.
#[derive(Clone, Copy)]
struct Place {
    question: &'static str,
    on_sink: bool,
}

const PLACES: [Place; 2] = [
    Place {
        question: QUESTION,
        on_sink: true,
    },
    Place {
        question: LOOPBACK_QUESTION,
        on_sink: false,
    },
];

/// The stream points of `place`: a sink's, or the loopback UDP ones of a sweep that has a
/// sink's; none where the sweep has no sink points.
fn points_at<'a>(stream: &[&'a Point], place: Place) -> Vec<&'a Point> {
    if !stream.iter().any(|p| p.sink) {
        return Vec::new();
    }
    stream
        .iter()
        .filter(|p| p.sink == place.on_sink && p.transport.as_deref() == Some("udp"))
        .copied()
        .collect()
}

/// The zero-copy mechanisms the points hold (each against copy), as their descriptors say.
fn challengers(points: &[&Point]) -> Vec<&'static str> {
    MechanismKind::ALL
        .iter()
        .filter(|m| m.zero_copy.is_some() && points.iter().any(|p| p.mechanism == m.name()))
        .map(|m| m.name())
        .collect()
}

/// The series name of `mechanism` among `points` (they share a transport and a place).
fn series(points: &[&Point], mechanism: &str) -> Option<String> {
    points
        .iter()
        .find(|p| p.mechanism == mechanism)
        .map(|p| p.series())
}

/// One challenger judged against copy on both figures: its series names and the per-figure
/// classification, with the family.
struct Judged {
    challenger: String,
    baseline: String,
    /// The mechanisms' own names, as the sentences say them.
    names: (&'static str, &'static str),
    per_figure: Vec<Vec<PerThreads>>,
    family: crate::stats::verdict::Family,
}

fn judge(points: &[&Point], settings: Settings) -> Vec<Judged> {
    let copy = MechanismKind::COPY.name();
    let Some(baseline) = series(points, copy) else {
        return Vec::new();
    };
    challengers(points)
        .into_iter()
        .filter_map(|m| {
            let challenger = series(points, m)?;
            let (per_figure, family) =
                crossover::judge_figures(points, (&challenger, &baseline), settings, &FIGURES);
            Some(Judged {
                challenger,
                baseline: baseline.clone(),
                names: (m, copy),
                per_figure,
                family,
            })
        })
        .collect()
}

/// The sink's answer, and the loopback one beside it where the sweep has it.
pub fn answers(stream: &[&Point], settings: Settings) -> Vec<Answer> {
    PLACES
        .iter()
        .filter_map(|&place| {
            let points = points_at(stream, place);
            (!points.is_empty()).then(|| answer(&points, place, settings))
        })
        .collect()
}

fn answer(points: &[&Point], place: Place, settings: Settings) -> Answer {
    let judged = judge(points, settings);
    if judged.is_empty() {
        return Answer::cannot(
            place.question,
            "Cannot be said: the results hold no stream points of copy and of a zero-copy mechanism at the same size and thread count here.".into(),
            rests_on(points, &judged, settings),
        );
    }
    let mut details = Vec::new();
    let mut findings = Vec::new();
    let mut verdicts = Vec::new();
    for j in &judged {
        let mut said = Vec::new();
        for (figure, per_threads) in FIGURES.iter().zip(&j.per_figure) {
            said.push(format!(
                "{}: {}",
                figure.name,
                per_threads
                    .iter()
                    .map(verdict)
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
            let mut lines = per_threads
                .iter()
                .map(|c| format!("on {}, {}", figure.name, describe(c, j.names.0, j.names.1)));
            findings.extend(lines.next());
            details.extend(lines);
        }
        verdicts.push(format!("{}: {}", j.names.0, said.join(", ")));
    }
    details.push(copied_line(points, place));
    Answer {
        question: place.question,
        finding: findings
            .iter()
            .map(|f| capitalize(f) + ".")
            .collect::<Vec<_>>()
            .join(" "),
        details,
        rests_on: rests_on(points, &judged, settings),
        verdict: Some(verdicts.join("; ")),
    }
}

/// What the zero-copy completions of these points say: copied or not, and why it matters.
fn copied_line(points: &[&Point], place: Place) -> String {
    let (completions, copied) = points
        .iter()
        .filter_map(|p| p.zerocopy)
        .fold((0.0, 0.0), |(n, c), z| (n + z.completions, c + z.copied));
    if completions == 0.0 {
        return "no zero-copy completions were recorded here".into();
    }
    let share = 100.0 * copied / completions;
    let why = match (place.on_sink, copied > 0.0) {
        (true, false) => "none copied: every zero-copy byte left as lent pages",
        (true, true) => "the kernel copied some on the sink anyway (a datagram above the MTU is fragmented, and a fragmented zero-copy send is copied; or the device cannot take lent pages): those cells measure copying, not zero copy",
        (false, _) => "a local receiver makes the kernel copy what it delivers, so these cells measure the zero-copy interface, not zero copy",
    };
    format!("zero-copy completions: {completions:.0}, copied {share:.1} %: {why}")
}

fn rests_on(points: &[&Point], judged: &[Judged], settings: Settings) -> String {
    let families: Vec<String> = judged
        .iter()
        .map(|j| {
            format!(
                "{} against {}: {}",
                j.challenger,
                j.baseline,
                j.family.control()
            )
        })
        .collect();
    let mut text = format!(
        "the sending side's Gbit/s and CPU-ns per byte (copy's over the challenger's: above 1 is cheaper) of {} stream points, {}, {}: {PAIRED_BASIS}; every cell of both figures of one pair is one Holm family ({}); {WHY_HOLM}; {STEP_DOWN}",
        points.len(),
        size_range(points),
        if points.iter().any(|p| p.sink) { "on a sink" } else { "over loopback UDP" },
        if families.is_empty() { "none judged".into() } else { families.join("; ") }
    );
    if let Some(looks) = settings.looks_text() {
        text += &format!("; {looks}");
    }
    text
}

/// The families behind the answers, cell by cell, for answers.json.
pub fn tested(stream: &[&Point], settings: Settings) -> Vec<TestedAnswer> {
    PLACES
        .iter()
        .flat_map(|&place| {
            let points = points_at(stream, place);
            judge(&points, settings).into_iter().map(move |j| {
                let cells = FIGURES
                    .iter()
                    .zip(&j.per_figure)
                    .flat_map(|(figure, per_threads)| {
                        per_threads.iter().flat_map(move |c| {
                            c.cells.iter().filter_map(move |(size, judged)| {
                                let label = format!(
                                    "{} at {}, {}",
                                    size_label(*size),
                                    threads_label(c.threads),
                                    figure.name
                                );
                                judged.as_ref().map(|judged| Cell::new(label, judged))
                            })
                        })
                    })
                    .collect();
                TestedAnswer::new(place.question, &j.family, WHY_HOLM, cells)
                    .named(format!("{} against {}", j.challenger, j.baseline))
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "sink_tests.rs"]
mod tests;
