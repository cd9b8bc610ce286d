//! The copy roofline per thread count: memcpy bandwidth beyond the caches with 1, 2, 4 … N
//! threads copying at once (N: the CPUs this process may run on, sched_getaffinity(2)). A point
//! of a study in which several threads copy at once is held against the aggregate of as many
//! threads: on a many-core machine one thread's memcpy is far below what the memory system
//! gives several.
use super::copy_buffers::CopyBuffers;
use super::summary::{gb_per_s, min_and_median};
use super::Effort;
use serde::Serialize;
use std::sync::Barrier;
use std::time::Instant;

/// Each thread's buffers when L2's size is unknown: at least this each, so one thread's source
/// and destination outgrow a private L2 of 1 MiB.
const FALLBACK_L2_BYTES: usize = 1 << 20;

const METHOD: &str = "copy_from_slice (memcpy) in 1, 2, 4 … N threads at once (N: the CPUs \
    this process may run on); one thread is the dram point (the same buffers and copy, on the \
    probing thread); with more, thread i is pinned to the i-th allowed CPU and each copies its \
    own source into its own destination, both written before timing; the threads of a trial \
    start together at a barrier and the trial's aggregate bandwidth is the bytes all threads \
    copied over the trial's wall time (first start to last end); each thread's source (and \
    destination) is the one-thread DRAM buffer divided by the thread count, no smaller than \
    L2, so all threads together still hold 1.5 × the shared last-level cache and one thread's \
    pair never fits its own L2";

/// The curve: one point per thread count, in increasing order.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadCurve {
    pub method: &'static str,
    /// How many CPUs this process may run on: the largest thread count measured.
    pub allowed_cpus: usize,
    pub points: Vec<ThreadsPoint>,
    /// How long the curve took to measure beyond its one thread (the DRAM point's figures).
    pub elapsed_s: f64,
}

/// One thread count: the aggregate over the trials and what it means per thread.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadsPoint {
    pub threads: usize,
    /// Each thread's source, and as much again its destination.
    pub buffer_bytes_per_thread: u64,
    pub trials: usize,
    pub aggregate: Option<ThreadsBandwidth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate_unavailable_reason: Option<String>,
    /// Why some thread ran unpinned (the CPU refused it); absent when every thread was pinned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinning_unavailable_reason: Option<String>,
}

/// All threads' bytes per second together (best: the fastest trial, median: the median trial),
/// and that divided by the thread count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ThreadsBandwidth {
    pub best_gb_per_s: f64,
    pub median_gb_per_s: f64,
    pub per_thread_best_gb_per_s: f64,
    pub per_thread_median_gb_per_s: f64,
}

/// 1, 2, 4 … below `cpus`, then `cpus` itself (a count that is no power of two included).
pub fn thread_counts(cpus: usize) -> Vec<usize> {
    let cpus = cpus.max(1);
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |c| c.checked_mul(2))
        .take_while(|&c| c < cpus)
        .collect();
    counts.push(cpus);
    counts
}

/// Each thread's source (and destination) bytes at `threads`: the one-thread DRAM buffer
/// shared out, so the working set of all threads stays 1.5 × the last-level cache (it is
/// shared) and peak memory stays that of one thread; no smaller than L2 (each core's own).
pub fn buffer_per_thread(dram: usize, l2: Option<u64>, threads: usize) -> usize {
    let floor = l2.map_or(FALLBACK_L2_BYTES, |b| b as usize);
    (dram / threads.max(1)).max(floor)
}

impl ThreadsPoint {
    /// The one-thread count from the DRAM point already measured: its buffer, trials and
    /// (best, median) bandwidth.
    pub fn one_thread(buffer_bytes: u64, trials: usize, bandwidth: Option<(f64, f64)>) -> Self {
        let aggregate = bandwidth.map(|(best, median)| ThreadsBandwidth {
            best_gb_per_s: best,
            median_gb_per_s: median,
            per_thread_best_gb_per_s: best,
            per_thread_median_gb_per_s: median,
        });
        ThreadsPoint {
            threads: 1,
            buffer_bytes_per_thread: buffer_bytes,
            trials,
            aggregate_unavailable_reason: aggregate
                .is_none()
                .then(|| "the DRAM point has no bandwidth".to_string()),
            aggregate,
            pinning_unavailable_reason: None,
        }
    }
}

