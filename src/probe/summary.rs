//! The probe's arithmetic, kept apart from the measuring so it can be tested: minimum and
//! median over trials, batch timing, TSC frequency from two (tsc, CLOCK_MONOTONIC) pairs
//! (clock_gettime(2)), and copy bandwidth.
use std::time::Instant;

/// The cost of one operation: minimum and median over `trials`, each trial timing `batch`
/// back-to-back operations with CLOCK_MONOTONIC and dividing by `batch`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Timing {
    pub trials: usize,
    pub batch: usize,
    pub min_ns: f64,
    pub median_ns: f64,
}

/// Minimum and median of unsorted values (mean of the middle two for an even count); `None`
/// when there are none or any is NaN.
pub fn min_and_median(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    Some((sorted[0], median))
}

/// The median alone (see `min_and_median`).
pub fn median(values: &[f64]) -> Option<f64> {
    min_and_median(values).map(|(_, m)| m)
}

/// Times `trials` batches of `batch` calls to `op` and summarizes the per-call cost.
pub fn time_batches(trials: usize, batch: usize, mut op: impl FnMut()) -> Timing {
    let batch = batch.max(1);
    let per_call: Vec<f64> = (0..trials.max(1))
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                op();
            }
            start.elapsed().as_nanos() as f64 / batch as f64
        })
        .collect();
    timing(&per_call, batch).expect("at least one trial, no NaN")
}

/// A `Timing` from per-call costs already measured.
pub fn timing(per_call_ns: &[f64], batch: usize) -> Option<Timing> {
    let (min_ns, median_ns) = min_and_median(per_call_ns)?;
    Some(Timing {
        trials: per_call_ns.len(),
        batch,
        min_ns,
        median_ns,
    })
}

/// One reading of the TSC and CLOCK_MONOTONIC taken together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TscPair {
    pub tsc: u64,
    pub ns: u64,
}

/// TSC ticks per second between two pairs; `None` unless both counters moved forward.
pub fn tsc_hz(first: TscPair, second: TscPair) -> Option<f64> {
    let ticks = second.tsc.checked_sub(first.tsc)?;
    let ns = second.ns.checked_sub(first.ns)?;
    if ticks == 0 || ns == 0 {
        return None;
    }
    Some(ticks as f64 * 1e9 / ns as f64)
}

/// (max − min) / median in parts per million: how well repeated calibrations agree.
pub fn spread_ppm(values: &[f64]) -> Option<f64> {
    let m = median(values)?;
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    (m > 0.0).then(|| (max - min) / m * 1e6)
}

/// Decimal gigabytes per second for `bytes` moved in `ns` nanoseconds (bytes per ns = GB/s).
pub fn gb_per_s(bytes: u64, ns: f64) -> Option<f64> {
    (ns > 0.0).then(|| bytes as f64 / ns)
}

/// Binary gibibytes per second for `bytes` moved in `ns` nanoseconds.
pub fn gib_per_s(bytes: u64, ns: f64) -> Option<f64> {
    gb_per_s(bytes, ns).map(|g| g * 1e9 / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_an_odd_count_is_the_middle_value_of_unsorted_input() {
        assert_eq!(min_and_median(&[9.0, 1.0, 5.0]), Some((1.0, 5.0)));
    }

    #[test]
    fn median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(min_and_median(&[4.0, 1.0, 3.0, 2.0]), Some((1.0, 2.5)));
    }

    #[test]
    fn a_single_value_is_its_own_min_and_median() {
        assert_eq!(min_and_median(&[7.0]), Some((7.0, 7.0)));
    }

    #[test]
    fn no_values_or_a_nan_give_no_summary() {
        assert_eq!(min_and_median(&[]), None);
        assert_eq!(min_and_median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn tsc_frequency_is_ticks_over_elapsed_nanoseconds() {
        let a = TscPair {
            tsc: 1_000,
            ns: 5_000,
        };
        // 259.6 million ticks in 100 ms: 2.596 GHz.
        let b = TscPair {
            tsc: 1_000 + 259_600_000,
            ns: 5_000 + 100_000_000,
        };
        let hz = tsc_hz(a, b).unwrap();
        assert!((hz - 2.596e9).abs() < 1.0, "{hz}");
    }

    #[test]
    fn tsc_frequency_needs_both_counters_to_move_forward() {
        let a = TscPair { tsc: 10, ns: 10 };
        assert_eq!(tsc_hz(a, a), None);
        assert_eq!(tsc_hz(a, TscPair { tsc: 5, ns: 20 }), None);
        assert_eq!(tsc_hz(a, TscPair { tsc: 20, ns: 5 }), None);
    }

    #[test]
    fn spread_is_range_over_median_in_ppm() {
        let s = spread_ppm(&[1e9, 1e9 + 10.0, 1e9 - 10.0]).unwrap();
        assert!((s - 20e-3).abs() < 1e-9, "{s}");
    }

    #[test]
    fn roofline_bandwidth_is_bytes_over_time() {
        // 64 MiB in 5 ms: 13.42 GB/s, 12.5 GiB/s.
        let bytes = 64 << 20;
        assert!((gb_per_s(bytes, 5e6).unwrap() - 13.421_772_8).abs() < 1e-6);
        assert!((gib_per_s(bytes, 5e6).unwrap() - 12.5).abs() < 1e-9);
        assert_eq!(gb_per_s(bytes, 0.0), None);
    }

    #[test]
    fn batch_timing_counts_every_trial() {
        let mut calls = 0;
        let t = time_batches(5, 4, || calls += 1);
        assert_eq!(calls, 20);
        assert_eq!((t.trials, t.batch), (5, 4));
        assert!(t.min_ns <= t.median_ns);
    }
}
