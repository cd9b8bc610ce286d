//! A point's statistics as the record states them. A point a study visited several times gets
//! its estimate and interval from the visit means (`basis: visits`); a single contiguous run
//! (`bytepath run`, one visit) states its per-slice interval and says that it covers that run
//! only. Either way the record says how the figure was computed, what each value is, and
//! whether perf counters were open while it was measured.
use super::visits::{summarize_visits, VISIT_METHOD};
use super::{summarize, tukey, Outliers, Summary};
use crate::config::{Pattern, RunSpec};
use crate::engine::phases::slice_values;
use crate::engine::SliceSeries;
use serde::{Deserialize, Serialize};

/// The method text of a single run's per-slice interval.
pub const SLICE_METHOD: &str = "per-slice values of one contiguous run; 95 % CI by Student's t \
     on the AR(1) effective sample size n(1-ρ)/(1+ρ); it describes this run only and does not \
     cover the regimes a shared machine moves between (a study's visits do)";

/// Where the values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// One value per slice of one contiguous run.
    Slices,
    /// One value per visit (each visit's mean), visits spread over the study.
    Visits,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointStatistics {
    pub basis: Basis,
    pub method: String,
    /// What each value is: receiver Gbit/s (stream) or client round trips/s (rr).
    pub metric: String,
    pub side: String,
    /// Slices: each slice's value; visits: each visit's mean.
    pub values: Vec<f64>,
    pub summary: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_unavailable_reason: Option<String>,
    pub ci_target_rel: Option<f64>,
    pub ci_target_met: Option<bool>,
    /// Why measuring ended: the run's own reason (fixed_duration, count_reached, max_time,
    /// interrupted, side_failed) or, for visits, ci_target_met / budget_spent / interrupted.
    pub stop_reason: String,
    /// Outliers among `values` (Tukey's fences; counted, never dropped).
    pub outliers: Outliers,
    pub slice_s: f64,
    /// Slices measured (over every visit, for visits): diagnostics of steadiness.
    pub slices: usize,
    /// Whether perf counters were open while these values were measured.
    pub counters_open: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visits: Option<VisitStatistics>,
}

/// How a visited point was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VisitStatistics {
    pub count: usize,
    pub min_visits: usize,
    pub visit_s: f64,
    pub warmup_s: f64,
    /// The round of each value in `values`: the key to pairing two mechanisms visited back to
    /// back in the same round.
    pub rounds: Vec<usize>,
    /// Between-visit spread: the standard deviation of the visit means over their mean.
    pub between_visit_cv: Option<f64>,
    /// Within-visit spread, for comparison: the mean over visits of their slices' coefficient
    /// of variation. Much smaller than the between-visit spread means the machine moved
    /// between visits, which one contiguous stretch would not have seen.
    pub within_visit_cv: Option<f64>,
    /// The round of the visit that opened perf counters (its figures are not in `values`).
    pub counters_round: Option<usize>,
    /// The seed the study's visit order was drawn from.
    pub seed: Option<u64>,
    /// Each visit's sending-side CPU time per payload byte (getrusage of its threads), in the
    /// order of `rounds`: what a paired CPU comparison of two mechanisms (the serialization
    /// answer) rests on. Absent in records from before it was kept, and where no visit had it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sender_cpu_ns_per_byte: Vec<Option<f64>>,
    /// Each visit's rr client latency p50 and p99 (ns), in the order of `rounds`: what the
    /// paired under-load answer rests on. Absent before it was kept, and for stream points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_latency_p50_ns: Vec<Option<f64>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_latency_p99_ns: Vec<Option<f64>>,
}

/// The metric and measured side a pattern's statistics follow.
pub fn headline_metric(pattern: Pattern) -> (&'static str, &'static str) {
    match pattern {
        Pattern::Stream => ("throughput_gbps", "receiver"),
        Pattern::Rr => ("round_trips_per_s", "client"),
        Pattern::Crr => ("transactions_per_s", "client"),
    }
}

