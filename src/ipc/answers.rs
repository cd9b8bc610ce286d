//! The ipc report's own questions, answered from its point records: the fastest transport per
//! size, the fixed and per-byte cost of a round trip, where bandwidth peaks (and, with two or
//! more `--pipe-sizes`, whether the buffer is why it falls), datagram loss and the minimum
//! round trip. Comparisons rest on per-round paired ratios (the transports at one size were
//! visited back to back in each round); every answer names the placement it was measured in.
use crate::analysis::paired::{self, verdict};
use crate::analysis::point::Point;
use crate::analysis::{capitalize, distinct, size_label, Answer, Dataset};
use crate::error::Error;
use crate::report::units::duration_ns;
use crate::report::write::{reports, Questions};
use crate::stats::visits::Direction;
use std::path::{Path, PathBuf};

/// ipc's questions and its report's title.
pub const IPC: Questions = Questions {
    title: "bytepath ipc report",
    answers,
    tested: crate::analysis::tested::none,
};

pub const FASTEST: &str = "Which transport has the fastest round trip at each size?";
pub use super::cost::COST;
pub const PEAK: &str = "Where does each transport's bandwidth peak, and does it fall beyond?";
pub const BUFFER: &str = "Does the buffer (pipe buffer, shm ring) decide where bandwidth falls?";

/// What every comparison of two transports rests on.
const PAIRED_BASIS: &str = "per-round paired ratios of the headline figure (the transports and \
     buffers of one measure and size visited back to back in each round, order reversed every \
     other round); 95 % CI by Student's t on the per-round log-ratios; each \
     comparison alone (no family correction): beats/slower when that interval excludes 1, \
     \"equivalent within ±5 %\" when two one-sided tests place it inside [0.95, 1.05] (90 % CI), \
     \"undecided\" otherwise";
pub const LOSS: &str = "How many datagrams are lost at full rate?";
pub const MINIMUM: &str = "What is the minimum round trip beside the median?";

/// Writes report.html, report.md and answers.json for an ipc folder.
pub fn write_report(dir: &Path) -> Result<PathBuf, Error> {
    reports(dir, None, &IPC)
}

/// Every answer, in the report's order.
pub fn answers(data: &Dataset) -> Vec<Answer> {
    let rr = data.completed_with_pattern("rr");
    let stream = data.completed_with_pattern("stream");
    let place = placement(data);
    let mut out = vec![fastest(&rr), super::cost::cost(data, &rr, name)];
    out.push(peak(&stream));
    if buffers(&stream).len() >= 2 {
        out.push(buffer(&stream));
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

/// The transport (with its buffer) a point stands for.
fn name(p: &Point) -> String {
    let t = p.transport.clone().unwrap_or_else(|| "tcp".into());
    match p.buffer {
        Some(b) => format!("{t} ({} buffer)", size_label(b)),
        None => t,
    }
}

fn at_size<'a>(points: &[&'a Point], size: f64) -> Vec<&'a Point> {
    points.iter().filter(|p| p.size == size).copied().collect()
}

/// Round-trip time of a latency point from its headline (round trips per second), ns.
fn round_trip_ns(p: &Point) -> f64 {
    1e9 / p.headline_value()
}

fn cannot(question: &'static str, finding: String) -> Answer {
    Answer::cannot(question, finding, PAIRED_BASIS.into())
}

/// The point with the highest headline figure (round trips/s or Gbit/s) of a non-empty set.
fn highest<'a>(points: &[&'a Point]) -> &'a Point {
    points
        .iter()
        .copied()
        .max_by(|a, b| a.headline_value().total_cmp(&b.headline_value()))
        .expect("a point")
}

fn fastest(rr: &[&Point]) -> Answer {
    let mut details = Vec::new();
    let mut winners: Vec<String> = Vec::new();
    let mut bests: Vec<String> = Vec::new();
    for size in distinct(rr, |p| p.size) {
        let here = at_size(rr, size);
        if here.len() < 2 {
            continue;
        }
        let best = highest(&here);
        let mut line = format!(
            "{}: {} fastest, {} per round trip",
            size_label(size),
            name(best),
            duration_ns(round_trip_ns(best))
        );
        let mut tied = Vec::new();
        for other in here.iter().filter(|p| p.key != best.key) {
            // Rates: best/other is how many of best's round trips fit in one of other's.
            line += &match paired::ratio(best, other) {
                Ok(r) if r.direction() == Direction::Indistinguishable => {
                    tied.push(name(other));
                    format!("; {} {}", name(other), verdict(&r))
                }
                Ok(r) => format!("; {} {}", name(other), verdict(&r)),
                Err(why) => format!("; {}: {why}", name(other)),
            };
        }
        bests.push(name(best));
        winners.push(if tied.is_empty() {
            name(best)
        } else {
            format!("{} (tied with {})", name(best), tied.join(", "))
        });
        details.push(line);
    }
    if details.is_empty() {
        return cannot(
            FASTEST,
            "Cannot be said: no size has round trips of two transports (measure latency with at least two --transports).".into(),
        );
    }
    bests.dedup();
    let finding = if bests.len() == 1 {
        format!(
            "{} has the fastest round trip at every size measured; each other transport's round trip is given as a multiple of it, or said to be indistinguishable.",
            capitalize(&bests[0])
        )
    } else {
        format!(
            "The fastest round trip changes with size: {}; each other transport's round trip is given as a multiple of the fastest.",
            winners.join(", ")
        )
    };
    Answer {
        question: FASTEST,
        finding,
        details,
        rests_on: format!(
            "{PAIRED_BASIS}; a multiple is the fastest transport's round trips per second over the other's (its round trip as a multiple of the fastest)"
        ),
        verdict: Some(format!("fastest: {}", winners.join(", "))),
    }
}

