//! What a mesh's records say: per point, an N×N matrix of cells (source row, destination
//! column), each the visits of that pair with the mean and 95 % CI of its visit means
//! (`stats::visits::summarize_visits`), and the pairs slower than the mesh's other pairs.
//! A pair is one value in that test: its log cell mean against the other pairs' log cell means
//! (n = pairs, never every visit pooled, which made any pair a few percent below average
//! "slow" once enough visits were made), centred on their median and scaled by their MAD
//! (1.4826 × MAD, the normal-consistent spread; degrees of freedom cut to the MAD's 37 %
//! efficiency) so a slow host's pairs do not widen the reference they are judged against while
//! they are fewer than half of it. The pairs are one family under Holm's step-down with the
//! equivalence margin (`stats::verdict`). A host is slow only when most of its pairs are, so one
//! slow link flags that link and neither of its hosts. No overlap of two intervals is a test.
use crate::record::view::RunView;
use crate::stats::verdict::{self, Correction, LogEstimate, Verdict};
use crate::stats::visits::{summarize_visits, welch_ratio, RatioInterval};
use crate::stats::Summary;

/// How a pair is judged slow, as the report states it.
pub const FLAG_METHOD: &str = "each pair's log cell mean (the mean of its visit means) is set against the log cell means of every other pair: the ratio to their median, with an interval from their spread (1.4826 × MAD of the cell means, widened by the median cell's own standard error; Student's t on 37 % of pairs − 1 degrees of freedom, the MAD's efficiency); all pairs are one family under Holm's step-down, each interval shown at its Holm level; a pair is flagged slow when that interval lies wholly below 1 for Gbit/s, or wholly above 1 for round-trip time. The reference holds fewer than half slow pairs only while no host is in half the pairs (5 hosts or more)";

/// The figure a point's cells hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// stream: payload received whole at the destination per second.
    Gbps,
    /// rr: the median round trip the source timed, in microseconds.
    RoundTripP50Us,
}

impl Figure {
    pub fn of_pattern(pattern: &str) -> Figure {
        if pattern == "rr" {
            Figure::RoundTripP50Us
        } else {
            Figure::Gbps
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Figure::Gbps => "Gbit/s",
            Figure::RoundTripP50Us => "round-trip p50 µs",
        }
    }

    pub fn higher_is_better(self) -> bool {
        self == Figure::Gbps
    }

    /// A completed record's value of this figure: one visit's mean.
    pub fn value(self, record: &RunView) -> Option<f64> {
        let v = match self {
            Figure::Gbps => record.side(1)?.throughput_gbps?,
            Figure::RoundTripP50Us => record.side(0)?.latency_ns?.p50? / 1e3,
        };
        (v.is_finite() && v > 0.0).then_some(v)
    }
}

/// One (source, destination) cell of one point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    /// One value per completed visit, in visit order.
    pub visits: Vec<f64>,
    /// Mean and 95 % CI of the visit means; `None` with fewer than two visits.
    pub summary: Option<Summary>,
    /// Runs of this cell that failed (or were interrupted, or skipped), and the last reason.
    pub failed: usize,
    pub reason: Option<String>,
}

/// A pair set against the other pairs' cell means.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The pair's cell mean over the reference's median, with its interval at the Holm level.
    pub ratio: RatioInterval,
    /// The confidence of that interval: 1 − its Holm level.
    pub confidence: f64,
    /// The reference's centre: the median of the other pairs' cell means.
    pub median: f64,
    /// The reference's spread on the log scale (1.4826 × MAD of the log cell means).
    pub log_spread: f64,
    pub pairs: usize,
    /// The state of the test within the family of pairs (slower, equivalent, undecided…).
    pub state: Verdict,
    /// The interval lies wholly on the slow side of 1.
    pub slower: bool,
}

/// Why a flagged pair is slow, from which of its hosts are slow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Neither host has most of its pairs slow: the link between them.
    Link,
    /// Most of the destination's pairs are slow.
    Destination,
    /// Most of the source's pairs are slow.
    Source,
    /// Most pairs of both hosts are slow.
    BothHosts,
}

