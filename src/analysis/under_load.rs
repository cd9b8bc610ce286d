//! `sweep --under-load N`'s question: what does each copy path cost the latency of others?
//! Each rr point visited beside the load and its twin without it (same mechanism, size and
//! flows) were visited in the same group of every round, so each round gives one ratio of the
//! rr client's latency percentile with the load over without; the answer is that ratio's
//! interval (p50 and p99 per mechanism, all one family), in three states: the load raises it
//! (the interval above 1), lowers it (below 1), equivalent within the margin, or undecided.
use super::paired;
use super::point::Point;
use super::ratio_family::{self, RatioFamily};
use super::tested::TestedAnswer;
use super::{place, Answer};
use crate::stats::verdict::{percent, Verdict};
use crate::stats::visits::RatioInterval;

pub const QUESTION: &str =
    "What does each copy path cost the latency of others (rr latency under --under-load against without, paired)?";

fn basis(margin: f64) -> String {
    format!(
        "per-round paired ratios of the rr client's latency p50 and p99 (each visit's own \
         percentile), each point visited beside its load flows over its twin without them \
         (same mechanism, size and flows, visited in the same group of every round, order \
         drawn per round); Student's t on the per-round log-ratios; \"raises\" when the \
         interval lies above 1; {}",
        ratio_family::basis(margin)
    )
}

/// The unloaded twin of `p` (a point measured under load).
fn twin<'a>(p: &Point, points: &[&'a Point]) -> Option<&'a Point> {
    points.iter().copied().find(|q| {
        q.under_load.flows.is_none()
            && q.mechanism == p.mechanism
            && q.pattern == p.pattern
            && q.transport == p.transport
            && q.recv == p.recv
            && q.size == p.size
            && q.threads == p.threads
    })
}

/// The state of one ratio in the answer's words.
fn word(state: Verdict, margin: f64) -> String {
    match state {
        Verdict::Beats => "raises".into(),
        Verdict::Slower => "lowers".into(),
        Verdict::Equivalent => format!("equivalent within ±{}", percent(margin)),
        Verdict::Undecided => "undecided".into(),
    }
}

/// One comparison of the family: a loaded point, its twin, and the percentile compared.
struct Cell<'a> {
    loaded: &'a Point,
    twin: Option<&'a Point>,
    p99: bool,
}

impl Cell<'_> {
    fn name(&self) -> String {
        format!(
            "{} p{}",
            place(self.loaded),
            if self.p99 { "99" } else { "50" }
        )
    }

    fn ratio(&self) -> Result<RatioInterval, String> {
        let Some(twin) = self.twin else {
            return Err("no completed twin without load to pair with".into());
        };
        let of = |p: &Point| match self.p99 {
            true => p.under_load.p99_visits.clone(),
            false => p.under_load.p50_visits.clone(),
        };
        paired::ratio_of(&of(self.loaded), &of(twin), &self.name())
    }
}

/// Every loaded point's two cells (p50, p99), in the points' order.
fn cells<'a>(points: &[&'a Point]) -> Vec<Cell<'a>> {
    points
        .iter()
        .copied()
        .filter(|p| p.under_load.flows.is_some())
        .flat_map(|p| {
            let twin = twin(p, points);
            [false, true].map(|p99| Cell {
                loaded: p,
                twin,
                p99,
            })
        })
        .collect()
}

fn family(cells: &[Cell], margin: f64) -> RatioFamily {
    let ratios: Vec<Result<RatioInterval, String>> = cells.iter().map(Cell::ratio).collect();
    ratio_family::judge(&ratios, margin)
}

/// One cell's detail line.
fn detail(cell: &Cell, judged: &Result<crate::stats::verdict::Judged, String>, m: f64) -> String {
    let at = cell.name();
    match judged {
        Ok(j) => format!(
            "{at}: latency with the load ({} flows) over without {}: {}",
            cell.loaded.under_load.flows.unwrap_or(0),
            ratio_family::text(j, m),
            word(j.state, m)
        ),
        Err(why) => format!("{at}: undecided: {why}"),
    }
}

