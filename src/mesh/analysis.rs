//! What a mesh's records say: per point, an N×N matrix of cells (source row, destination
//! column), each the visits of that pair with the mean and 95 % CI of its visit means
//! (`stats::visits::summarize_visits`), and the pairs significantly slower than their hosts'
//! other pairs. Each pair is set against two references: the pooled visit means of its
//! source's other pairs (every pair touching the source but not the destination), and of its
//! destination's other pairs (touching the destination, not the source). Each comparison is
//! Welch's 95 % interval of the ratio on the log visit means (`stats::visits::welch_ratio`);
//! the pair is flagged when one interval lies wholly on the slow side of 1 (below for Gbit/s,
//! above for round-trip time). Which reference it is slower than says why: slower than both,
//! the link itself; slower than the source's other pairs only, the destination host (all its
//! pairs are slow); the reverse, the source host. Leaving the other endpoint's pairs out of each
//! reference keeps one slow host from hiding in the reference it is judged against. No overlap
//! of two intervals is used as a test.
use crate::stats::visits::{summarize_visits, welch_ratio, RatioInterval};
use crate::stats::Summary;
use serde_json::Value;

/// How a pair is judged slow, as the report states it.
pub const FLAG_METHOD: &str = "each pair is set against its source's other pairs (every pair touching the source but not the destination) and its destination's other pairs (touching the destination, not the source): the ratio of geometric means of the visit means with a 95 % interval by Welch's t on the log visit means (Welch–Satterthwaite degrees of freedom); a pair is flagged slow when either interval lies wholly below 1 for Gbit/s, or wholly above 1 for round-trip time. Two tests per pair at 95 % each and no correction for multiple comparisons: in a large mesh a few pairs with no real difference can be flagged by chance";

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
    pub fn value(self, record: &Value) -> Option<f64> {
        let v = match self {
            Figure::Gbps => record.pointer("/sides/1/throughput_gbps")?.as_f64()?,
            Figure::RoundTripP50Us => record.pointer("/sides/0/latency_ns/p50")?.as_f64()? / 1e3,
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

/// A pair set against one of its two references.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The pair's visit means over the reference's (geometric means), with its interval.
    pub ratio: RatioInterval,
    /// Geometric mean of the reference's pooled visit means.
    pub geometric_mean: f64,
    /// Median of the reference pairs' cell means.
    pub median: f64,
    pub pairs: usize,
    pub visits: usize,
    /// The interval lies wholly on the slow side of 1.
    pub slower: bool,
}

/// Why a flagged pair is slow, from which references it is slower than.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Slower than both hosts' other pairs: the link between them.
    Link,
    /// Slower than the source's other pairs only: every pair through the destination is.
    Destination,
    /// Slower than the destination's other pairs only: every pair through the source is.
    Source,
}

impl Cause {
    pub fn describe(self) -> &'static str {
        match self {
            Cause::Link => "this link: slower than both hosts' other pairs",
            Cause::Destination => "the destination host: its other pairs are as slow",
            Cause::Source => "the source host: its other pairs are as slow",
        }
    }
}

/// A pair significantly slower than its hosts' other pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    pub src: usize,
    pub dst: usize,
    /// Against the source's other pairs (not touching the destination); None without data.
    pub against_source: Option<Reference>,
    /// Against the destination's other pairs (not touching the source).
    pub against_destination: Option<Reference>,
    pub cause: Cause,
}

/// One point's matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct PointMatrix {
    /// `mechanism/pattern/size/threads`.
    pub key: String,
    pub figure: Figure,
    /// cells[src][dst]; the diagonal stays empty.
    pub cells: Vec<Vec<Cell>>,
    pub flags: Vec<Flag>,
    /// Per host: its pairs against the pairs without it.
    pub hosts: Vec<HostVerdict>,
}

/// A host's pairs (either end) set against every pair it is not in: one test per host, on
/// many more visits than any one pair has, so a slow host shows even when the interval of each
/// of its pairs alone is too wide to say so.
#[derive(Debug, Clone, PartialEq)]
pub struct HostVerdict {
    pub host: usize,
    pub against_others: Option<Reference>,
}

/// How a host is judged slow, as the report states it.
pub const HOST_METHOD: &str = "a host is slow when the 95 % interval of the ratio of the visit means of every pair it is in to those of every pair it is not in (Welch's t on the log visit means) lies wholly on the slow side of 1";

