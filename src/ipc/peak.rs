//! Where each transport's bandwidth peaks, from the steps between adjacent sizes (one Holm
//! family per transport, `analysis::separated`): a peak is a size entered by a rise and left
//! by a fall, and where the steps do not separate the sizes the answer is "no single peak".
//! The highest estimate is never the peak by itself: tested against the rest, it claims a
//! fall among equal sizes in about a fifth of studies (the winner's curse).
use super::series::{buffers, cannot, name, series_names, PEAK};
use crate::analysis::point::Point;
use crate::analysis::separated::{self, Peak, Rounds};
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

/// One series' steps between adjacent sizes, as a detail line and its verdict.
fn peak_line(series: &str, points: &[&Point], margin: f64) -> (String, String) {
    let labels: Vec<String> = points.iter().map(|p| size_label(p.size)).collect();
    let named: Vec<(String, Rounds)> = points
        .iter()
        .zip(&labels)
        .map(|(p, l)| (l.clone(), p.visits.clone()))
        .collect();
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
    for series in series_names(stream) {
        let mut points: Vec<&Point> = stream
            .iter()
            .filter(|p| name(p) == series)
            .copied()
            .collect();
        if points.len() < 2 {
            continue;
        }
        points.sort_by(|a, b| a.size.total_cmp(&b.size));
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
