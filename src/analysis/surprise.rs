//! The most surprising point: the largest departure of a point's headline figure from the
//! line through its two neighbours in size (log-log, as the plots draw it), beyond the
//! departure the other mechanisms show at the same place (throughput curves all bend as they
//! saturate; a point is surprising when it bends differently from its peers).
use super::point::Point;
use super::{percent_change, size_label, threads_label, Answer};
use crate::stats::quantile;

/// A point, the value its neighbours predict, and the neighbours.
#[derive(Debug, Clone)]
pub struct Surprise<'a> {
    pub point: &'a Point,
    pub expected: f64,
    pub left: &'a Point,
    pub right: &'a Point,
    /// Median actual/expected of the other mechanisms at the same sizes and thread count.
    pub peers: Option<f64>,
}

impl Surprise<'_> {
    /// ln(actual / expected): how far off its neighbours' line, symmetric for dips and peaks.
    pub fn departure(&self) -> f64 {
        (self.point.headline_value() / self.expected).ln()
    }

    /// The departure beyond the peers' median departure at the same place.
    pub fn excess(&self) -> f64 {
        self.departure() - self.peers.map_or(0.0, f64::ln)
    }

    fn same_place(&self, other: &Surprise) -> bool {
        let (a, b) = (self.point, other.point);
        a.pattern == b.pattern
            && a.threads == b.threads
            && a.size == b.size
            && self.left.size == other.left.size
            && self.right.size == other.right.size
            && a.series() != b.series()
    }
}

/// Points of one line of a plot (pattern, series, threads), ordered by size.
fn lines<'a>(points: &[&'a Point]) -> Vec<Vec<&'a Point>> {
    let mut lines: Vec<Vec<&Point>> = Vec::new();
    for p in points {
        let same = |q: &&Point| {
            q.pattern == p.pattern && q.series() == p.series() && q.threads == p.threads
        };
        match lines.iter_mut().find(|l| same(&l[0])) {
            Some(l) => l.push(p),
            None => lines.push(vec![p]),
        }
    }
    for l in &mut lines {
        l.sort_by(|a, b| a.size.total_cmp(&b.size));
    }
    lines
}

/// Every interior point with the value the line through its neighbours predicts.
fn candidates<'a>(points: &[&'a Point]) -> Vec<Surprise<'a>> {
    let mut out = Vec::new();
    for line in lines(points) {
        for w in line.windows(3) {
            let (l, p, r) = (w[0], w[1], w[2]);
            let (yl, yr) = (l.headline_value(), r.headline_value());
            if yl <= 0.0 || yr <= 0.0 || p.headline_value() <= 0.0 {
                continue;
            }
            let t = (p.size / l.size).log2() / (r.size / l.size).log2();
            out.push(Surprise {
                point: p,
                expected: (yl.ln() + t * (yr.ln() - yl.ln())).exp(),
                left: l,
                right: r,
                peers: None,
            });
        }
    }
    out
}

/// The interior point whose departure from its neighbours' line most exceeds its peers'.
pub fn most_surprising<'a>(points: &[&'a Point]) -> Option<Surprise<'a>> {
    let all = candidates(points);
    let mut best: Option<Surprise> = None;
    for c in &all {
        let mut ratios: Vec<f64> = all
            .iter()
            .filter(|o| c.same_place(o))
            .map(|o| o.departure().exp())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let candidate = Surprise {
            peers: (!ratios.is_empty()).then(|| quantile(&ratios, 0.5)),
            ..c.clone()
        };
        if best
            .as_ref()
            .is_none_or(|b| candidate.excess().abs() > b.excess().abs())
        {
            best = Some(candidate);
        }
    }
    best
}

fn figure(p: &Point, v: f64) -> String {
    if p.pattern == "rr" {
        format!("{v:.0} round trips/s")
    } else {
        format!("{v:.2} Gbit/s")
    }
}

/// Whether what the neighbours and the peers together lead one to expect lies within the
/// point's 95 % CI.
fn ci_clause(s: &Surprise) -> String {
    let p = s.point;
    let expected = s.expected * s.peers.unwrap_or(1.0);
    match &p.headline {
        Some(h) if expected < h.ci95_low || expected > h.ci95_high => format!(
            "; that expectation ({}) lies outside its 95 % CI ({} to {})",
            figure(p, expected),
            figure(p, h.ci95_low),
            figure(p, h.ci95_high)
        ),
        Some(_) => "; that expectation lies inside its 95 % CI, so this may be noise".into(),
        None => "; it has no CI to judge it against".into(),
    }
}