/// The answer, or `None` when the points hold no point measured under load.
pub fn answer(points: &[&Point], margin: f64) -> Option<Answer> {
    let cells = cells(points);
    if cells.is_empty() {
        return None;
    }
    let f = family(&cells, margin);
    let details: Vec<String> = (cells.iter().zip(&f.cells))
        .map(|(c, j)| detail(c, j, margin))
        .collect();
    let summary: Vec<String> = (cells.iter().zip(&f.cells))
        .map(|(c, j)| match j {
            Ok(j) => format!("{}: {}", c.name(), word(j.state, margin)),
            Err(_) => format!("{}: undecided", c.name()),
        })
        .collect();
    if f.family.tests == 0 {
        let finding = format!(
            "Cannot be said: no point under load pairs with its twin over enough rounds. {}",
            details.join("; ")
        );
        return Some(Answer::cannot(QUESTION, finding, basis(margin)));
    }
    Some(Answer {
        question: QUESTION,
        finding: format!(
            "Per mechanism, size and flows: the rr latency beside the load flows over the same point without them ({}):",
            f.control()
        ),
        details,
        rests_on: basis(margin),
        verdict: Some(summary.join("; ")),
    })
}

/// The family behind `answer`, cell by cell, for answers.json.
pub fn tested(points: &[&Point], margin: f64) -> Option<TestedAnswer> {
    let cells = cells(points);
    let names: Vec<String> = cells.iter().map(Cell::name).collect();
    family(&cells, margin).tested(QUESTION, &names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::synthetic::{record, Shape};

    /// A plain rr point (send 64 B, one flow) read from a synthetic record.
    fn rr_point() -> Point {
        let r = record(&Shape::rr("send", 64, 1, 50_000.0));
        crate::analysis::point::from_value(&r, 1).unwrap()
    }

    fn point(mechanism: &str, loaded: bool, p50: &[f64]) -> Point {
        let visits: Vec<(usize, f64)> = p50.iter().copied().enumerate().collect();
        Point {
            mechanism: mechanism.into(),
            under_load: crate::analysis::point::UnderLoad {
                flows: loaded.then_some(2),
                p99_visits: visits.iter().map(|(r, v)| (*r, v * 3.0)).collect(),
                p50_visits: visits,
            },
            ..rr_point()
        }
    }

    #[test]
    fn each_mechanism_gets_a_state_for_p50_and_p99_from_its_paired_rounds() {
        let quiet = [10_000.0, 11_000.0, 10_500.0, 9_800.0, 10_200.0];
        let raised: Vec<f64> = quiet.iter().map(|v| v * 2.0 + 37.0).collect();
        let same: Vec<f64> = quiet.iter().map(|v| v * 1.0003).collect();
        let points = [
            point("send", false, &quiet),
            point("send", true, &raised),
            point("copy", false, &quiet),
            point("copy", true, &same[..2]),
        ];
        let refs: Vec<&Point> = points.iter().collect();
        let a = answer(&refs, 0.05).unwrap();
        let verdict = a.verdict.unwrap();
        assert!(verdict.contains("send 64 B ×1 p50: raises"), "{verdict}");
        assert!(verdict.contains("send 64 B ×1 p99: raises"), "{verdict}");
        // Two rounds decide nothing: the copy cells stay undecided, with their interval.
        assert!(verdict.contains("copy 64 B ×1 p50: undecided"), "{verdict}");
        assert!(
            a.details.iter().any(|d| d.contains("2.")),
            "{:?}",
            a.details
        );
        let t = tested(&refs, 0.05).unwrap();
        assert_eq!(t.cells.len(), 4);
    }

    #[test]
    fn no_loaded_point_asks_nothing_and_a_lone_one_says_why() {
        let quiet = [1.0, 2.0, 3.0];
        let alone = [point("send", false, &quiet)];
        assert!(answer(&alone.iter().collect::<Vec<_>>(), 0.05).is_none());
        let orphan = [point("send", true, &quiet)];
        let a = answer(&orphan.iter().collect::<Vec<_>>(), 0.05).unwrap();
        assert!(a.finding.contains("Cannot be said"), "{}", a.finding);
        assert!(a.finding.contains("no completed twin"), "{}", a.finding);
    }
}
