//! The points table's `--percentiles` columns (sweep, ipc, `bytepath report`): where the study
//! chose a set other than today's, one column per chosen percentile beyond the table's own
//! latency p50 and p99, each point's read exactly from its whole histogram (its record's
//! `latency_percentiles_ns`, on the side its latency is from: rr's client, a stream's
//! receiver).
use crate::analysis::point::{from_record, Point};
use crate::analysis::Dataset;
use crate::measure::percentiles::{label, DEFAULT};
use crate::record::view::RunView;

/// The latency percentiles the points table shows already.
const SHOWN: [f64; 2] = [50.0, 99.0];

/// The record a point was read from: the last of its key and status (as the dataset keeps it).
fn record_of<'a>(data: &'a Dataset, p: &Point) -> Option<&'a RunView> {
    data.records.iter().rev().find(|r| {
        from_record(r, p.line)
            .is_ok_and(|q| q.key == p.key && q.series() == p.series() && q.status == p.status)
    })
}

/// A point's chosen percentiles (percentile, ns), from the side its latency is from.
fn chosen_of(data: &Dataset, p: &Point) -> Vec<(f64, u64)> {
    let Some(r) = record_of(data, p) else {
        return Vec::new();
    };
    let side = usize::from(p.pattern != "rr");
    let side = r.side(side).or_else(|| r.side(0));
    side.and_then(|s| s.latency_percentiles_ns.as_ref())
        .map(|list| list.iter().map(|v| (v.percentile, v.ns)).collect())
        .unwrap_or_default()
}

/// The columns' headers and, per point in table order, their cells ("n/a" where a point has
/// no such percentile); no column where every point has today's set or none.
pub fn columns(data: &Dataset) -> (Vec<String>, Vec<Vec<String>>) {
    let per_point: Vec<Vec<(f64, u64)>> = data.points.iter().map(|p| chosen_of(data, p)).collect();
    let mut chosen: Vec<f64> = per_point.iter().flatten().map(|(p, _)| *p).collect();
    chosen.sort_by(f64::total_cmp);
    chosen.dedup();
    if chosen.is_empty() || chosen == DEFAULT {
        return (Vec::new(), vec![Vec::new(); data.points.len()]);
    }
    chosen.retain(|p| !SHOWN.contains(p));
    let header = chosen
        .iter()
        .map(|&p| format!("latency {}", label(p)))
        .collect();
    let cells = per_point
        .iter()
        .map(|values| {
            chosen
                .iter()
                .map(|p| {
                    values
                        .iter()
                        .find(|(q, _)| q == p)
                        .map_or("n/a".into(), |(_, ns)| {
                            super::units::duration_ns(*ns as f64)
                        })
                })
                .collect()
        })
        .collect();
    (header, cells)
}

/// The points table's header and rows with the chosen columns appended.
pub fn with_columns(
    data: &Dataset,
    (header, rows): (Vec<&'static str>, Vec<Vec<String>>),
) -> (Vec<String>, Vec<Vec<String>>) {
    let (more, cells) = columns(data);
    let header = header.into_iter().map(String::from).chain(more).collect();
    let rows = rows
        .into_iter()
        .zip(cells)
        .map(|(mut row, more)| {
            row.extend(more);
            row
        })
        .collect();
    (header, rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{jsonl, Shape};

    fn data(chosen: &[(f64, u64)]) -> Dataset {
        let text = jsonl(&[Shape::stream("copy", 4096, 1, 10.0)]);
        let mut record: serde_json::Value =
            serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let list: Vec<serde_json::Value> = chosen
            .iter()
            .map(|(p, ns)| serde_json::json!({ "percentile": p, "ns": ns }))
            .collect();
        record["sides"][1]["latency_percentiles_ns"] = list.into();
        parse(&format!("{record}\n"), "r").unwrap()
    }

    #[test]
    fn a_chosen_tail_is_a_column_with_each_points_value() {
        let d = data(&[(50.0, 1000), (99.99, 250_000)]);
        let (header, cells) = columns(&d);
        assert_eq!(header, ["latency p99.99"]);
        assert_eq!(cells, [[crate::report::units::duration_ns(250_000.0)]]);
        let (header, rows) = with_columns(&d, crate::report::summary::table(&d));
        assert_eq!(header.last().map(String::as_str), Some("latency p99.99"));
        assert_eq!(rows[0].len(), header.len());
    }

    #[test]
    fn todays_set_adds_no_column() {
        let today: Vec<(f64, u64)> = DEFAULT.iter().map(|&p| (p, 1000)).collect();
        let (header, cells) = columns(&data(&today));
        assert!(header.is_empty() && cells == [Vec::<String>::new()]);
    }
}
