//! `probe.json` (`bytepath probe --json`, and the probe a sweep records in its folder) as its
//! readers see it: the yardsticks the reports set figures against (the DRAM memcpy roofline,
//! a raw system call, a clock read, a wake-up), typed, each optional: a probe written before a
//! yardstick was measured lacks it, and one that could not be measured is `null`. The probe's
//! own types (`probe::Probe`) are written, never read back.
use serde::Deserialize;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ProbeView {
    pub memcpy_roofline: Option<RooflineView>,
    pub syscalls: Option<SyscallsView>,
    pub clocks: Option<ClocksView>,
    pub wakeups: Option<WakeupsView>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct RooflineView {
    pub points: Option<Vec<CopyPointView>>,
    /// The last-level cache the probe read (bytes).
    pub llc_bytes: Option<u64>,
    /// Bandwidth with 1, 2, 4 … N threads copying at once; absent in a probe written before
    /// the curve was measured.
    pub by_threads: Option<ThreadCurveView>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ThreadCurveView {
    pub allowed_cpus: Option<u64>,
    pub points: Option<Vec<ThreadsPointView>>,
}

/// One thread count of the curve: all its threads' bytes per second together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ThreadsPointView {
    pub threads: Option<u64>,
    pub aggregate: Option<BandwidthView>,
}

/// One buffer size of the roofline (`level`: `dram` or `l2`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CopyPointView {
    pub level: Option<String>,
    pub buffer_bytes: Option<u64>,
    pub bandwidth: Option<BandwidthView>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct BandwidthView {
    pub best_gb_per_s: Option<f64>,
    pub median_gb_per_s: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SyscallsView {
    pub getpid: Option<TimingView>,
}

/// An operation's cost over the trials (ns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TimingView {
    pub min_ns: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ClocksView {
    pub clocks: Option<Vec<ClockView>>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ClockView {
    pub clock: Option<String>,
    pub read_cost: Option<TimingView>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct WakeupsView {
    pub same_cpu_wakeup_ns: Option<f64>,
    pub cross_cpu_wakeup_ns: Option<f64>,
}

impl ProbeView {
    /// The roofline's DRAM point, where the probe has one.
    pub fn dram(&self) -> Option<&CopyPointView> {
        let points = self.memcpy_roofline.as_ref()?.points.as_ref()?;
        points.iter().find(|p| p.level.as_deref() == Some("dram"))
    }

    /// The curve as (threads, best aggregate GB/s), increasing in threads, of the counts that
    /// have a positive bandwidth; empty where the probe has no curve.
    pub fn thread_curve(&self) -> Vec<(u64, f64)> {
        let points = self
            .memcpy_roofline
            .as_ref()
            .and_then(|r| r.by_threads.as_ref()?.points.as_ref());
        let mut curve: Vec<(u64, f64)> = points
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let gb_per_s = p.aggregate?.best_gb_per_s.filter(|v| *v > 0.0)?;
                Some((p.threads.filter(|n| *n > 0)?, gb_per_s))
            })
            .collect();
        curve.sort_by_key(|(threads, _)| *threads);
        curve.dedup_by_key(|(threads, _)| *threads);
        curve
    }

    /// The cheapest raw getpid(2), ns.
    pub fn getpid_min_ns(&self) -> Option<f64> {
        self.syscalls.as_ref()?.getpid?.min_ns
    }

    /// The cheapest read of `clock` (`CLOCK_MONOTONIC`), ns.
    pub fn clock_read_min_ns(&self, clock: &str) -> Option<f64> {
        let clocks = self.clocks.as_ref()?.clocks.as_ref()?;
        let figures = clocks.iter().find(|c| c.clock.as_deref() == Some(clock))?;
        figures.read_cost?.min_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_yardsticks_read_from_a_probe_document_and_absent_ones_are_none() {
        let probe: ProbeView = serde_json::from_value(json!({
            "memcpy_roofline": {"points": [
                {"level": "l2", "buffer_bytes": 1024, "bandwidth": {"best_gb_per_s": 90.0}},
                {"level": "dram", "buffer_bytes": 67108864,
                 "bandwidth": {"best_gb_per_s": 12.0, "median_gb_per_s": 10.0}}]},
            "syscalls": {"getpid": {"min_ns": 50.0, "median_ns": 52.0}},
            "clocks": {"clocks": [{"clock": "CLOCK_MONOTONIC", "read_cost": null}]},
            "environment": {"hostname": "h"}
        }))
        .unwrap();
        let dram = probe.dram().unwrap();
        assert_eq!(dram.buffer_bytes, Some(64 << 20));
        assert_eq!(dram.bandwidth.unwrap().median_gb_per_s, Some(10.0));
        assert_eq!(probe.getpid_min_ns(), Some(50.0));
        assert_eq!(probe.clock_read_min_ns("CLOCK_MONOTONIC"), None);
        assert!(probe.wakeups.is_none());
        assert_eq!(probe.thread_curve(), [], "a probe from before the curve");
    }

    #[test]
    fn the_curve_reads_in_thread_order_without_unmeasured_counts() {
        let probe: ProbeView = serde_json::from_value(json!({
            "memcpy_roofline": {"by_threads": {"allowed_cpus": 8, "points": [
                {"threads": 4, "aggregate": {"best_gb_per_s": 30.0}},
                {"threads": 1, "aggregate": {"best_gb_per_s": 10.0, "median_gb_per_s": 9.0}},
                {"threads": 2, "aggregate": null, "aggregate_unavailable_reason": "no time"},
                {"threads": 8, "aggregate": {"best_gb_per_s": 40.0}}]}}
        }))
        .unwrap();
        assert_eq!(probe.thread_curve(), [(1, 10.0), (4, 30.0), (8, 40.0)]);
    }
}
