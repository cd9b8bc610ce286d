//! results.jsonl text -> a `Dataset`. Every error is one line naming the file and the line, so
//! `bytepath report` can stop before it overwrites anything.
use super::point::{from_record, Point};
use super::{mechanism_rank, Dataset};
use crate::record::view::RunView;
use crate::record::ResultLine;

/// The records of a results file (read and schema-checked by `record::read_results_file`)
/// -> a `Dataset`; `file` names it in errors.
pub fn dataset(lines: Vec<ResultLine>, file: &str) -> Result<Dataset, String> {
    let mut data = Dataset::default();
    for line in lines {
        let number = line.line_number;
        let record: RunView = crate::record::read_as(&line.record)
            .map_err(|e| format!("{file} line {number}: not a run record ({e})"))?;
        let point =
            from_record(&record, number).map_err(|e| format!("{file} line {number}: {e}"))?;
        add_point(&mut data, point);
        data.records.push(record);
    }
    if data.records.is_empty() {
        return Err(format!(
            "{file} holds no records; run `bytepath sweep` to measure some"
        ));
    }
    // Stream before rr, then mechanisms in their usual order, threads, size.
    let order = |p: &Point| {
        (
            p.pattern != "stream",
            p.pattern.clone(),
            mechanism_rank(&p.mechanism),
            p.series(),
        )
    };
    data.points.sort_by(|a, b| {
        order(a)
            .cmp(&order(b))
            .then(a.threads.total_cmp(&b.threads))
            .then(a.size.total_cmp(&b.size))
    });
    Ok(data)
}

/// Synthetic results.jsonl text -> a `Dataset` (tests build their data this way).
#[cfg(test)]
pub fn parse(text: &str, file: &str) -> Result<Dataset, String> {
    let lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let record = serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1))?;
            Ok(ResultLine {
                line_number: i + 1,
                text: l.to_string(),
                record,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    dataset(lines, file)
}

/// A later record of the same point replaces the earlier one (a resumed sweep re-measures),
/// except that a failed or interrupted record never replaces a completed one.
fn add_point(data: &mut Dataset, point: Point) {
    let same = |p: &Point| {
        p.series() == point.series()
            && p.pattern == point.pattern
            && p.size == point.size
            && p.threads == point.threads
    };
    if let Some(old) = data.points.iter_mut().find(|p| same(p)) {
        if point.completed() || !old.completed() {
            *old = point;
        }
        data.superseded += 1;
    } else {
        data.points.push(point);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::synthetic::{jsonl, Shape};

    fn two_points() -> String {
        jsonl(&[
            Shape::stream("copy", 4096, 1, 10.0),
            Shape::stream("gather", 4096, 1, 12.0),
        ])
    }

    #[test]
    fn records_become_points_sorted_by_series() {
        let data = parse(&two_points(), "results.jsonl").unwrap();
        assert_eq!(data.points.len(), 2);
        assert_eq!(data.points[0].mechanism, "copy");
    }

    #[test]
    fn an_empty_file_is_an_error() {
        assert!(parse("\n\n", "r").unwrap_err().contains("no records"));
    }

    #[test]
    fn a_repeated_point_keeps_the_later_record() {
        let text = jsonl(&[
            Shape::stream("copy", 4096, 1, 10.0),
            Shape::stream("copy", 4096, 1, 11.0),
        ]);
        let data = parse(&text, "r").unwrap();
        assert_eq!((data.points.len(), data.superseded), (1, 1));
        assert_eq!(data.points[0].line, 2);
    }

    #[test]
    fn a_failed_record_never_replaces_a_completed_one() {
        let mut failed = Shape::stream("copy", 4096, 1, 0.0);
        failed.status = "failed";
        let done = Shape::stream("copy", 4096, 1, 10.0);
        for shapes in [[failed.clone(), done.clone()], [done, failed]] {
            let data = parse(&jsonl(&shapes), "r").unwrap();
            assert_eq!(data.points.len(), 1);
            assert!(data.points[0].completed());
        }
    }
}
