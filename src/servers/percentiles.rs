//! `--percentiles` in the servers study: each visit's record keeps the chosen percentiles of
//! its latency and the histogram they were read from (`record::distribution`); a point's are
//! read again from its completed visits' histograms merged (all its samples, as a run's point
//! has them), and the table shows those the study chose beyond its fixed p50, p99 and p99.9.
use crate::measure::histogram::LatencyHistogram;
use crate::measure::percentiles::{label, PercentileValue, DEFAULT};
use crate::record::distribution::LatencyDistribution;

/// The percentiles the table always shows, from the latency summary (means over visits).
const FIXED: [f64; 3] = [50.0, 99.0, 99.9];

/// A point's chosen percentiles from those of its completed visits that measured a latency:
/// the set they recorded, each read exactly from their histograms merged. None where such a
/// visit kept no histogram (a folder from before `--percentiles`): from part of the samples
/// they would be a guess.
pub(super) fn pool(visits: &[&LatencyDistribution]) -> LatencyDistribution {
    let Some(first) = visits.first() else {
        return LatencyDistribution::default();
    };
    let mut all = LatencyHistogram::new();
    for v in visits {
        match v
            .latency_histogram_hdr
            .as_deref()
            .map(LatencyHistogram::from_hdr_base64)
        {
            Some(Ok(h)) => all.merge(&h),
            _ => return LatencyDistribution::default(),
        }
    }
    if all.is_empty() {
        return LatencyDistribution::default();
    }
    LatencyDistribution {
        latency_percentiles_ns: first
            .latency_percentiles_ns
            .iter()
            .map(|v| PercentileValue {
                percentile: v.percentile,
                ns: all.value_at_quantile(v.percentile / 100.0),
            })
            .collect(),
        latency_histogram_hdr: Some(all.to_hdr_base64()),
    }
}

/// The percentiles the table shows beyond its fixed ones: those the study chose
/// (`--percentiles` other than today's set) that are not a column already.
pub(super) fn extra<'a>(points: impl Iterator<Item = &'a LatencyDistribution>) -> Vec<f64> {
    let mut chosen: Vec<f64> = points
        .flat_map(|d| d.latency_percentiles_ns.iter().map(|v| v.percentile))
        .collect();
    chosen.sort_by(f64::total_cmp);
    chosen.dedup();
    if chosen.is_empty() || chosen == DEFAULT {
        return Vec::new();
    }
    chosen.retain(|p| !FIXED.contains(p));
    chosen
}

/// A chosen percentile's column header: `p99.99 µs`.
pub(super) fn header(p: f64) -> String {
    format!("{} µs", label(p))
}

/// The latency at percentile `p`, in ns, where `d` has it.
pub(super) fn value(d: &LatencyDistribution, p: f64) -> Option<f64> {
    let v = d
        .latency_percentiles_ns
        .iter()
        .find(|v| v.percentile == p)?;
    Some(v.ns as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visit(samples: &[u64], chosen: &[f64]) -> LatencyDistribution {
        let mut h = LatencyHistogram::new();
        for &s in samples {
            h.record(s);
        }
        LatencyDistribution {
            latency_percentiles_ns: chosen
                .iter()
                .map(|&percentile| PercentileValue { percentile, ns: 0 })
                .collect(),
            latency_histogram_hdr: Some(h.to_hdr_base64()),
        }
    }

    #[test]
    fn a_point_reads_its_chosen_set_from_all_its_visits_samples() {
        let chosen = [50.0, 99.99];
        let a = visit(&[1000; 99], &chosen);
        let b = visit(&[1000, 900_000], &chosen);
        let point = pool(&[&a, &b]);
        let got: Vec<(f64, u64)> = point
            .latency_percentiles_ns
            .iter()
            .map(|v| (v.percentile, v.ns))
            .collect();
        let mut all = LatencyHistogram::new();
        for s in std::iter::repeat_n(1000, 100).chain([900_000]) {
            all.record(s);
        }
        let want = [
            (50.0, all.value_at_quantile(0.5)),
            (99.99, all.value_at_quantile(0.9999)),
        ];
        assert_eq!(got, want);
        assert!(want[1].1 > 800_000, "the tail is the one slow sample");
        assert_eq!(value(&point, 99.99), Some(want[1].1 as f64));
        assert_eq!(extra([&point].into_iter()), [99.99]);
        assert_eq!(header(99.99), "p99.99 µs");
    }

    #[test]
    fn a_visit_without_its_histogram_leaves_the_point_without_percentiles() {
        let mut old = visit(&[1000], &[50.0]);
        old.latency_histogram_hdr = None;
        let point = pool(&[&visit(&[1000], &[50.0]), &old]);
        assert_eq!(point, LatencyDistribution::default());
        let today = visit(&[1000], &DEFAULT);
        assert!(extra([&pool(&[&today])].into_iter()).is_empty());
    }
}
