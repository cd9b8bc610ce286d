//! The copy roofline: single-thread memcpy(3) bandwidth (`copy_from_slice`) from DRAM and from
//! L2, and (`by_threads`, in roofline_threads.rs) beyond the caches with 1, 2, 4 … N threads at
//! once: the ceilings any copying mechanism is measured against. L2's size comes from
//! /sys/devices/system/cpu/cpu0/cache/index2 (Documentation/ABI/testing/sysfs-devices-system-cpu).
use super::copy_buffers::CopyBuffers;
use super::roofline_threads::{self, ThreadCurve, ThreadsPoint};
use super::summary::{gb_per_s, gib_per_s, timing, Timing};
use super::Effort;
use serde::Serialize;
use std::time::Instant;

/// The DRAM point when the last-level cache's size is unknown: beyond the LLC of the machines
/// we run on, small enough that a sweep (which records a probe) stays under 64 MiB.
pub const DRAM_BUFFER_BYTES: usize = 24 << 20;
/// The cache point when L2's size is unknown.
const FALLBACK_CACHE_BUFFER_BYTES: usize = 256 << 10;
/// A cache-point trial repeats the copy until it has moved at least this much.
const BYTES_PER_CACHE_TRIAL: usize = 8 << 20;

#[derive(Debug, Clone, Serialize)]
pub struct Roofline {
    pub method: &'static str,
    pub l2_cache_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2_cache_bytes_unavailable_reason: Option<String>,
    /// The last-level cache the DRAM point's buffers are sized against.
    pub llc_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llc_bytes_unavailable_reason: Option<String>,
    pub points: Vec<CopyPoint>,
    /// Bandwidth beyond the caches with 1, 2, 4 … N threads copying at once (`bytepath probe`
    /// and a study's probe.json; `run --profile`'s quick probe measures one thread only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_threads: Option<ThreadCurve>,
}

impl Roofline {
    /// The DRAM point's median bandwidth (GB/s) and its buffer size: the unit of a profile's
    /// "copies' worth", read as typed values by whoever measured the roofline.
    pub fn dram_median(&self) -> Result<(f64, u64), String> {
        let dram = self
            .points
            .iter()
            .find(|p| p.level == "dram")
            .ok_or("the memcpy roofline has no DRAM point")?;
        let gb_per_s = dram
            .bandwidth
            .map(|b| b.median_gb_per_s)
            .filter(|v| *v > 0.0)
            .ok_or("the DRAM memcpy point has no bandwidth")?;
        Ok((gb_per_s, dram.buffer_bytes))
    }
}

/// One buffer size: per-copy time over the trials and the bandwidth it means.
#[derive(Debug, Clone, Serialize)]
pub struct CopyPoint {
    /// `dram` or `l2`.
    pub level: &'static str,
    pub buffer_bytes: u64,
    /// Per copy of `buffer_bytes`; `batch` is the copies per trial.
    pub copy_time: Timing,
    pub bandwidth: Option<Bandwidth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_unavailable_reason: Option<String>,
}

/// Bytes copied per second: best is from the fastest trial, median from the median trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bandwidth {
    pub best_gb_per_s: f64,
    pub median_gb_per_s: f64,
    pub best_gib_per_s: f64,
    pub median_gib_per_s: f64,
}

impl Bandwidth {
    /// From the per-copy times of a buffer of `bytes`; `None` if a time is not positive.
    pub fn from_timing(bytes: u64, t: &Timing) -> Option<Bandwidth> {
        Some(Bandwidth {
            best_gb_per_s: gb_per_s(bytes, t.min_ns)?,
            median_gb_per_s: gb_per_s(bytes, t.median_ns)?,
            best_gib_per_s: gib_per_s(bytes, t.min_ns)?,
            median_gib_per_s: gib_per_s(bytes, t.median_ns)?,
        })
    }
}

/// Source and destination of the DRAM point together hold 1.5 × the last-level cache: a
/// stream through more than the cache holds misses on every line (measured here: 24 MiB
/// buffers copy within the run-to-run spread of 64 MiB ones), and a sweep's peak memory
/// stays low.
fn dram_buffer(llc: Option<u64>) -> usize {
    match llc {
        Some(bytes) => (bytes as usize * 3 / 4).max(8 << 20),
        None => DRAM_BUFFER_BYTES,
    }
}

/// The one-thread points and the curve over thread counts up to the `allowed` CPUs, one thread
/// pinned to each.
pub fn measure_with_threads(effort: &Effort, allowed: &[usize]) -> Roofline {
    let mut roofline = measure(effort);
    // The curve's one thread is the DRAM point: the same buffers and copy, measured once.
    let one = roofline.points.iter().find(|p| p.level == "dram").map(|p| {
        let bandwidth = p.bandwidth.map(|b| (b.best_gb_per_s, b.median_gb_per_s));
        ThreadsPoint::one_thread(p.buffer_bytes, p.copy_time.trials, bandwidth)
    });
    roofline.by_threads = Some(roofline_threads::measure(
        effort,
        allowed,
        (dram_buffer(roofline.llc_bytes), roofline.l2_cache_bytes),
        one,
    ));
    roofline
}

