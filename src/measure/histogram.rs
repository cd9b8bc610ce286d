//! Latency histogram: hdrhistogram, bounded and preallocated so recording never allocates.
//! Serialized as its recorded (value, count) pairs, so a second process can send its own back.
use hdrhistogram::serialization::{
    Deserializer as HdrReader, Serializer as _, V2DeflateSerializer,
};
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

/// One recorded bucket: every value from `low_ns` to `high_ns` counts as the same value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub low_ns: u64,
    pub high_ns: u64,
    pub count: u64,
}

/// The whole distribution in the forms other tools read: HdrHistogram's own encoding, the
/// buckets, any quantile. None of it runs on the per-message path (a side's record is built
/// after its window closes).
impl LatencyHistogram {
    /// Samples recorded.
    pub fn len(&self) -> u64 {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The value at quantile `q` (0..=1), exactly as HdrHistogram answers it.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        self.inner.value_at_quantile(q)
    }

    /// The histogram itself, for the writers of HdrHistogram's interval log.
    pub fn hdr(&self) -> &Histogram<u64> {
        &self.inner
    }

    /// Each recorded bucket, lowest first.
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        self.inner.iter_recorded().map(|v| {
            let at = v.value_iterated_to();
            Bucket {
                low_ns: self.inner.lowest_equivalent(at),
                high_ns: self.inner.highest_equivalent(at),
                count: v.count_at_value(),
            }
        })
    }

    /// HdrHistogram's V2 compressed encoding (deflate) in base64: the form its tools and the
    /// "histogram" column of its interval logs carry, so a record keeps the whole distribution.
    pub fn to_hdr_base64(&self) -> String {
        use base64::Engine as _;
        let mut bytes = Vec::new();
        // Writing into a Vec cannot fail, and our bounds are ones the encoding holds.
        V2DeflateSerializer::new()
            .serialize(&self.inner, &mut bytes)
            .expect("a bounded u64 histogram encodes into memory");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Reads back what [`to_hdr_base64`](Self::to_hdr_base64) wrote (or any V2 histogram
    /// within 1 ns .. 100 s); the error says what was wrong with the text.
    pub fn from_hdr_base64(text: &str) -> Result<LatencyHistogram, String> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| format!("not base64: {e}"))?;
        let read: Histogram<u64> = HdrReader::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("not an HdrHistogram V2 encoding: {e:?}"))?;
        let mut h = LatencyHistogram::new();
        h.inner
            .add(&read)
            .map_err(|e| format!("outside 1 ns .. 100 s: {e:?}"))?;
        Ok(h)
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
    fn the_hdr_encoding_reads_back_every_bucket() {
        let mut h = LatencyHistogram::new();
        for v in [1, 999, 1000, 1001, 55_555, 55_555, 7_000_000_000] {
            h.record(v);
        }
        h.record_n(123_456, 10);
        let back = LatencyHistogram::from_hdr_base64(&h.to_hdr_base64()).unwrap();
        assert_eq!(back.len(), 17);
        assert_eq!(
            back.buckets().collect::<Vec<_>>(),
            h.buckets().collect::<Vec<_>>()
        );
        assert!(LatencyHistogram::from_hdr_base64("not base64!").is_err());
        assert!(LatencyHistogram::from_hdr_base64("aGVsbG8=").is_err());
    }

    #[test]
    fn buckets_cover_their_values_and_count_every_sample() {
        let mut h = LatencyHistogram::new();
        for v in [5, 5, 1_000_001, 77_777_777] {
            h.record(v);
        }
        let buckets: Vec<Bucket> = h.buckets().collect();
        assert_eq!(buckets.iter().map(|b| b.count).sum::<u64>(), 4);
        assert_eq!(
            buckets[0],
            Bucket {
                low_ns: 5,
                high_ns: 5,
                count: 2
            }
        );
        assert!(buckets[1].low_ns <= 1_000_001 && 1_000_001 <= buckets[1].high_ns);
        assert!(buckets.windows(2).all(|w| w[0].high_ns < w[1].low_ns));
    }

    #[test]
    fn empty_histogram_has_no_summary() {
        assert!(LatencyHistogram::new().summary().is_none());
    }
}
