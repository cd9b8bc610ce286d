//! What a mesh's records say: per point, an N×N matrix of cells (source row, destination
//! column), each the visits of that pair with the mean and 95 % CI of its visit means
//! (`stats::visits::summarize_visits`), and the pairs significantly slower than the other pairs
//! of their two hosts. A pair is flagged when Welch's 95 % interval of the ratio of its visit
//! means to the pooled visit means of every other pair that shares its source or destination
//! (`stats::visits::welch_ratio`, on the log scale) lies wholly on the slow side of 1: below 1
//! for Gbit/s, above 1 for round-trip time. No overlap of two intervals is used as a test.
use crate::stats::visits::{summarize_visits, welch_ratio, RatioInterval};
use crate::stats::Summary;
use serde_json::Value;

/// How a pair is judged slow, as the report states it.
pub const FLAG_METHOD: &str = "a pair is flagged slow when the 95 % interval of the ratio of its visit means to the pooled visit means of every other pair sharing its source or destination host (Welch's t on the log visit means, Welch–Satterthwaite degrees of freedom) lies wholly below 1 for Gbit/s, or wholly above 1 for round-trip time";

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
    /// Runs of this cell that failed (or were interrupted), and the last reason given.
    pub failed: usize,
    pub reason: Option<String>,
}

/// A pair significantly slower than its hosts' other pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    pub src: usize,
    pub dst: usize,
    /// This pair's visit means over the pooled others' (geometric means), with its interval.
    pub ratio: RatioInterval,
    /// Geometric mean of the pooled visit means of the other pairs.
    pub reference: f64,
    /// Median of those pairs' cell means (for the reader: "the median of the other pairs").
    pub reference_median: f64,
    pub reference_pairs: usize,
    pub reference_visits: usize,
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
}

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
                cell.reason = record["errors"][0].as_str().map(String::from);
            }
        }
    }
    for matrix in &mut out {
        for cell in matrix.cells.iter_mut().flatten() {
            cell.summary = summarize_visits(&cell.visits);
        }
        matrix.flags = flags(&matrix.cells, matrix.figure);
    }
    out
}

/// The pairs slower than the pooled visits of the other pairs sharing a host with them.
pub fn flags(cells: &[Vec<Cell>], figure: Figure) -> Vec<Flag> {
    let n = cells.len();
    let mut out = Vec::new();
    for src in 0..n {
        for dst in (0..n).filter(|&d| d != src) {
            let pair = &cells[src][dst].visits;
            let others: Vec<&Cell> = (0..n)
                .flat_map(|x| (0..n).map(move |y| (x, y)))
                .filter(|&(x, y)| x != y && (x, y) != (src, dst))
                .filter(|&(x, y)| [x, y].iter().any(|h| *h == src || *h == dst))
                .map(|(x, y)| &cells[x][y])
                .filter(|c| !c.visits.is_empty())
                .collect();
            let pooled: Vec<f64> = others.iter().flat_map(|c| c.visits.clone()).collect();
            let Some(ratio) = welch_ratio(pair, &pooled) else {
                continue;
            };
            let slow = if figure.higher_is_better() {
                ratio.high < 1.0
            } else {
                ratio.low > 1.0
            };
            if slow {
                let mut means: Vec<f64> = others.iter().map(|c| mean(&c.visits)).collect();
                means.sort_by(f64::total_cmp);
                out.push(Flag {
                    src,
                    dst,
                    ratio,
                    reference: geometric_mean(&pooled),
                    reference_median: median(&means),
                    reference_pairs: others.len(),
                    reference_visits: pooled.len(),
                });
            }
        }
    }
    out
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
        let f = &m.flags[0];
        assert!(f.ratio.high < 1.0 && f.reference_pairs == 9 && f.reference_visits == 27);
        // a→d's others: 4 fast pairs of a and 5 slow ones of d; the median is a slow one.
        assert!((f.reference_median - 2.06).abs() < 1e-9, "{f:?}");
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
        assert_eq!((flags[0].src, flags[0].dst), (0, 1));
        assert!(flags[0].ratio.low > 1.0);
        assert!(
            super::flags(&cells, Figure::Gbps).is_empty(),
            "faster is never slow"
        );
    }
}
