//! Latency histogram: hdrhistogram, bounded and preallocated so recording never allocates.
//! Serialized as its recorded (value, count) pairs, so a second process can send its own back.
use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// 1 ns .. 100 s at 3 significant digits (0.1 % error), allocated once per thread.
const LOWEST_NS: u64 = 1;
const HIGHEST_NS: u64 = 100_000_000_000;
const SIGFIG: u8 = 3;

pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

/// The summary every side reports.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
    pub mean: f64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let inner = Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGFIG)
            .expect("static histogram bounds are valid");
        LatencyHistogram { inner }
    }

    /// Records one sample; values outside the bounds are clamped, never dropped.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.inner.saturating_record(ns.max(LOWEST_NS));
    }

    /// Records `count` samples of the same value (a batch split evenly).
    #[inline]
    pub fn record_n(&mut self, ns: u64, count: u64) {
        self.inner.saturating_record_n(ns.max(LOWEST_NS), count);
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.inner.add(&other.inner);
    }

    pub fn summary(&self) -> Option<LatencySummary> {
        let h = &self.inner;
        if h.is_empty() {
            return None;
        }
        Some(LatencySummary {
            count: h.len(),
            min: h.min(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            max: h.max(),
            mean: h.mean(),
        })
    }
}

/// Each recorded bucket as (its highest equivalent value, count): recording that value again
/// lands in the same bucket, so the round trip keeps every percentile.
impl Serialize for LatencyHistogram {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.inner
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value())),
        )
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let pairs = Vec::<(u64, u64)>::deserialize(d)?;
        let mut h = LatencyHistogram::new();
        for (ns, count) in pairs {
            h.record_n(ns, count);
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_follow_recorded_values() {
        let mut h = LatencyHistogram::new();
        for v in 1..=1000 {
            h.record(v * 1000);
        }
        let s = h.summary().unwrap();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min, 1000);
        assert!((s.p50 as i64 - 500_000).abs() <= 500, "p50 {}", s.p50);
        assert!((s.p99 as i64 - 990_000).abs() <= 1000, "p99 {}", s.p99);
    }

    #[test]
    fn merged_histograms_count_both() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        a.record(10);
        b.record(1_000_000_000_000);
        a.merge(&b);
        let s = a.summary().unwrap();
        assert_eq!(s.count, 2);
        assert!(
            s.max >= HIGHEST_NS / 2,
            "out-of-range sample is clamped, not dropped"
        );
    }

    #[test]
    fn a_histogram_sent_as_json_keeps_its_summary() {
        let mut h = LatencyHistogram::new();
        for v in [1, 999, 1000, 1001, 55_555, 55_555, 7_000_000_000] {
            h.record(v);
        }
        h.record_n(123_456, 10);
        let text = serde_json::to_string(&h).unwrap();
        let back: LatencyHistogram = serde_json::from_str(&text).unwrap();
        assert_eq!(back.summary(), h.summary());
        let empty: LatencyHistogram = serde_json::from_str("[]").unwrap();
        assert_eq!(empty.summary(), None);
    }

    #[test]
    fn empty_histogram_has_no_summary() {
        assert!(LatencyHistogram::new().summary().is_none());
    }
}