/// The statistics of one contiguous run from its slices.
pub fn point_statistics(spec: &RunSpec, series: &SliceSeries) -> PointStatistics {
    let values = slice_values(spec.pattern, series.length, &series.bytes, &series.messages);
    let summary = summarize(&values);
    let reason = summary.is_none().then(|| {
        format!(
            "{} complete slice(s): a confidence interval needs at least 2",
            values.len()
        )
    });
    let (metric, side) = headline_metric(spec.pattern);
    PointStatistics {
        basis: Basis::Slices,
        method: SLICE_METHOD.into(),
        metric: metric.into(),
        side: side.into(),
        slice_s: series.length.as_secs_f64(),
        slices: values.len(),
        outliers: tukey(&values),
        ci_target_rel: None,
        ci_target_met: None,
        summary,
        summary_unavailable_reason: reason,
        values,
        stop_reason: series.stop.name().into(),
        counters_open: spec.counters != crate::measure::counters::CounterSelection::None,
        visits: None,
    }
}

/// One visit's contribution: its mean, its round, and its slices' spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VisitValue {
    pub round: usize,
    pub mean: f64,
    pub slices: usize,
    pub slice_cv: Option<f64>,
    /// The sending side's CPU time per payload byte in this visit (stream points).
    pub sender_cpu_ns_per_byte: Option<f64>,
    /// The rr client's latency p50 and p99 in this visit (ns; rr points).
    pub client_latency_ns: Option<(f64, f64)>,
}

/// What a study knows of a visited point beyond its visits.
#[derive(Debug, Clone, PartialEq)]
pub struct VisitPlan {
    pub min_visits: usize,
    pub visit_s: f64,
    pub warmup_s: f64,
    pub slice_s: f64,
    pub ci_target: Option<f64>,
    pub stop_reason: String,
    pub counters_round: Option<usize>,
    pub seed: Option<u64>,
}

/// The statistics of a visited point: estimate and interval from the visit means.
pub fn visit_statistics(
    pattern: Pattern,
    visits: &[VisitValue],
    plan: &VisitPlan,
) -> PointStatistics {
    let values: Vec<f64> = visits.iter().map(|v| v.mean).collect();
    let summary = summarize_visits(&values);
    let reason = summary.is_none().then(|| {
        format!(
            "{} visit(s): an interval from visit means needs at least 2",
            values.len()
        )
    });
    let (metric, side) = headline_metric(pattern);
    let cvs: Vec<f64> = visits.iter().filter_map(|v| v.slice_cv).collect();
    PointStatistics {
        basis: Basis::Visits,
        method: VISIT_METHOD.into(),
        metric: metric.into(),
        side: side.into(),
        outliers: tukey(&values),
        ci_target_rel: plan.ci_target,
        ci_target_met: plan
            .ci_target
            .map(|t| summary.is_some_and(|s| s.ci95_rel <= t)),
        stop_reason: plan.stop_reason.clone(),
        slice_s: plan.slice_s,
        slices: visits.iter().map(|v| v.slices).sum(),
        counters_open: false,
        visits: Some(VisitStatistics {
            count: values.len(),
            min_visits: plan.min_visits,
            visit_s: plan.visit_s,
            warmup_s: plan.warmup_s,
            rounds: visits.iter().map(|v| v.round).collect(),
            between_visit_cv: summary
                .filter(|s| s.mean != 0.0)
                .map(|s| s.stddev / s.mean.abs()),
            within_visit_cv: (!cvs.is_empty()).then(|| cvs.iter().sum::<f64>() / cvs.len() as f64),
            counters_round: plan.counters_round,
            seed: plan.seed,
            sender_cpu_ns_per_byte: if visits.iter().any(|v| v.sender_cpu_ns_per_byte.is_some()) {
                visits.iter().map(|v| v.sender_cpu_ns_per_byte).collect()
            } else {
                Vec::new()
            },
            client_latency_p50_ns: per_visit_latency(visits, |(p50, _)| p50),
            client_latency_p99_ns: per_visit_latency(visits, |(_, p99)| p99),
        }),
        summary,
        summary_unavailable_reason: reason,
        values,
    }
}