/// The matrices of every point found in `records`, in the order points first appear; hosts
/// are matched by the names the records carry in `src` and `dst`.
pub fn matrices(hosts: &[String], records: &[Value]) -> Vec<PointMatrix> {
    let mut out: Vec<PointMatrix> = Vec::new();
    let n = hosts.len();
    for record in records {
        let index = |key: &str| {
            let name = record[key].as_str()?;
            hosts.iter().position(|h| h == name)
        };
        let (Some(src), Some(dst)) = (index("src"), index("dst")) else {
            continue;
        };
        let key = crate::record::point_key(&record["config"]);
        let position = match out.iter().position(|m| m.key == key) {
            Some(i) => i,
            None => {
                let pattern = record["config"]["pattern"].as_str().unwrap_or("stream");
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
        match (record["status"].as_str(), matrix.figure.value(record)) {
            (Some("completed"), Some(v)) => cell.visits.push(v),
            _ => {
                cell.failed += 1;
                let why = record["errors"][0]
                    .as_str()
                    .or(record["skipped_reason"].as_str());
                cell.reason = why.map(String::from);
            }
        }
    }
    for matrix in &mut out {
        for cell in matrix.cells.iter_mut().flatten() {
            cell.summary = summarize_visits(&cell.visits);
        }
        matrix.flags = flags(&matrix.cells, matrix.figure);
        matrix.hosts = (0..n)
            .map(|host| HostVerdict {
                host,
                against_others: host_reference(&matrix.cells, host, matrix.figure),
            })
            .collect();
    }
    out
}

/// The pairs slower than their source's or their destination's other pairs.
pub fn flags(cells: &[Vec<Cell>], figure: Figure) -> Vec<Flag> {
    let n = cells.len();
    let mut out = Vec::new();
    for src in 0..n {
        for dst in (0..n).filter(|&d| d != src) {
            let pair = &cells[src][dst].visits;
            let against_source = reference(cells, pair, src, dst, figure);
            let against_destination = reference(cells, pair, dst, src, figure);
            let slower = |r: &Option<Reference>| r.as_ref().is_some_and(|r| r.slower);
            let cause = match (slower(&against_source), slower(&against_destination)) {
                (true, true) => Cause::Link,
                (true, false) => Cause::Destination,
                (false, true) => Cause::Source,
                (false, false) => continue,
            };
            out.push(Flag {
                src,
                dst,
                against_source,
                against_destination,
                cause,
            });
        }
    }
    out
}

/// `pair` against the pooled visits of every pair touching `host` but not `other`.
fn reference(
    cells: &[Vec<Cell>],
    pair: &[f64],
    host: usize,
    other: usize,
    figure: Figure,
) -> Option<Reference> {
    let members = pairs_where(cells, |x, y| {
        (x == host || y == host) && x != other && y != other
    });
    compare(pair, &members, figure)
}

/// Every pair `host` is in, pooled, against every pair it is not in.
fn host_reference(cells: &[Vec<Cell>], host: usize, figure: Figure) -> Option<Reference> {
    let mine = pairs_where(cells, |x, y| x == host || y == host);
    let theirs = pairs_where(cells, |x, y| x != host && y != host);
    let visits: Vec<f64> = mine.iter().flat_map(|c| c.visits.clone()).collect();
    compare(&visits, &theirs, figure)
}

/// Every ordered pair `host` is in, in row order.
pub fn pairs_through(hosts: usize, host: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..hosts)
        .flat_map(move |x| (0..hosts).map(move |y| (x, y)))
        .filter(move |&(x, y)| x != y && (x == host || y == host))
}

/// The measured cells of the ordered pairs (x, y) that `keep` selects.
fn pairs_where(cells: &[Vec<Cell>], keep: impl Fn(usize, usize) -> bool) -> Vec<&Cell> {
    let n = cells.len();
    (0..n)
        .flat_map(|x| (0..n).map(move |y| (x, y)))
        .filter(|&(x, y)| x != y && keep(x, y))
        .map(|(x, y)| &cells[x][y])
        .filter(|c| !c.visits.is_empty())
        .collect()
}

/// `visits` against the pooled visits of `members` (Welch on the log visit means).
fn compare(visits: &[f64], members: &[&Cell], figure: Figure) -> Option<Reference> {
    let pooled: Vec<f64> = members.iter().flat_map(|c| c.visits.clone()).collect();
    let ratio = welch_ratio(visits, &pooled)?;
    let mut means: Vec<f64> = members.iter().map(|c| mean(&c.visits)).collect();
    means.sort_by(f64::total_cmp);
    Some(Reference {
        slower: if figure.higher_is_better() {
            ratio.high < 1.0
        } else {
            ratio.low > 1.0
        },
        ratio,
        geometric_mean: geometric_mean(&pooled),
        median: median(&means),
        pairs: members.len(),
        visits: pooled.len(),
    })
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn geometric_mean(values: &[f64]) -> f64 {
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
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
mod tests {
    use super::*;
    use serde_json::json;

    fn record(src: &str, dst: &str, gbps: f64) -> Value {
        json!({
            "src": src, "dst": dst, "status": "completed",
            "config": {"mechanism": "send", "pattern": "stream", "message_size_bytes": 4096,
                       "threads": 1, "transport": "tcp"},
            "sides": [{}, {"throughput_gbps": gbps}],
        })
    }

    /// Four hosts, three visits; every pair through `d` runs at a fifth of the others.
    fn four_hosts_one_slow() -> (Vec<String>, Vec<Value>) {
        let hosts: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let mut records = Vec::new();
        for visit in 0..3 {
            for s in &hosts {
                for d in hosts.iter().filter(|d| *d != s) {
                    let base = if s == "d" || d == "d" { 2.0 } else { 10.0 };
                    records.push(record(s, d, base * (1.0 + 0.03 * visit as f64)));
                }
            }
        }
        (hosts, records)
    }

    #[test]
    fn the_pairs_through_a_slow_host_are_flagged_and_no_other() {
        let (hosts, records) = four_hosts_one_slow();
        let m = &matrices(&hosts, &records)[0];
        assert_eq!(m.key, "send/stream/4096/1");
        let flagged: Vec<(usize, usize)> = m.flags.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(flagged, [(0, 3), (1, 3), (2, 3), (3, 0), (3, 1), (3, 2)]);
        // a→d: slower than a's other pairs (a↔b, a↔c), as slow as d's (b↔d, c↔d): d is why.
        let f = &m.flags[0];
        assert_eq!(f.cause, Cause::Destination);
        let source = f.against_source.as_ref().unwrap();
        assert!(source.slower && source.ratio.high < 1.0);
        assert_eq!((source.pairs, source.visits), (4, 12));
        assert!((source.median - 10.3).abs() < 1e-9, "{source:?}");
        assert!(!f.against_destination.as_ref().unwrap().slower);
        assert_eq!(m.flags[3].cause, Cause::Source, "d→a: the source");
        let slow_hosts: Vec<usize> = m
            .hosts
            .iter()
            .filter(|h| h.against_others.as_ref().is_some_and(|r| r.slower))
            .map(|h| h.host)
            .collect();
        assert_eq!(slow_hosts, [3]);
        let d = m.hosts[3].against_others.as_ref().unwrap();
        assert_eq!(
            (d.pairs, d.visits),
            (6, 18),
            "d against the six pairs among a, b, c"
        );
        let cell = &m.cells[0][1];
        assert_eq!(cell.visits.len(), 3);
        assert!((cell.summary.unwrap().mean - 10.3).abs() < 1e-9);
    }

    #[test]
    fn a_failed_visit_is_counted_with_its_reason_and_one_visit_has_no_interval() {
        let mut failed = record("a", "b", 1.0);
        failed["status"] = json!("failed");
        failed["errors"] = json!(["host b is down"]);
        let hosts = vec!["a".to_string(), "b".to_string()];
        let m = &matrices(&hosts, &[failed, record("b", "a", 5.0)])[0];
        assert_eq!(
            (m.cells[0][1].failed, m.cells[0][1].reason.as_deref()),
            (1, Some("host b is down"))
        );
        assert!(m.cells[1][0].summary.is_none() && m.cells[1][0].visits == [5.0]);
        assert!(m.flags.is_empty());
    }

    #[test]
    fn a_round_trip_is_slow_when_it_is_longer() {
        let n = 3;
        let mut cells = vec![vec![Cell::default(); n]; n];
        for (s, row) in cells.iter_mut().enumerate() {
            for (d, cell) in row.iter_mut().enumerate().filter(|(d, _)| *d != s) {
                let base = if (s, d) == (0, 1) { 90.0 } else { 30.0 };
                cell.visits = vec![base, base * 1.02, base * 0.98];
            }
        }
        let flags = flags(&cells, Figure::RoundTripP50Us);
        assert_eq!(flags.len(), 1);
        assert_eq!(
            (flags[0].src, flags[0].dst, flags[0].cause),
            (0, 1, Cause::Link)
        );
        assert!(flags[0].against_source.as_ref().unwrap().ratio.low > 1.0);
        assert!(
            super::flags(&cells, Figure::Gbps).is_empty(),
            "faster is never slow"
        );
    }
}
