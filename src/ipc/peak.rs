//! Where each transport's bandwidth peaks, from the steps between adjacent sizes (one Holm
//! family per transport, `analysis::separated`): a peak is a size entered by a rise and left
//! by a fall, and where the steps do not separate the sizes the answer is "no single peak".
//! The highest estimate is never the peak by itself: tested against the rest, it claims a
//! fall among equal sizes in about a fifth of studies (the winner's curse).
use super::series::{buffers, cannot, name, series_names, PEAK};
use crate::analysis::point::Point;
use crate::analysis::separated::{self, Peak, Rounds};
use crate::analysis::tested::{Cell, TestedAnswer};
use crate::analysis::{capitalize, size_label, Answer};
use crate::stats::verdict::describe;

/// What the adjacent steps say about one series' peak, in words.
fn peak_words(p: &Peak, labels: &[String]) -> String {
    let last = labels.len() - 1;
    match p {
        Peak::Single { at, falls: true } => format!("peaks at {} and falls beyond", labels[*at]),
        Peak::Single { at, .. } if *at == last => {
            format!("highest at the largest size measured ({})", labels[*at])
        }
        Peak::Single { at, .. } => format!("peaks at {}", labels[*at]),
        Peak::Plateau { from, to, falls } => format!(
            "no single peak: {} to {} are not separated{}",
            labels[*from],
            labels[*to],
            if *falls { ", and it falls beyond" } else { "" }
        ),
        Peak::Several(highs) => format!(
            "no single peak: highs at {}",
            highs
                .iter()
                .map(|h| labels[*h].clone())
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        Peak::NotSeparated => "no single peak: no step between adjacent sizes is shown".into(),
    }
}

/// Why a transport's steps are one Holm family.
const WHY: &str = "Holm: a peak is read from every step of the transport at once (entered by a \
     rise, left by a fall), so the steps' claims must hold together";

/// A series' sizes, labelled, with their rounds.
fn named(points: &[&Point]) -> Vec<(String, Rounds)> {
    points
        .iter()
        .map(|p| (size_label(p.size), p.visits.clone()))
        .collect()
}

/// Each series with two sizes or more: its name and its points by size.
fn series<'a>(stream: &[&'a Point]) -> Vec<(String, Vec<&'a Point>)> {
    series_names(stream)
        .into_iter()
        .map(|series| {
            let mut points: Vec<&Point> = stream
                .iter()
                .filter(|p| name(p) == series)
                .copied()
                .collect();
            points.sort_by(|a, b| a.size.total_cmp(&b.size));
            (series, points)
        })
        .filter(|(_, points)| points.len() >= 2)
        .collect()
}

/// Each series' family of steps, cell by cell, for answers.json.
pub fn tested(stream: &[&Point], margin: f64) -> Vec<TestedAnswer> {
    series(stream)
        .into_iter()
        .map(|(series, points)| {
            let named = named(&points);
            let s = separated::steps(&named, margin);
            let cells = s
                .judged
                .iter()
                .enumerate()
                .filter_map(|(i, k)| {
                    let step = format!("{} → {}", named[i].0, named[i + 1].0);
                    k.map(|k| Cell::new(step, &s.family.judged[k]))
                })
                .collect();
            TestedAnswer::new(PEAK, &s.family, WHY, cells).named(series)
        })
        .collect()
}

/// One series' steps between adjacent sizes, as a detail line and its verdict.
fn peak_line(series: &str, points: &[&Point], margin: f64) -> (String, String) {
    let named = named(points);
    let labels: Vec<String> = named.iter().map(|(l, _)| l.clone()).collect();
    let s = separated::steps(&named, margin);
    let mut line = format!("{series}:");
    for (i, k) in s.judged.iter().enumerate() {
        let step = format!(" {} → {}", labels[i], labels[i + 1]);
        line += &match k {
            Some(k) => format!(
                "{step} {};",
                describe(&s.family.judged[*k], margin, "rises", "falls")
            ),
            None => format!("{step} not compared;"),
        };
    }
    let words = peak_words(&s.peak, &labels);
    line += &format!(" {words} ({})", s.family.control());
    if let Some(b) = points[0].buffer {
        line += &format!(" (buffer {})", size_label(b));
    }
    for why in &s.unpaired {
        line += &format!("; {why}");
    }
    (line, format!("{series}: {words}"))
}

pub fn peak(stream: &[&Point], margin: f64) -> Answer {
    let (mut details, mut verdicts) = (Vec::new(), Vec::new());
    for (series, points) in series(stream) {
        let (line, verdict) = peak_line(&series, &points, margin);
        details.push(line);
        verdicts.push(verdict);
    }
    if details.is_empty() {
        return cannot(
            PEAK,
            "Cannot be said: bandwidth needs one transport at two sizes or more (--measure bandwidth with several --sizes).".into(),
            margin,
        );
    }
    let mut rests_on = format!(
        "each transport's throughput received whole at each size; each step between adjacent sizes (the larger over the smaller) by per-round paired ratios (the sizes of one transport are visited in the same round, not back to back), the steps of a transport one family: {}; a peak is a size entered by a rise and left by a fall (or the first or last size), never the highest estimate tested against the rest (which claims a fall among equal sizes in about a fifth of studies); where the steps do not separate the sizes, \"no single peak\"",
        crate::stats::visits::PAIRED_METHOD
    );
    if buffers(stream).len() < 2 {
        rests_on += "; one buffer size measured, so whether the buffer is why bandwidth falls is not asked (measure with --pipe-sizes 64K,1M)";
    }
    Answer {
        question: PEAK,
        finding: capitalize(&verdicts.join("; ")) + ".",
        details,
        rests_on,
        verdict: Some(verdicts.join(", ")),
    }
}
