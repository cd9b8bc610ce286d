//! The vocabulary ipc's answers share: the questions, what a point stands for (its transport
//! and buffer), and what a paired comparison of two transports rests on.
use crate::analysis::point::Point;
use crate::analysis::{distinct, size_label, Answer};
use crate::stats::verdict::percent;

pub const FASTEST: &str = "Which transport has the fastest round trip at each size?";
pub const PEAK: &str = "Where does each transport's bandwidth peak, and does it fall beyond?";
pub const BUFFER: &str = "Does the buffer (pipe buffer, shm ring) decide where bandwidth falls?";
pub const LOSS: &str = "How many datagrams are lost at full rate?";
pub const MINIMUM: &str = "What is the minimum round trip beside the median?";

/// What every comparison of two transports rests on, with the equivalence margin stated.
pub fn paired_basis(margin: f64) -> String {
    format!(
        "per-round paired ratios of the headline figure (the transports and buffers of one \
         measure and size visited back to back in each round, order reversed every other \
         round); 95 % CI by Student's t on the per-round log-ratios; beats/slower when that \
         interval excludes 1, \"equivalent within ±{m}\" when two one-sided tests place it \
         inside [{low:.3}, {high:.3}] (90 % CI), \"undecided\" otherwise",
        m = percent(margin),
        low = 1.0 - margin,
        high = 1.0 + margin
    )
}

/// The transport (with its buffer) a point stands for.
pub fn name(p: &Point) -> String {
    let t = p.transport.clone().unwrap_or_else(|| "tcp".into());
    match p.buffer {
        Some(b) => format!("{t} ({} buffer)", size_label(b)),
        None => t,
    }
}

pub fn at_size<'a>(points: &[&'a Point], size: f64) -> Vec<&'a Point> {
    points.iter().filter(|p| p.size == size).copied().collect()
}

/// Round-trip time of a latency point from its headline (round trips per second), ns.
pub fn round_trip_ns(p: &Point) -> f64 {
    1e9 / p.headline_value()
}

pub fn cannot(question: &'static str, finding: String, margin: f64) -> Answer {
    Answer::cannot(question, finding, paired_basis(margin))
}

/// The transports with a buffer `--pipe-sizes` sets, by name.
pub const BUFFERED: [&str; 2] = ["pipe", "shm"];

/// The points of transport `t`.
pub fn of_transport<'a>(points: &[&'a Point], t: &str) -> Vec<&'a Point> {
    points
        .iter()
        .filter(|p| p.transport.as_deref() == Some(t))
        .copied()
        .collect()
}

/// Distinct buffers measured for one transport (the most of any transport).
pub fn buffers(stream: &[&Point]) -> Vec<f64> {
    let mut best: Vec<f64> = Vec::new();
    for t in BUFFERED {
        let b = distinct(&of_transport(stream, t), |p| p.buffer.unwrap_or(0.0));
        if b.len() > best.len() {
            best = b;
        }
    }
    best
}

/// Each transport (with its buffer) once, in the points' order.
pub fn series_names(points: &[&Point]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in points {
        if !names.contains(&name(p)) {
            names.push(name(p));
        }
    }
    names
}