/// Where the other mechanisms sit against their own lines at the same place.
fn peers_clause(s: &Surprise) -> String {
    match s.peers {
        Some(r) => format!(
            "; the other mechanisms at this size and thread count sit {} from theirs (median)",
            percent_change(r)
        ),
        None => "; no other mechanism was measured at these sizes to compare with".into(),
    }
}

/// The report's answer, with the figures around the surprising point.
pub fn answer(points: &[&Point]) -> Answer {
    let question = "Which point is the most surprising?";
    let rests_on = "the headline figure (stream: receiver Gbit/s, rr: round trips/s; the \
                    statistics mean where present) of every completed point against the \
                    log-log line through its neighbours in size (same mechanism, pattern and \
                    thread count), less the median departure of the other mechanisms there"
        .to_string();
    let Some(s) = most_surprising(points) else {
        return Answer {
            question,
            finding: "Cannot be said: no line of the plots has three or more sizes, so no point \
                      has neighbours on both sides."
                .into(),
            details: Vec::new(),
            rests_on,
            verdict: Some("cannot be said".into()),
        };
    };
    let p = s.point;
    let (peers, ci) = (peers_clause(&s), ci_clause(&s));
    let finding = format!(
        "{} ({}) at {}, {}: {}, {} from the line through its neighbours (about {}){peers}{ci}.",
        p.series(),
        p.pattern,
        size_label(p.size),
        threads_label(p.threads),
        figure(p, p.headline_value()),
        percent_change(p.headline_value() / s.expected),
        figure(p, s.expected),
    );
    let details = [s.left, p, s.right]
        .iter()
        .map(|q| {
            format!(
                "{}: {} (line {} of results.jsonl)",
                size_label(q.size),
                figure(q, q.headline_value()),
                q.line
            )
        })
        .collect();
    Answer {
        question,
        finding,
        details,
        rests_on,
        // The most surprising point is the largest of many departures: a figure, which a
        // re-run need not single out again.
        verdict: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{jsonl, Shape};

    #[test]
    fn a_dip_between_two_neighbours_is_the_surprise() {
        let shapes = [
            Shape::stream("copy", 1024, 1, 4.0),
            Shape::stream("copy", 4096, 1, 8.0),
            Shape::stream("copy", 16384, 1, 4.0),
            Shape::stream("copy", 65536, 1, 32.0),
        ];
        let d = parse(&jsonl(&shapes), "r").unwrap();
        let a = answer(&d.completed());
        // 16 KiB: neighbours 8 and 32 predict 16, so 4 is -75 %;
        // 4 KiB: neighbours 4 and 4 predict 4, so 8 is +100 % (a smaller departure in log terms).
        assert!(
            a.finding
                .starts_with("copy (stream) at 16 KiB, 1 thread: 4.00 Gbit/s, -75 %"),
            "{}",
            a.finding
        );
        assert!(a.finding.contains("no other mechanism was measured"));
        assert!(a.finding.contains("outside its 95 % CI"));
        assert_eq!(a.details.len(), 3);
    }

    #[test]
    fn a_bend_every_mechanism_shares_is_not_surprising() {
        // All three saturate alike (+79 % above the line at 4 KiB); gather bends far more.
        let mut shapes = Vec::new();
        for (mechanism, middle) in [("send", 16.0), ("copy", 16.0), ("gather", 24.0)] {
            shapes.push(Shape::stream(mechanism, 256, 1, 4.0));
            shapes.push(Shape::stream(mechanism, 4096, 1, middle));
            shapes.push(Shape::stream(mechanism, 65536, 1, 20.0));
        }
        let d = parse(&jsonl(&shapes), "r").unwrap();
        let s = most_surprising(&d.completed()).unwrap();
        assert_eq!(s.point.mechanism, "gather");
        assert!((s.peers.unwrap() - 16.0 / 80f64.sqrt()).abs() < 1e-9);
        let a = answer(&d.completed());
        assert!(
            a.finding
                .contains("the other mechanisms at this size and thread count sit +79 %"),
            "{}",
            a.finding
        );
    }

    #[test]
    fn fewer_than_three_sizes_cannot_be_said() {
        let shapes = [
            Shape::stream("copy", 1024, 1, 4.0),
            Shape::stream("copy", 4096, 1, 8.0),
        ];
        let d = parse(&jsonl(&shapes), "r").unwrap();
        assert!(answer(&d.completed()).finding.starts_with("Cannot be said"));
    }
}