/// The curve on `allowed` CPUs. `(dram, l2)`: the one-thread DRAM point's buffer (1.5 × the
/// last-level cache for source and destination together) and the L2 the probe read; `one`:
/// that point as the curve's one thread, measured here where there is none.
pub fn measure(
    effort: &Effort,
    allowed: &[usize],
    (dram, l2): (usize, Option<u64>),
    one: Option<ThreadsPoint>,
) -> ThreadCurve {
    let start = Instant::now();
    let points = thread_counts(allowed.len())
        .into_iter()
        .map(|threads| match (threads, &one) {
            (1, Some(one)) => one.clone(),
            _ => {
                let bytes = buffer_per_thread(dram, l2, threads);
                measure_threads(threads, allowed, bytes, effort.dram_trials.max(1))
            }
        })
        .collect();
    ThreadCurve {
        method: METHOD,
        allowed_cpus: allowed.len().max(1),
        points,
        elapsed_s: start.elapsed().as_secs_f64(),
    }
}

/// What one copying thread brings back: when each trial's copy started and ended, and why it
/// could not be pinned, if it could not.
type Spans = (Vec<(Instant, Instant)>, Option<String>);

fn measure_threads(threads: usize, allowed: &[usize], bytes: usize, trials: usize) -> ThreadsPoint {
    let barrier = Barrier::new(threads);
    let spans: Vec<Spans> = std::thread::scope(|s| {
        let copiers: Vec<_> = (0..threads)
            .map(|i| {
                let (barrier, cpu) = (&barrier, allowed.get(i).copied());
                s.spawn(move || copier(barrier, cpu, bytes, trials))
            })
            .collect();
        copiers
            .into_iter()
            .map(|c| c.join().expect("a copying thread does not panic"))
            .collect()
    });
    let pinning_unavailable_reason = spans.iter().find_map(|(_, why)| why.clone());
    let walls: Vec<f64> = (0..trials)
        .map(|t| trial_wall_ns(spans.iter().map(|(s, _)| s[t])))
        .collect();
    let aggregate = aggregate(threads, (threads * bytes) as u64, &walls);
    ThreadsPoint {
        threads,
        buffer_bytes_per_thread: bytes as u64,
        trials,
        aggregate_unavailable_reason: aggregate
            .is_none()
            .then(|| "a trial took no measurable time".to_string()),
        aggregate,
        pinning_unavailable_reason,
    }
}

/// One copying thread: pinned first, so its buffers are first touched on its own CPU, then one
/// copy per trial, each trial started with the others at the barrier.
fn copier(barrier: &Barrier, cpu: Option<usize>, bytes: usize, trials: usize) -> Spans {
    let pinned = cpu
        .map(|c| crate::sys::affinity::pin_current_thread(c).map_err(|e| format!("CPU {c}: {e}")));
    let mut buffers = CopyBuffers::new(bytes);
    let spans = (0..trials)
        .map(|_| {
            barrier.wait();
            let start = Instant::now();
            buffers.copy(1);
            (start, Instant::now())
        })
        .collect();
    (spans, pinned.and_then(Result::err))
}

/// A trial's wall time: from the first thread's start to the last thread's end.
fn trial_wall_ns(spans: impl Iterator<Item = (Instant, Instant)>) -> f64 {
    let (mut first, mut last): (Option<Instant>, Option<Instant>) = (None, None);
    for (start, end) in spans {
        first = Some(first.map_or(start, |f| f.min(start)));
        last = Some(last.map_or(end, |l| l.max(end)));
    }
    match (first, last) {
        (Some(f), Some(l)) => l.duration_since(f).as_nanos() as f64,
        _ => 0.0,
    }
}

