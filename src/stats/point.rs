//! A point's statistics as the record states them: the per-slice figure, its mean and 95 % CI,
//! whether the CI target was met (judged on the final, exact slice totals), why the measured
//! phase ended, and the outlier slices.
use super::{summarize, tukey, Outliers, Summary};
use crate::config::{Pattern, RunSpec};
use crate::engine::phases::{slice_values, StopReason, MIN_SLICES};
use crate::engine::SliceSeries;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PointStatistics {
    /// What each slice value is: receiver Gbit/s (stream) or client round trips/s (rr).
    pub metric: &'static str,
    pub side: &'static str,
    pub slice_s: f64,
    pub slices: usize,
    pub values: Vec<f64>,
    pub summary: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_unavailable_reason: Option<String>,
    pub ci_target_rel: Option<f64>,
    pub ci_target_met: Option<bool>,
    pub stop_reason: StopReason,
    pub outliers: Outliers,
    pub min_time_s: f64,
    pub max_time_s: f64,
}

pub fn point_statistics(spec: &RunSpec, series: &SliceSeries) -> PointStatistics {
    let values = slice_values(spec.pattern, series.length, &series.bytes, &series.messages);
    let summary = summarize(&values);
    let reason = match (&summary, values.len()) {
        (Some(_), _) => None,
        (None, n) => Some(format!(
            "{n} complete slice(s): a confidence interval needs at least 2 (the stopping rule waits for {MIN_SLICES})"
        )),
    };
    let target = spec.stopping.ci_target;
    let (metric, side) = match spec.pattern {
        Pattern::Stream => ("throughput_gbps", "receiver"),
        Pattern::Rr => ("round_trips_per_s", "client"),
    };
    PointStatistics {
        metric,
        side,
        slice_s: series.length.as_secs_f64(),
        slices: values.len(),
        outliers: tukey(&values),
        ci_target_rel: target,
        ci_target_met: target.map(|t| summary.is_some_and(|s| s.ci95_rel <= t)),
        summary,
        summary_unavailable_reason: reason,
        values,
        stop_reason: series.stop,
        min_time_s: spec.stopping.min_time.as_secs_f64(),
        max_time_s: spec.duration.as_secs_f64(),
    }
}