impl Cause {
    pub fn describe(self) -> &'static str {
        match self {
            Cause::Link => "this link: neither host has most of its pairs slow",
            Cause::Destination => "the destination host: most of its pairs are slow",
            Cause::Source => "the source host: most of its pairs are slow",
            Cause::BothHosts => "both hosts: most pairs of each are slow",
        }
    }
}

/// A pair significantly slower than the mesh's other pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    pub src: usize,
    pub dst: usize,
    pub against: Reference,
    pub cause: Cause,
}

/// One point's matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct PointMatrix {
    /// `mechanism/pattern/size/threads`.
    pub key: String,
    pub figure: Figure,
    /// `cells[src][dst]`; the diagonal stays empty.
    pub cells: Vec<Vec<Cell>>,
    pub flags: Vec<Flag>,
    /// Per host: its pairs against the pairs without it.
    pub hosts: Vec<HostVerdict>,
}

/// A host's verdict: its pairs' cell means against the cell means of the pairs it is not in
/// (n = pairs, Welch's t on the logs, Holm across hosts), and slow only when that interval lies
/// on the slow side of 1 *and* most of its pairs lie on the slow side of the others' median,
/// so one slow link makes neither of its hosts slow.
#[derive(Debug, Clone, PartialEq)]
pub struct HostVerdict {
    pub host: usize,
    /// Its pairs with a cell mean.
    pub tested_pairs: usize,
    /// Its pairs flagged slow on their own.
    pub slow_pairs: usize,
    /// Its pairs whose cell mean lies on the slow side of the median of the pairs without it.
    pub pairs_on_slow_side: usize,
    /// Its pairs over the pairs without it, at the Holm level, with that confidence.
    pub ratio: Option<(RatioInterval, f64)>,
    pub slow: bool,
}

/// How a host is judged slow, as the report states it.
pub const HOST_METHOD: &str = "each host's pairs (either end) against the pairs it is not in, on cell means (n = pairs, never pooled visits): the ratio of geometric means with Welch's interval on the log cell means, Holm across hosts; a host is slow when that interval lies on the slow side of 1 and more than half of its pairs lie on the slow side of the other pairs' median, so one slow link makes neither of its hosts slow";

/// The matrices of every point found in `records`, in the order points first appear; hosts
/// are matched by the names the records carry in `src` and `dst`.
pub fn matrices(hosts: &[String], records: &[RunView], margin: f64) -> Vec<PointMatrix> {
    let mut out: Vec<PointMatrix> = Vec::new();
    let n = hosts.len();
    for record in records {
        let index = |name: &Option<String>| {
            let name = name.as_deref()?;
            hosts.iter().position(|h| h == name)
        };
        let (Some(src), Some(dst)) = (index(&record.src), index(&record.dst)) else {
            continue;
        };
        let key = record.config().point_key();
        let position = match out.iter().position(|m| m.key == key) {
            Some(i) => i,
            None => {
                let pattern = record.config().pattern.as_deref().unwrap_or("stream");
                out.push(PointMatrix {
                    key,
                    figure: Figure::of_pattern(pattern),
                    cells: vec![vec![Cell::default(); n]; n],
                    flags: Vec::new(),
                    hosts: Vec::new(),
                });
                out.len() - 1
            }
        };
        let matrix = &mut out[position];
        let cell = &mut matrix.cells[src][dst];
        match (record.completed(), matrix.figure.value(record)) {
            (true, Some(v)) => cell.visits.push(v),
            _ => {
                cell.failed += 1;
                let why = record.errors().first().or(record.skipped_reason.as_ref());
                cell.reason = why.cloned();
            }
        }
    }
    for matrix in &mut out {
        for cell in matrix.cells.iter_mut().flatten() {
            cell.summary = summarize_visits(&cell.visits);
        }
        (matrix.flags, matrix.hosts) = judge(&matrix.cells, matrix.figure, margin);
    }
    out
}

