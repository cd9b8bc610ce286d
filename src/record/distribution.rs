//! A side's whole latency distribution in its record: the chosen percentiles
//! (`--percentiles`) and the histogram they are read from, encoded as HdrHistogram's tools
//! read it. A point's is its measured visits' samples together, so the percentiles of a point
//! are of all its samples (its fixed `p50 … p99_9` stay the median over visits).
use super::SideMetrics;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::percentiles::{chosen, PercentileValue};
use serde::{Deserialize, Serialize};

/// A side's chosen percentiles and its whole histogram.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyDistribution {
    /// `--percentiles`: the chosen percentiles of this side's latency, each read exactly from
    /// `latency_histogram_hdr` (its value at quantile p/100); empty where no latency was
    /// measured and in records older than the list.
    #[serde(default)]
    pub latency_percentiles_ns: Vec<PercentileValue>,
    /// This side's whole latency histogram (a point's: its measured visits' samples together),
    /// as HdrHistogram's V2 deflate encoding in base64, the form its tools read; null where
    /// no latency was measured (the reason is beside `latency_ns`) and in older records.
    #[serde(default)]
    pub latency_histogram_hdr: Option<String>,
}

/// The chosen percentiles of `h` and its encoding; nothing where the side measured no latency.
pub(crate) fn of_side(h: &LatencyHistogram, measured: bool) -> LatencyDistribution {
    if !measured || h.is_empty() {
        return LatencyDistribution::default();
    }
    LatencyDistribution {
        latency_percentiles_ns: chosen().of(h),
        latency_histogram_hdr: Some(h.to_hdr_base64()),
    }
}

/// A point's side: its visits' histograms merged, when every visit that measured a latency
/// kept its histogram (a visit written before histograms were kept leaves the point without
/// one rather than with part of its samples).
pub(crate) fn pool(point: &mut SideMetrics, visits: &[&SideMetrics]) {
    let mut all = LatencyHistogram::new();
    for v in visits.iter().filter(|v| v.latency_ns.is_some()) {
        match v
            .distribution
            .latency_histogram_hdr
            .as_deref()
            .map(LatencyHistogram::from_hdr_base64)
        {
            Some(Ok(h)) => all.merge(&h),
            _ => return,
        }
    }
    point.distribution = of_side(&all, point.latency_ns.is_some());
}