/// One latency percentile per visit, or nothing where no visit had a latency.
fn per_visit_latency(visits: &[VisitValue], pick: fn((f64, f64)) -> f64) -> Vec<Option<f64>> {
    match visits.iter().any(|v| v.client_latency_ns.is_some()) {
        true => visits
            .iter()
            .map(|v| v.client_latency_ns.map(pick))
            .collect(),
        false => Vec::new(),
    }
}

/// A stop reason in words, for tables and progress lines.
pub fn describe_stop(name: &str) -> &str {
    match name {
        "fixed_duration" => "fixed duration",
        "count_reached" => "message count reached",
        "max_time" => "maximum time reached",
        "side_failed" => "a side failed",
        "ci_target_met" => "CI target met",
        "budget_spent" => "budget spent before the CI target",
        "interrupted" => "interrupted",
        other => other,
    }
}

/// The coefficient of variation of one visit's slices (None with fewer than two).
pub fn slice_cv(values: &[f64]) -> Option<f64> {
    summarize(values)
        .filter(|s| s.mean != 0.0)
        .map(|s| s.stddev / s.mean.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> VisitPlan {
        VisitPlan {
            min_visits: 3,
            visit_s: 0.3,
            warmup_s: 0.1,
            slice_s: 0.1,
            ci_target: Some(0.02),
            stop_reason: "budget_spent".into(),
            counters_round: Some(3),
            seed: Some(9),
        }
    }

    #[test]
    fn visited_statistics_come_from_the_visit_means_and_keep_their_rounds() {
        let visits = [(0, 10.0), (1, 12.0), (2, 14.0)].map(|(round, mean)| VisitValue {
            round,
            mean,
            slices: 3,
            slice_cv: Some(0.01),
            sender_cpu_ns_per_byte: None,
            client_latency_ns: None,
        });
        let s = visit_statistics(Pattern::Stream, &visits, &plan());
        assert_eq!(
            (s.basis, s.metric.as_str()),
            (Basis::Visits, "throughput_gbps")
        );
        assert_eq!(s.values, vec![10.0, 12.0, 14.0]);
        let v = s.visits.as_ref().unwrap();
        assert_eq!((v.count, v.rounds.clone()), (3, vec![0, 1, 2]));
        assert!((s.summary.unwrap().ci95_half_width - 4.9687).abs() < 1e-3);
        assert!((v.between_visit_cv.unwrap() - 2.0 / 12.0).abs() < 1e-9);
        assert_eq!(v.within_visit_cv, Some(0.01));
        assert_eq!(
            (s.ci_target_met, s.slices, s.counters_open),
            (Some(false), 9, false)
        );
    }

    #[test]
    fn one_visit_has_no_interval_and_says_why() {
        let one = [VisitValue {
            round: 0,
            mean: 5.0,
            slices: 3,
            slice_cv: None,
            sender_cpu_ns_per_byte: None,
            client_latency_ns: None,
        }];
        let s = visit_statistics(Pattern::Rr, &one, &plan());
        assert!(s.summary.is_none());
        assert!(s.summary_unavailable_reason.unwrap().contains("at least 2"));
        assert_eq!(s.ci_target_met, Some(false));
    }

    #[test]
    fn the_statistics_block_reads_back_as_written() {
        let visits = [VisitValue {
            round: 4,
            mean: 1.5,
            slices: 2,
            slice_cv: Some(0.2),
            sender_cpu_ns_per_byte: None,
            client_latency_ns: None,
        }; 2];
        let s = visit_statistics(Pattern::Stream, &visits, &plan());
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<PointStatistics>(&text).unwrap(), s);
    }
}