/// Every measured pair against the others' cell means, one Holm family; then the hosts.
/// A measured ordered pair: (source, destination, log cell mean, its standard error).
type Measured = (usize, usize, f64, f64);

/// The slow side of a ratio of this figure.
fn slow_state(figure: Figure) -> Verdict {
    match figure.higher_is_better() {
        true => Verdict::Slower,
        false => Verdict::Beats,
    }
}

pub fn judge(cells: &[Vec<Cell>], figure: Figure, margin: f64) -> (Vec<Flag>, Vec<HostVerdict>) {
    let n = cells.len();
    let measured: Vec<Measured> = (0..n)
        .flat_map(|x| (0..n).map(move |y| (x, y)))
        .filter(|&(x, y)| x != y && !cells[x][y].visits.is_empty())
        .map(|(x, y)| {
            let visits = &cells[x][y].visits;
            (x, y, mean(visits).ln(), log_standard_error(visits))
        })
        .collect();
    let references = pair_references(&measured, figure, margin);
    let hosts = judge_hosts(&measured, &references, figure, margin, n);
    let flags = references
        .into_iter()
        .filter(|(_, _, r)| r.slower)
        .map(|(src, dst, against)| {
            let cause = match (hosts[src].slow, hosts[dst].slow) {
                (true, true) => Cause::BothHosts,
                (true, false) => Cause::Source,
                (false, true) => Cause::Destination,
                (false, false) => Cause::Link,
            };
            Flag {
                src,
                dst,
                against,
                cause,
            }
        })
        .collect();
    (flags, hosts)
}

/// Each measured pair against the other pairs' cell means, all pairs one Holm family.
fn pair_references(
    measured: &[Measured],
    figure: Figure,
    margin: f64,
) -> Vec<(usize, usize, Reference)> {
    let tested: Vec<(usize, usize, LogEstimate, f64, f64, usize)> = measured
        .iter()
        .enumerate()
        .filter_map(|(i, &(x, y, log_mean, _))| {
            let others: Vec<(f64, f64)> = measured
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, m)| (m.2, m.3))
                .collect();
            let (estimate, centre, spread) = against_others(log_mean, &others)?;
            Some((x, y, estimate, centre, spread, others.len()))
        })
        .collect();
    let estimates: Vec<LogEstimate> = tested.iter().map(|t| t.2).collect();
    let family = verdict::judge(&estimates, Correction::Holm, margin);
    tested
        .iter()
        .zip(&family.judged)
        .map(|(&(x, y, e, centre, log_spread, pairs), j)| {
            let ratio = RatioInterval {
                ratio: j.ratio,
                low: j.low,
                high: j.high,
                n: pairs,
                df: e.df,
            };
            let r = Reference {
                ratio,
                confidence: j.confidence,
                median: centre.exp(),
                log_spread,
                pairs,
                state: j.state,
                slower: j.state == slow_state(figure),
            };
            (x, y, r)
        })
        .collect()
}

/// Each host's pairs against the pairs it is not in (cell means), one Holm family.
fn judge_hosts(
    measured: &[Measured],
    references: &[(usize, usize, Reference)],
    figure: Figure,
    margin: f64,
    n: usize,
) -> Vec<HostVerdict> {
    let (mut hosts, welch): (Vec<HostVerdict>, Vec<Option<RatioInterval>>) = (0..n)
        .map(|host| host_counts(measured, references, host, figure))
        .unzip();
    let tested: Vec<(usize, RatioInterval)> = welch
        .into_iter()
        .enumerate()
        .filter_map(|(host, r)| Some((host, r?)))
        .collect();
    let estimates: Vec<LogEstimate> = tested
        .iter()
        .map(|(_, r)| LogEstimate::from_interval(r))
        .collect();
    let family = verdict::judge(&estimates, Correction::Holm, margin);
    for ((host, r), j) in tested.iter().zip(&family.judged) {
        let h = &mut hosts[*host];
        let shown = RatioInterval {
            ratio: j.ratio,
            low: j.low,
            high: j.high,
            ..*r
        };
        let interval_slow = j.state == slow_state(figure);
        h.ratio = Some((shown, j.confidence));
        h.slow = interval_slow && 2 * h.pairs_on_slow_side > h.tested_pairs;
    }
    hosts
}

