//! Thread scaling efficiency per mechanism: throughput at N threads / (N × throughput at 1
//! thread), at every size measured at both, with the ratio's 95 % interval where both points
//! were measured in visits (Welch's t on their log visit means: the two points sit in different
//! groups, so they were not visited back to back and are not paired).
use super::point::Point;
use super::{distinct, find, mechanism_rank, size_label, threads_label, Answer};
use crate::stats::quantile;
use crate::stats::visits::welch_ratio;

/// Efficiency of one mechanism at `threads` and one size.
#[derive(Debug, Clone, PartialEq)]
pub struct Efficiency {
    pub series: String,
    pub threads: f64,
    pub size: f64,
    pub efficiency: f64,
    /// (low, high) of the 95 % interval, where both points were measured in visits.
    pub interval: Option<(f64, f64)>,
}

/// Every efficiency the stream points allow.
pub fn efficiencies(points: &[&Point]) -> Vec<Efficiency> {
    let mut out = Vec::new();
    let series: Vec<String> = {
        let mut s: Vec<(usize, String)> = points
            .iter()
            .map(|p| (mechanism_rank(&p.mechanism), p.series()))
            .collect();
        s.sort();
        s.dedup();
        s.into_iter().map(|(_, name)| name).collect::<Vec<String>>()
    };
    for name in &series {
        for threads in distinct(points, |p| p.threads)
            .into_iter()
            .filter(|t| *t > 1.0)
        {
            for size in distinct(points, |p| p.size) {
                let (Some(one), Some(many)) = (
                    find(points, name, size, 1.0),
                    find(points, name, size, threads),
                ) else {
                    continue;
                };
                let (t1, tn) = (one.throughput_with_ci().0, many.throughput_with_ci().0);
                if t1 <= 0.0 {
                    continue;
                }
                let values = |p: &Point| -> Vec<f64> { p.visits.iter().map(|(_, v)| *v).collect() };
                out.push(Efficiency {
                    series: name.clone(),
                    threads,
                    size,
                    efficiency: tn / (threads * t1),
                    interval: welch_ratio(&values(many), &values(one))
                        .map(|r| (r.low / threads, r.high / threads)),
                });
            }
        }
    }
    out
}

fn summary_line(group: &[&Efficiency]) -> String {
    let mut values: Vec<f64> = group.iter().map(|e| e.efficiency).collect();
    values.sort_by(f64::total_cmp);
    let first = group[0];
    format!(
        "{} at {}: {:.0} % (median over {} sizes; {:.0} % at {} to {:.0} % at {})",
        first.series,
        threads_label(first.threads),
        quantile(&values, 0.5) * 100.0,
        group.len(),
        group[0].efficiency * 100.0,
        size_label(group[0].size),
        group[group.len() - 1].efficiency * 100.0,
        size_label(group[group.len() - 1].size),
    )
}

/// The efficiencies grouped by (series, thread count), in order of first appearance.
fn by_series_and_threads(all: &[Efficiency]) -> Vec<Vec<&Efficiency>> {
    let mut groups: Vec<Vec<&Efficiency>> = Vec::new();
    for e in all {
        match groups
            .iter_mut()
            .find(|g| g[0].series == e.series && g[0].threads == e.threads)
        {
            Some(g) => g.push(e),
            None => groups.push(vec![e]),
        }
    }
    groups
}

/// The report's answer: median efficiency per mechanism and thread count.
pub fn answer(points: &[&Point], online_cpus: Option<f64>) -> Answer {
    let question = "How well does each mechanism scale with threads?";
    let all = efficiencies(points);
    let rests_on = format!(
        "receiver throughput (the statistics mean where present) of {} pairs of stream points \
         at 1 and N threads of the same mechanism and size; efficiency = T(N) / (N × T(1))",
        all.len()
    );
    if all.is_empty() {
        return Answer {
            question,
            finding: "Cannot be said: the results hold no mechanism measured at both 1 thread \
                      and more threads at the same size."
                .into(),
            details: Vec::new(),
            rests_on,
            verdict: Some("cannot be said".into()),
        };
    }
    let groups = by_series_and_threads(&all);
    let details: Vec<String> = groups.iter().map(|g| summary_line(g)).collect();
    let top = all.iter().map(|e| e.threads).fold(0.0, f64::max);
    let at_top: Vec<String> = groups
        .iter()
        .filter(|g| g[0].threads == top)
        .map(|g| {
            let mut v: Vec<f64> = g.iter().map(|e| e.efficiency).collect();
            v.sort_by(f64::total_cmp);
            format!("{} {:.0} %", g[0].series, quantile(&v, 0.5) * 100.0)
        })
        .collect();
    let mut finding = format!(
        "Scaling efficiency at {} (median over sizes): {}.",
        threads_label(top),
        at_top.join(", ")
    );
    if let Some(cpus) = online_cpus.filter(|c| 2.0 * top > *c) {
        finding += &format!(
            " This machine has {cpus:.0} online CPUs and each thread of a flow has a peer on \
             the other side, so {:.0} threads share them: efficiency below 100 % is expected.",
            2.0 * top
        );
    }
    Answer {
        question,
        // Efficiencies are figures (with their intervals in the details), not a verdict.
        verdict: None,
        finding,
        details,
        rests_on,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{jsonl, Shape};

    #[test]
    fn efficiency_is_throughput_at_n_over_n_times_one_thread() {
        let d = parse(
            &jsonl(&[
                Shape::stream("copy", 4096, 1, 10.0),
                Shape::stream("copy", 4096, 2, 15.0),
            ]),
            "r",
        )
        .unwrap();
        let e = efficiencies(&d.completed());
        assert_eq!(e.len(), 1);
        assert!((e[0].efficiency - 0.75).abs() < 1e-9);
        let (lo, hi) = e[0].interval.unwrap();
        assert!(lo < 0.75 && 0.75 < hi);
        let a = answer(&d.completed(), Some(2.0));
        assert!(
            a.finding
                .starts_with("Scaling efficiency at 2 threads (median over sizes): copy 75 %"),
            "{}",
            a.finding
        );
        assert!(a.finding.contains("2 online CPUs"));
    }

    #[test]
    fn one_thread_count_only_cannot_be_said() {
        let d = parse(&jsonl(&[Shape::stream("copy", 4096, 1, 10.0)]), "r").unwrap();
        assert!(answer(&d.completed(), None)
            .finding
            .starts_with("Cannot be said"));
    }
}
