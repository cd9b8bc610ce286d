//! A side's whole latency distribution in its record: the chosen percentiles
//! (`--percentiles`) and the histogram they are read from, encoded as HdrHistogram's tools
//! read it. A point's is its measured visits' samples together, so the percentiles of a point
//! are of all its samples (its fixed `p50 … p99_9` stay the median over visits).
use super::SideMetrics;
use crate::measure::histogram::LatencyHistogram;
use crate::measure::percentiles::{chosen, PercentileValue};

/// The chosen percentiles of `h` and its encoding; nothing where the side measured no latency.
pub(crate) fn of_side(
    h: &LatencyHistogram,
    measured: bool,
) -> (Vec<PercentileValue>, Option<String>) {
    if !measured || h.is_empty() {
        return (Vec::new(), None);
    }
    (chosen().of(h), Some(h.to_hdr_base64()))
}

/// A point's side: its visits' histograms merged, when every visit that measured a latency
/// kept its histogram (a visit written before histograms were kept leaves the point without
/// one rather than with part of its samples).
pub(crate) fn pool(point: &mut SideMetrics, visits: &[&SideMetrics]) {
    let mut all = LatencyHistogram::new();
    for v in visits.iter().filter(|v| v.latency_ns.is_some()) {
        match v
            .latency_histogram_hdr
            .as_deref()
            .map(LatencyHistogram::from_hdr_base64)
        {
            Some(Ok(h)) => all.merge(&h),
            _ => return,
        }
    }
    let (list, hdr) = of_side(&all, point.latency_ns.is_some());
    point.latency_percentiles_ns = list;
    point.latency_histogram_hdr = hdr;
}