/// One host's counts (its pairs, those flagged, those on the slow side of the median of the
/// pairs without it) and the Welch interval of its cell means over theirs, uncorrected.
fn host_counts(
    measured: &[Measured],
    references: &[(usize, usize, Reference)],
    host: usize,
    figure: Figure,
) -> (HostVerdict, Option<RatioInterval>) {
    let touches = |x: usize, y: usize| x == host || y == host;
    let mine: Vec<f64> = measured
        .iter()
        .filter(|m| touches(m.0, m.1))
        .map(|m| m.2)
        .collect();
    let mut theirs: Vec<f64> = measured
        .iter()
        .filter(|m| !touches(m.0, m.1))
        .map(|m| m.2)
        .collect();
    theirs.sort_by(f64::total_cmp);
    let slow_side = |x: f64, centre: f64| match figure.higher_is_better() {
        true => x < centre,
        false => x > centre,
    };
    let on_slow_side = match theirs.is_empty() {
        true => 0,
        false => mine
            .iter()
            .filter(|x| slow_side(**x, median(&theirs)))
            .count(),
    };
    let exp = |v: &[f64]| v.iter().map(|x| x.exp()).collect::<Vec<f64>>();
    let verdict = HostVerdict {
        host,
        tested_pairs: mine.len(),
        slow_pairs: references
            .iter()
            .filter(|(x, y, r)| touches(*x, *y) && r.slower)
            .count(),
        pairs_on_slow_side: on_slow_side,
        ratio: None,
        slow: false,
    };
    (verdict, welch_ratio(&exp(&mine), &exp(&theirs)))
}

/// One pair's log cell mean against the others' `(log cell mean, its standard error)` (at
/// least three): the estimate of its log ratio to their median, the median, and the spread.
/// The spread is the robust spread of the cell means (1.4826 × MAD) widened by the median
/// cell's own standard error: conservative, and never 0 where more than half the cells agree.
fn against_others(log_mean: f64, others: &[(f64, f64)]) -> Option<(LogEstimate, f64, f64)> {
    let k = others.len();
    if k < 3 {
        return None;
    }
    let mut sorted: Vec<f64> = others.iter().map(|o| o.0).collect();
    sorted.sort_by(f64::total_cmp);
    let centre = median(&sorted);
    let mut deviations: Vec<f64> = sorted.iter().map(|v| (v - centre).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let mut own: Vec<f64> = others.iter().map(|o| o.1 * o.1).collect();
    own.sort_by(f64::total_cmp);
    let spread = ((1.4826 * median(&deviations)).powi(2) + median(&own)).sqrt();
    // A new value against a centre estimated from k values: the median's variance is about
    // π/2 times the mean's.
    let se = spread * (1.0 + std::f64::consts::FRAC_PI_2 / k as f64).sqrt();
    let df = (0.37 * (k - 1) as f64).max(1.0);
    let estimate = LogEstimate {
        log_ratio: log_mean - centre,
        se,
        df,
        // A cell against the median of the other cells: not an interval over pairs.
        pairs: None,
    };
    Some((estimate, centre, spread))
}

/// The standard error of a cell's log mean from its visits (0 with one visit).
fn log_standard_error(visits: &[f64]) -> f64 {
    let k = visits.len();
    if k < 2 {
        return 0.0;
    }
    let logs: Vec<f64> = visits.iter().map(|v| v.ln()).collect();
    let m = logs.iter().sum::<f64>() / k as f64;
    let var = logs.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (k - 1) as f64;
    (var / k as f64).sqrt()
}

/// Every ordered pair `host` is in, in row order.
pub fn pairs_through(hosts: usize, host: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..hosts)
        .flat_map(move |x| (0..hosts).map(move |y| (x, y)))
        .filter(move |&(x, y)| x != y && (x == host || y == host))
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The median of sorted values.
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