/// Distinct buffers measured for one transport (the most of any transport).
fn buffers(stream: &[&Point]) -> Vec<f64> {
    let mut best: Vec<f64> = Vec::new();
    for t in ["pipe", "shm"] {
        let of: Vec<&Point> = stream
            .iter()
            .filter(|p| p.transport.as_deref() == Some(t))
            .copied()
            .collect();
        let b = distinct(&of, |p| p.buffer.unwrap_or(0.0));
        if b.len() > best.len() {
            best = b;
        }
    }
    best
}

fn series_names(points: &[&Point]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in points {
        if !names.contains(&name(p)) {
            names.push(name(p));
        }
    }
    names
}

fn peak(stream: &[&Point]) -> Answer {
    let mut details = Vec::new();
    let mut verdicts = Vec::new();
    for series in series_names(stream) {
        let points: Vec<&Point> = stream
            .iter()
            .filter(|p| name(p) == series)
            .copied()
            .collect();
        if points.len() < 2 {
            continue;
        }
        let top = highest(&points);
        let beyond: Vec<&&Point> = points.iter().filter(|p| p.size > top.size).collect();
        let mut line = format!(
            "{series}: peaks at {} with {:.2} Gbit/s",
            size_label(top.size),
            top.headline_value()
        );
        let falls = beyond
            .iter()
            .any(|p| paired::ratio(p, top).is_ok_and(|r| r.direction() == Direction::Lower));
        for p in &beyond {
            line += &match paired::ratio(p, top) {
                Ok(r) => format!("; {} {}", size_label(p.size), verdict(&r)),
                Err(why) => format!("; {}: {why}", size_label(p.size)),
            };
        }
        if let Some(b) = top.buffer {
            line += &format!(" (buffer {})", size_label(b));
        }
        let v = match (beyond.is_empty(), falls) {
            (true, _) => "peaks at the largest size measured",
            (false, true) => "falls beyond its peak",
            (false, false) => "does not fall measurably beyond its peak",
        };
        verdicts.push(format!("{series}: {v}"));
        details.push(line);
    }
    if details.is_empty() {
        return cannot(
            PEAK,
            "Cannot be said: bandwidth needs one transport at two sizes or more (--measure bandwidth with several --sizes).".into(),
        );
    }
    let mut rests_on = format!(
        "each transport's throughput received whole at each size; a larger size against the peak by per-round paired ratios (the sizes of one transport are visited in the same round, not back to back); {}",
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

/// With two or more buffers: at each size, the largest buffer against the smallest.
fn buffer(stream: &[&Point]) -> Answer {
    let mut details = Vec::new();
    let mut gains = Vec::new();
    let mut verdicts = Vec::new();
    for t in ["pipe", "shm"] {
        let of: Vec<&Point> = stream
            .iter()
            .filter(|p| p.transport.as_deref() == Some(t))
            .copied()
            .collect();
        let b = distinct(&of, |p| p.buffer.unwrap_or(0.0));
        let (Some(&small), Some(&large)) = (b.first(), b.last()) else {
            continue;
        };
        if small == large {
            continue;
        }
        let before = gains.len();
        for size in distinct(&of, |p| p.size) {
            let here = at_size(&of, size);
            let find = |buf: f64| here.iter().find(|p| p.buffer == Some(buf)).copied();
            let (Some(a), Some(z)) = (find(large), find(small)) else {
                continue;
            };
            let text = match paired::ratio(a, z) {
                Ok(r) => {
                    if r.direction() == Direction::Higher {
                        gains.push(size_label(size));
                    }
                    verdict(&r)
                }
                Err(why) => why,
            };
            details.push(format!(
                "{t} {}: {} buffer against {}: {text}",
                size_label(size),
                size_label(large),
                size_label(small)
            ));
        }
        verdicts.push(if gains.len() == before {
            format!("{t}: the larger buffer is not measurably faster at any size")
        } else {
            format!(
                "{t}: the larger buffer is faster at {}",
                gains[before..].join(", ")
            )
        });
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
            "the same transport and size with each buffer (--pipe-sizes); {PAIRED_BASIS}"
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