/// The bandwidth of `bytes` copied by `threads` in each trial's wall time: `None` when a trial
/// took no measurable time.
fn aggregate(threads: usize, bytes: u64, walls_ns: &[f64]) -> Option<ThreadsBandwidth> {
    let (fastest, median) = min_and_median(walls_ns)?;
    let best = gb_per_s(bytes, fastest)?;
    let median = gb_per_s(bytes, median)?;
    Some(ThreadsBandwidth {
        best_gb_per_s: best,
        median_gb_per_s: median,
        per_thread_best_gb_per_s: best / threads as f64,
        per_thread_median_gb_per_s: median / threads as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn thread_counts_double_up_to_the_allowed_cpus_and_end_on_them() {
        assert_eq!(thread_counts(1), [1]);
        assert_eq!(thread_counts(2), [1, 2]);
        assert_eq!(thread_counts(6), [1, 2, 4, 6]);
        assert_eq!(thread_counts(16), [1, 2, 4, 8, 16]);
        assert_eq!(thread_counts(0), [1], "a process runs on one CPU at least");
    }

    #[test]
    fn buffers_shrink_with_the_threads_down_to_l2() {
        let dram = 24 << 20;
        assert_eq!(buffer_per_thread(dram, Some(2 << 20), 1), 24 << 20);
        assert_eq!(buffer_per_thread(dram, Some(2 << 20), 4), 6 << 20);
        assert_eq!(
            buffer_per_thread(dram, Some(2 << 20), 16),
            2 << 20,
            "L2 each"
        );
        assert_eq!(buffer_per_thread(dram, None, 64), FALLBACK_L2_BYTES);
    }

    #[test]
    fn a_trial_spans_the_first_start_to_the_last_end() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let wall = trial_wall_ns([(at(2), at(10)), (at(1), at(8)), (at(3), at(12))].into_iter());
        assert_eq!(wall, 11e6);
    }

    #[test]
    fn the_aggregate_is_all_threads_bytes_over_the_wall_time() {
        // 4 threads × 1 GB in 100 ms (fastest) and 200 ms (median of 100, 200, 400).
        let b = aggregate(4, 4_000_000_000, &[200e6, 100e6, 400e6]).unwrap();
        assert_eq!((b.best_gb_per_s, b.median_gb_per_s), (40.0, 20.0));
        assert_eq!(
            (b.per_thread_best_gb_per_s, b.per_thread_median_gb_per_s),
            (10.0, 5.0)
        );
        assert_eq!(aggregate(1, 1, &[0.0]), None);
    }

    #[test]
    fn the_curves_one_thread_is_the_dram_point_it_is_given() {
        let one = ThreadsPoint::one_thread(24 << 20, 20, Some((9.0, 8.0)));
        let b = one.aggregate.unwrap();
        assert_eq!(
            (b.per_thread_best_gb_per_s, b.per_thread_median_gb_per_s),
            (9.0, 8.0)
        );
        let curve = measure(&Effort::quick(), &[0], (24 << 20, None), Some(one));
        assert_eq!(curve.points.len(), 1);
        assert_eq!(curve.points[0].aggregate, Some(b));
        assert_eq!(curve.points[0].buffer_bytes_per_thread, 24 << 20);
        let none = ThreadsPoint::one_thread(1, 1, None);
        assert!(none.aggregate_unavailable_reason.is_some());
    }

    #[test]
    fn two_threads_measure_a_positive_aggregate() {
        let cpus = crate::sys::affinity::allowed_cpus().unwrap();
        let p = measure_threads(2, &cpus, 256 << 10, 3);
        assert_eq!((p.threads, p.trials), (2, 3));
        let b = p.aggregate.unwrap();
        assert!(b.best_gb_per_s >= b.median_gb_per_s && b.median_gb_per_s > 0.0);
        assert!((b.per_thread_best_gb_per_s * 2.0 - b.best_gb_per_s).abs() < 1e-9);
    }
}