/// The one-thread points (DRAM-sized and L2-sized buffers).
pub fn measure(effort: &Effort) -> Roofline {
    let l2 = cache_bytes(2);
    let llc = cache_bytes(3);
    let cache_buffer = match &l2 {
        // Source and destination together take half of L2, so both stay resident.
        Ok(bytes) => (*bytes as usize / 4).max(4096),
        Err(_) => FALLBACK_CACHE_BUFFER_BYTES,
    };
    let cache_copies = BYTES_PER_CACHE_TRIAL.div_ceil(cache_buffer);
    Roofline {
        method: "copy_from_slice (memcpy), one thread, buffers written before timing, \
                 bandwidth = bytes copied / time (each byte read once and written once); the \
                 dram point's source and destination together hold 1.5 × the last-level cache",
        points: vec![
            copy_point(
                "dram",
                dram_buffer(llc.as_ref().ok().copied()),
                1,
                effort.dram_trials,
            ),
            copy_point("l2", cache_buffer, cache_copies, effort.cache_trials),
        ],
        l2_cache_bytes_unavailable_reason: l2.as_ref().err().cloned(),
        l2_cache_bytes: l2.ok(),
        llc_bytes_unavailable_reason: llc.as_ref().err().cloned(),
        llc_bytes: llc.ok(),
        by_threads: None,
    }
}

fn copy_point(level: &'static str, bytes: usize, copies: usize, trials: usize) -> CopyPoint {
    let mut buffers = CopyBuffers::new(bytes);
    let per_copy: Vec<f64> = (0..trials.max(1))
        .map(|_| {
            let start = Instant::now();
            buffers.copy(copies);
            start.elapsed().as_nanos() as f64 / copies as f64
        })
        .collect();
    let copy_time = timing(&per_copy, copies).expect("at least one trial");
    let bandwidth = Bandwidth::from_timing(bytes as u64, &copy_time);
    CopyPoint {
        level,
        buffer_bytes: bytes as u64,
        bandwidth_unavailable_reason: bandwidth
            .is_none()
            .then(|| "a trial took no measurable time".to_string()),
        bandwidth,
        copy_time,
    }
}

/// The size of CPU 0's cache of `level` from sysfs (index2 is L2, index3 L3 where present).
fn cache_bytes(level: u32) -> Result<u64, String> {
    let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{level}");
    let read = |name: &str| {
        std::fs::read_to_string(format!("{dir}/{name}"))
            .map(|s| s.trim().to_string())
            .map_err(|e| format!("{dir}/{name}: {e}"))
    };
    let found = read("level")?;
    if found != level.to_string() {
        return Err(format!("{dir} is a level-{found} cache, not L{level}"));
    }
    let size = read("size")?;
    parse_cache_size(&size).ok_or_else(|| format!("{dir}/size: cannot read {size:?}"))
}

/// Parses sysfs cache sizes such as `1024K`, `32M` or `512`.
fn parse_cache_size(text: &str) -> Option<u64> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    Some(n << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(level: &'static str, bytes: u64, median_ns: f64) -> CopyPoint {
        let copy_time = crate::probe::summary::Timing {
            trials: 3,
            batch: 1,
            min_ns: median_ns,
            median_ns,
        };
        CopyPoint {
            level,
            buffer_bytes: bytes,
            bandwidth: Bandwidth::from_timing(bytes, &copy_time),
            copy_time,
            bandwidth_unavailable_reason: None,
        }
    }

    /// The typed unit `run --profile` reads: the DRAM point's median, whichever point comes first.
    #[test]
    fn the_dram_median_is_read_from_the_dram_point() {
        let mut roofline = Roofline {
            method: "test",
            l2_cache_bytes: None,
            l2_cache_bytes_unavailable_reason: None,
            llc_bytes: None,
            llc_bytes_unavailable_reason: None,
            by_threads: None,
            points: vec![
                point("l2", 1 << 18, 10_000.0),
                point("dram", 24 << 20, 1_000_000.0),
            ],
        };
        let (gb_per_s, bytes) = roofline.dram_median().unwrap();
        assert_eq!(bytes, 24 << 20);
        assert!(
            (gb_per_s - (24u64 << 20) as f64 / 1e6).abs() < 1e-9,
            "{gb_per_s}"
        );
        roofline.points.pop();
        assert_eq!(
            roofline.dram_median().unwrap_err(),
            "the memcpy roofline has no DRAM point"
        );
    }

    #[test]
    fn the_dram_buffers_hold_one_and_a_half_llcs_together() {
        assert_eq!(dram_buffer(Some(32 << 20)), 24 << 20);
        assert_eq!(dram_buffer(Some(2 << 20)), 8 << 20, "at least 8 MiB each");
        assert_eq!(dram_buffer(None), DRAM_BUFFER_BYTES);
    }

    #[test]
    fn sysfs_cache_sizes_parse_with_their_suffix() {
        assert_eq!(parse_cache_size("1024K"), Some(1 << 20));
        assert_eq!(parse_cache_size("32M"), Some(32 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("1 MiB"), None);
        assert_eq!(parse_cache_size(""), None);
    }

    #[test]
    fn bandwidth_comes_from_the_fastest_and_the_median_copy() {
        let t = Timing {
            trials: 3,
            batch: 1,
            min_ns: 1e6,
            median_ns: 2e6,
        };
        let b = Bandwidth::from_timing(1 << 30, &t).unwrap();
        assert!((b.best_gib_per_s - 1000.0).abs() < 1e-9);
        assert!((b.median_gib_per_s - 500.0).abs() < 1e-9);
        assert!((b.best_gb_per_s - 1_073.741_824).abs() < 1e-9);
        let zero = Timing { min_ns: 0.0, ..t };
        assert_eq!(Bandwidth::from_timing(1, &zero), None);
    }

    #[test]
    fn a_small_copy_point_measures_a_positive_bandwidth() {
        let p = copy_point("l2", 64 << 10, 4, 3);
        assert_eq!(p.copy_time.trials, 3);
        assert!(p.bandwidth.unwrap().best_gb_per_s > 0.0);
    }
}
