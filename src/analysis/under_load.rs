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
use crate::record::under_load::{LatencyRatio, PairedVisit, RoundPair};
use crate::stats::verdict::{Judged, Verdict};
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
    super::twin::twin(p, points, |q| q.under_load.flows.is_none())
}

/// The state of one ratio in the answer's words.
pub fn word(state: Verdict, margin: f64) -> String {
    super::twin::word(state, margin, ("raises", "lowers"))
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
fn detail(cell: &Cell, judged: &Result<Judged, String>, m: f64) -> String {
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

/// One loaded point of a sweep beside its twin, for the report's under-load section: both
/// latencies, the paired ratios in words and what the load moved.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadRow {
    /// "send 64 B ×1".
    pub at: String,
    pub flows: usize,
    pub unloaded: Option<super::point::Latency>,
    pub loaded: Option<super::point::Latency>,
    /// The p50 and p99 ratio with its interval and state, as the answer judged them.
    pub p50: String,
    pub p99: String,
    /// The load's achieved Gbit/s.
    pub gbps: Option<f64>,
}

/// Every loaded point's row, in the points' order, judged as the answer's family.
pub fn rows(points: &[&Point], margin: f64) -> Vec<LoadRow> {
    let cells = cells(points);
    let f = family(&cells, margin);
    let say = |j: &Result<Judged, String>| match j {
        Ok(j) => format!(
            "{}: {}",
            ratio_family::text(j, margin),
            word(j.state, margin)
        ),
        Err(why) => format!("undecided: {why}"),
    };
    // `cells` gives each loaded point its p50 cell, then its p99 cell.
    (cells.chunks(2).zip(f.cells.chunks(2)))
        .map(|(pair, judged)| LoadRow {
            at: place(pair[0].loaded),
            flows: pair[0].loaded.under_load.flows.unwrap_or(0),
            unloaded: pair[0].twin.and_then(|t| t.latency.clone()),
            loaded: pair[0].loaded.latency.clone(),
            p50: say(&judged[0]),
            p99: say(&judged[1]),
            gbps: pair[0].loaded.under_load.gbps,
        })
        .collect()
}

/// What `run --under-load`'s ratios rest on.
pub fn run_basis(margin: f64) -> String {
    format!(
        "per-round paired ratios of the rr client's latency p50 and p99 (each visit's own \
         percentile), each round's visit with the load over its visit without it (back to \
         back, order alternating by round); Student's t on the per-round log-ratios; \
         \"raises\" when the interval lies above 1; the p50 and p99 ratios are {}",
        ratio_family::basis(margin)
    )
}

/// `run --under-load`'s two ratios, p50 then p99: each round's loaded visit over its unloaded
/// one, judged as one family with the sweep answer's machinery and words.
pub fn run_ratios(pairs: &[RoundPair], margin: f64) -> Vec<LatencyRatio> {
    let names = ["p50", "p99"];
    let ratios: Vec<Result<RatioInterval, String>> = [false, true]
        .iter()
        .zip(names)
        .map(|(&p99, name)| {
            let loaded = series(pairs, p99, |p| &p.loaded);
            let unloaded = series(pairs, p99, |p| &p.unloaded);
            paired::ratio_of(&loaded, &unloaded, &format!("rr latency {name}"))
        })
        .collect();
    let f = ratio_family::judge(&ratios, margin);
    (names.iter().zip(&ratios).zip(&f.cells))
        .map(|((name, r), j)| latency_ratio(name, r, j, margin))
        .collect()
}

/// The completed visits' percentile (p50, or p99) with their rounds.
fn series(
    pairs: &[RoundPair],
    p99: bool,
    visit: fn(&RoundPair) -> &PairedVisit,
) -> Vec<(usize, f64)> {
    pairs
        .iter()
        .filter_map(|p| {
            let v = Some(visit(p)).filter(|v| v.status == "completed")?;
            let ns = if p99 { v.p99_ns } else { v.p50_ns }?;
            Some((p.round, ns as f64))
        })
        .collect()
}

/// One ratio as the record keeps it; an interval from fewer pairs than one is shown from is
/// kept as none.
fn latency_ratio(
    name: &str,
    r: &Result<RatioInterval, String>,
    j: &Result<Judged, String>,
    margin: f64,
) -> LatencyRatio {
    match (r, j) {
        (Ok(r), Ok(j)) => {
            let shown = !crate::stats::interval::too_few(Some(r.n));
            LatencyRatio {
                percentile: name.into(),
                ratio: Some(j.ratio),
                ci_low: shown.then_some(j.low),
                ci_high: shown.then_some(j.high),
                confidence: shown.then_some(j.confidence),
                pairs: r.n,
                verdict: word(j.state, margin),
                text: ratio_family::text(j, margin),
                unavailable_reason: None,
            }
        }
        (Err(why), _) | (_, Err(why)) => LatencyRatio {
            percentile: name.into(),
            ratio: None,
            ci_low: None,
            ci_high: None,
            confidence: None,
            pairs: 0,
            verdict: "undecided".into(),
            text: format!("undecided: {why}"),
            unavailable_reason: Some(why.clone()),
        },
    }
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
                gbps: loaded.then_some(3.5),
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

    /// A paired run's round: its two visits' p50 (p99 three times it), the load's visit `first`
    /// in odd rounds.
    fn round(round: usize, unloaded: f64, loaded: f64) -> RoundPair {
        let visit = |p50: f64, load: bool| PairedVisit {
            status: "completed".into(),
            p50_ns: Some(p50 as u64),
            p99_ns: Some((p50 * 3.0) as u64),
            latency_percentiles_ns: Vec::new(),
            latency_unavailable_reason: None,
            load: load.then_some(crate::record::under_load::VisitLoad {
                sent_bytes: 1,
                received_bytes: 1,
                load_s: 0.1,
                gbps: 1.0,
            }),
        };
        RoundPair {
            round,
            first: if round % 2 == 0 { "unloaded" } else { "loaded" }.into(),
            unloaded: visit(unloaded, false),
            loaded: visit(loaded, true),
        }
    }

    const QUIET: [f64; 8] = [
        10_000.0, 11_000.0, 10_500.0, 9_800.0, 10_200.0, 10_900.0, 9_900.0, 10_400.0,
    ];

    #[test]
    fn a_run_whose_load_doubles_every_rounds_latency_raises_it() {
        let pairs: Vec<RoundPair> = (QUIET.iter().enumerate())
            .map(|(r, q)| round(r, *q, q * (2.0 + 0.01 * (r % 3) as f64)))
            .collect();
        let ratios = run_ratios(&pairs, 0.05);
        assert_eq!(ratios.len(), 2);
        for (r, name) in ratios.iter().zip(["p50", "p99"]) {
            assert_eq!(r.percentile, name);
            assert_eq!((r.verdict.as_str(), r.pairs), ("raises", 8), "{r:?}");
            let (low, high) = (r.ci_low.unwrap(), r.ci_high.unwrap());
            assert!(low > 1.9 && high < 2.1 && low < high, "{r:?}");
            assert!((r.ratio.unwrap() - 2.01).abs() < 0.02, "{r:?}");
        }
    }

    #[test]
    fn a_run_whose_load_changes_nothing_is_equivalent_within_the_margin() {
        let pairs: Vec<RoundPair> = (QUIET.iter().enumerate())
            .map(|(r, q)| round(r, *q, q * (1.0 + 0.001 * (r % 2) as f64)))
            .collect();
        let ratios = run_ratios(&pairs, 0.05);
        assert_eq!(
            ratios[0].verdict, "equivalent within ±5 %",
            "{:?}",
            ratios[0]
        );
        assert!(ratios[0].text.starts_with("equivalent within ±5 %"));
    }

    #[test]
    fn a_run_of_too_few_pairs_is_undecided_and_shows_no_interval() {
        let mut pairs: Vec<RoundPair> = (QUIET[..3].iter().enumerate())
            .map(|(r, q)| round(r, *q, q * 2.0))
            .collect();
        // A visit that failed is no pair: two rounds remain, too few for an interval.
        pairs[1].loaded.status = "failed".into();
        let ratios = run_ratios(&pairs, 0.05);
        assert_eq!(
            (ratios[0].verdict.as_str(), ratios[0].pairs),
            ("undecided", 2)
        );
        assert_eq!((ratios[0].ci_low, ratios[0].ci_high), (None, None));
        assert!((ratios[0].ratio.unwrap() - 2.0).abs() < 0.01);
        let alone = run_ratios(&pairs[..1], 0.05);
        assert_eq!(alone[1].ratio, None);
        assert!(
            alone[1]
                .unavailable_reason
                .as_deref()
                .unwrap()
                .contains("rr latency p99"),
            "{:?}",
            alone[1]
        );
    }

    #[test]
    fn the_sweeps_rows_hold_both_latencies_the_ratios_and_the_load() {
        let quiet = [10_000.0, 11_000.0, 10_500.0, 9_800.0, 10_200.0];
        let raised: Vec<f64> = quiet.iter().map(|v| v * 2.0 + 37.0).collect();
        let points = [point("send", false, &quiet), point("send", true, &raised)];
        let refs: Vec<&Point> = points.iter().collect();
        let rows = rows(&refs, 0.05);
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(
            (row.at.as_str(), row.flows, row.gbps),
            ("send 64 B ×1", 2, Some(3.5))
        );
        assert!(
            row.p50.ends_with(": raises") && row.p99.ends_with(": raises"),
            "{row:?}"
        );
        assert!(row.unloaded.is_some() && row.loaded.is_some());
    }
}
