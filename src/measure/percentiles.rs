//! The percentiles a latency is reported at (`--percentiles`): a checked, sorted list, and
//! each one read from a side's whole histogram. The list is the command's choice of what to
//! show, not a property of what is measured, so it is not part of `RunSpec` (a resumed study
//! compares specs): the command sets it once for the process, before anything is measured.
use super::histogram::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Today's set, the fixed `p50 … p99_9` fields of every record.
pub const DEFAULT: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// More would not be read: the tables show one row or column each.
pub const MOST: usize = 16;

/// A list of percentiles, each in (0, 100], strictly rising, at most [`MOST`].
#[derive(Debug, Clone, PartialEq)]
pub struct Percentiles(Vec<f64>);

/// One percentile of a side's latency, read from its histogram.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileValue {
    pub percentile: f64,
    pub ns: u64,
}

impl Default for Percentiles {
    fn default() -> Self {
        Percentiles(DEFAULT.to_vec())
    }
}

impl Percentiles {
    /// `50,90,99,99.9` → the list; the error names the value and what is allowed (the caller
    /// adds the flag's name). Given unsorted, they are sorted; a repeat is refused.
    pub fn parse(text: &str) -> Result<Percentiles, String> {
        let allowed = format!(
            "allowed: up to {MOST} comma-separated percentiles, each above 0 and at most 100, such as 50,90,99,99.9"
        );
        let mut list = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            match part.parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 100.0 => list.push(p),
                _ => return Err(format!("{part:?} is not a percentile; {allowed}")),
            }
        }
        if list.len() > MOST {
            return Err(format!("{} percentiles given; {allowed}", list.len()));
        }
        list.sort_by(f64::total_cmp);
        if let Some(w) = list.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("{} is given twice; {allowed}", w[0]));
        }
        Ok(Percentiles(list))
    }

    pub fn as_slice(&self) -> &[f64] {
        &self.0
    }

    /// Each percentile of `h`, exactly `value_at_quantile(p / 100)`; empty for no samples.
    pub fn of(&self, h: &LatencyHistogram) -> Vec<PercentileValue> {
        if h.is_empty() {
            return Vec::new();
        }
        self.0
            .iter()
            .map(|&percentile| PercentileValue {
                percentile,
                ns: h.value_at_quantile(percentile / 100.0),
            })
            .collect()
    }
}

static CHOSEN: OnceLock<Percentiles> = OnceLock::new();

/// The command's `--percentiles`, set once before it measures; a second choice is ignored
/// (one process, one command).
pub fn choose(list: Percentiles) {
    let _ = CHOSEN.set(list);
}

/// The percentiles this process reports: the command's choice, or [`DEFAULT`].
pub fn chosen() -> Percentiles {
    CHOSEN.get().cloned().unwrap_or_default()
}

/// `p99.9`, `p50`, `p99.99`: a percentile as the tables and CSV headers name it.
pub fn label(p: f64) -> String {
    format!("p{p}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_list_is_checked_and_sorted() {
        let p = Percentiles::parse("99.99, 50,90").unwrap();
        assert_eq!(p.as_slice(), &[50.0, 90.0, 99.99]);
        assert_eq!(Percentiles::parse("100").unwrap().as_slice(), &[100.0]);
        assert_eq!(Percentiles::default().as_slice(), &DEFAULT);
        for bad in [
            "0", "-1", "100.1", "abc", "", "50,,90", "NaN", "inf", "50,50",
        ] {
            let e = Percentiles::parse(bad).unwrap_err();
            assert!(e.contains("allowed: up to 16"), "{bad}: {e}");
        }
        let many: Vec<String> = (1..=17).map(|i| i.to_string()).collect();
        assert!(Percentiles::parse(&many.join(","))
            .unwrap_err()
            .starts_with("17 percentiles given"));
    }

    #[test]
    fn labels_keep_the_decimals_given() {
        assert_eq!(label(99.9), "p99.9");
        assert_eq!(label(50.0), "p50");
        assert_eq!(label(99.99), "p99.99");
    }

    #[test]
    fn no_samples_no_percentiles() {
        assert!(Percentiles::default()
            .of(&LatencyHistogram::new())
            .is_empty());
    }

    proptest! {
        /// Each value is the histogram's own answer for that quantile, and the list rises.
        #[test]
        fn each_value_is_the_histograms_quantile(
            samples in proptest::collection::vec(1u64..50_000_000_000, 1..400),
            chosen in proptest::collection::btree_set(1u32..=100_000, 1..=MOST),
        ) {
            let mut h = LatencyHistogram::new();
            for s in &samples {
                h.record(*s);
            }
            let text: Vec<String> =
                chosen.iter().map(|m| (*m as f64 / 1000.0).to_string()).collect();
            let list = Percentiles::parse(&text.join(",")).unwrap();
            let values = list.of(&h);
            prop_assert_eq!(values.len(), chosen.len());
            for v in &values {
                prop_assert_eq!(v.ns, h.value_at_quantile(v.percentile / 100.0));
            }
            prop_assert!(values.windows(2).all(|w| w[0].ns <= w[1].ns));
            let last = values.last().unwrap();
            if last.percentile == 100.0 {
                prop_assert_eq!(last.ns, h.summary().unwrap().max);
            }
        }
    }
}
