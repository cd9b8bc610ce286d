//! ipc's families of tests, cell by cell, for answers.json: the fastest transport's pairs at
//! each size (one family per size) and the peak's steps between adjacent sizes (one family per
//! transport), each cell with its state and the interval its test used, as the sweep's
//! crossover cells are written.
use super::series::{at_size, name, series_names, FASTEST, PEAK};
use crate::analysis::point::Point;
use crate::analysis::separated::{leadership, steps, Rounds};
use crate::analysis::tested::{Cell, TestedAnswer};
use crate::analysis::{distinct, size_label, Dataset};

/// Why Holm: each family's answer ("the fastest", "the peak") is one claim resting on every
/// one of its tests, so any false test would make the answer false.
const WHY_HOLM: &str = "the answer is one claim resting on every test of its family, so the \
                        chance of any false test is what is held to 5 %";

/// Every family ipc's comparison answers test, in the report's order.
pub fn cells(data: &Dataset) -> Vec<TestedAnswer> {
    let margin = data.margin();
    let mut out = fastest(&data.completed_with_pattern("rr"), margin);
    out.extend(peak(&data.completed_with_pattern("stream"), margin));
    out
}

/// One family per size with two transports or more: each pair, the first over the second.
fn fastest(rr: &[&Point], margin: f64) -> Vec<TestedAnswer> {
    let mut out = Vec::new();
    for size in distinct(rr, |p| p.size) {
        let here = at_size(rr, size);
        if here.len() < 2 {
            continue;
        }
        let candidates: Vec<(String, Rounds)> =
            here.iter().map(|p| (name(p), p.visits.clone())).collect();
        let l = leadership(&candidates, true, margin);
        let cells = l
            .pairs
            .iter()
            .zip(&l.family.judged)
            .map(|(&(a, b), j)| {
                let what = format!(
                    "{} {} over {}",
                    size_label(size),
                    candidates[a].0,
                    candidates[b].0
                );
                Cell::new(what, j)
            })
            .collect();
        out.push(TestedAnswer::new(FASTEST, &l.family, WHY_HOLM, cells));
    }
    out
}

/// One family per transport at two sizes or more: each step, the larger size over the smaller.
fn peak(stream: &[&Point], margin: f64) -> Vec<TestedAnswer> {
    let mut out = Vec::new();
    for series in series_names(stream) {
        let mut points: Vec<&Point> = stream
            .iter()
            .filter(|p| name(p) == series)
            .copied()
            .collect();
        if points.len() < 2 {
            continue;
        }
        points.sort_by(|a, b| a.size.total_cmp(&b.size));
        let labels: Vec<String> = points.iter().map(|p| size_label(p.size)).collect();
        let named: Vec<(String, Rounds)> = points
            .iter()
            .zip(&labels)
            .map(|(p, l)| (l.clone(), p.visits.clone()))
            .collect();
        let s = steps(&named, margin);
        let cells = s
            .judged
            .iter()
            .enumerate()
            .filter_map(|(i, k)| {
                let what = format!("{series} {} over {}", labels[i + 1], labels[i]);
                k.map(|k| Cell::new(what, &s.family.judged[k]))
            })
            .collect();
        out.push(TestedAnswer::new(PEAK, &s.family, WHY_HOLM, cells));
    }
    out
}
