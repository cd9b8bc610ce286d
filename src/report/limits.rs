//! The machine's own limits, from the probe a sweep records in `probe.json` (see
//! `bytepath probe`), and the figures set against them: throughput as a share of the
//! single-thread memcpy roofline, and CPU per message counted in raw system calls.
use super::Rows;
use crate::analysis::point::Point;
use crate::analysis::Dataset;
use crate::record::probe_view::ProbeView;

/// The two yardsticks the points table uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Best single-thread memcpy at the DRAM-sized buffer, GB/s (decimal).
    pub memcpy_gb_per_s: f64,
    /// Cheapest raw getpid(2), ns.
    pub syscall_ns: f64,
}

fn dram_bandwidth(probe: &ProbeView) -> Option<f64> {
    probe.dram()?.bandwidth?.best_gb_per_s.filter(|v| *v > 0.0)
}

pub fn limits(data: &Dataset) -> Option<Limits> {
    let probe = data.probe.as_ref()?;
    Some(Limits {
        memcpy_gb_per_s: dram_bandwidth(probe)?,
        syscall_ns: probe.getpid_min_ns().filter(|v| *v > 0.0)?,
    })
}

/// The "machine limits" block: what the probe measured, or why there is none.
pub fn machine_limits(data: &Dataset) -> Rows {
    let Some(probe) = data.probe.as_ref() else {
        return vec![(
            "probe".into(),
            "not recorded: this folder has no probe.json (sweeps record one before their first \
             point; run `bytepath probe` for this machine's figures)"
                .into(),
        )];
    };
    let ns = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.1} ns"));
    let clock = ns(probe.clock_read_min_ns("CLOCK_MONOTONIC"));
    vec![
        (
            "memcpy roofline".into(),
            match dram_bandwidth(probe) {
                Some(v) => format!(
                    "{v:.2} GB/s = {:.1} Gbit/s (one thread, 64 MiB, best trial): the ceiling \
                     for any path that copies each byte once",
                    v * 8.0
                ),
                None => "n/a".into(),
            },
        ),
        (
            "system call".into(),
            format!(
                "getpid {} (raw syscall, minimum)",
                ns(probe.getpid_min_ns())
            ),
        ),
        (
            "clock read".into(),
            format!("CLOCK_MONOTONIC {clock} per read (minimum)"),
        ),
    ]
}

/// Throughput as a share of the memcpy roofline.
pub fn roofline_share(p: &Point, limits: &Limits) -> Option<f64> {
    let gbps = p.headline.map_or(p.throughput_gbps, |s| s.mean);
    (p.headline_metric != "round_trips_per_s").then(|| gbps / 8.0 / limits.memcpy_gb_per_s)
}

/// CPU time per message (both sides) in units of one raw system call.
pub fn message_cost_in_syscalls(p: &Point, limits: &Limits) -> Option<f64> {
    Some(p.cpu_ns_per_byte()? * p.size / limits.syscall_ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{jsonl, Shape};
    use serde_json::{json, Value};

    fn with_probe(probe: Option<Value>) -> Dataset {
        let mut data = parse(&jsonl(&[Shape::stream("copy", 4096, 1, 16.0)]), "r").unwrap();
        data.probe = probe.map(|p| serde_json::from_value(p).unwrap());
        data
    }

    fn probe() -> Value {
        json!({
            "memcpy_roofline": {"points": [
                {"level": "dram", "bandwidth": {"best_gb_per_s": 10.0}},
                {"level": "l2", "bandwidth": {"best_gb_per_s": 50.0}}
            ]},
            "syscalls": {"getpid": {"min_ns": 100.0}},
            "clocks": {"clocks": [{"clock": "CLOCK_MONOTONIC", "read_cost": {"min_ns": 23.0}}]}
        })
    }

    #[test]
    fn throughput_is_set_against_the_dram_memcpy_roofline() {
        let data = with_probe(Some(probe()));
        let l = limits(&data).unwrap();
        assert_eq!(
            l,
            Limits {
                memcpy_gb_per_s: 10.0,
                syscall_ns: 100.0
            }
        );
        let share = roofline_share(&data.points[0], &l).unwrap();
        assert!(
            (share - 0.2).abs() < 0.01,
            "16 Gbit/s = 2 GB/s of 10: {share}"
        );
    }

    #[test]
    fn the_block_states_the_probe_figures_or_why_there_are_none() {
        let rows = machine_limits(&with_probe(Some(probe())));
        assert!(
            rows[0].1.starts_with("10.00 GB/s = 80.0 Gbit/s"),
            "{:?}",
            rows
        );
        assert!(rows[1].1.contains("getpid 100.0 ns"));
        assert!(rows[2].1.contains("23.0 ns"));
        let none = machine_limits(&with_probe(None));
        assert!(none[0].1.starts_with("not recorded"));
        assert!(limits(&with_probe(None)).is_none());
    }
}
