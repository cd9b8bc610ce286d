//! Clocks as this machine serves them: clock_getres(2) and the cost and smallest observed step
//! of clock_gettime(2) for four clocks, and the TSC — whether `rdtscp` exists, the
//! constant/nonstop flags, its frequency calibrated against CLOCK_MONOTONIC, one read's cost.
use super::summary::{median, min_and_median, spread_ppm, time_batches, tsc_hz, Timing, TscPair};
use super::Effort;
use crate::sys::clock::{self, clockid_t, Rdtscp};
use serde::Serialize;
use std::hint::black_box;
use std::time::{Duration, Instant};

const CLOCKS: [(&str, clockid_t); 4] = [
    ("CLOCK_REALTIME", clock::CLOCK_REALTIME),
    ("CLOCK_MONOTONIC", clock::CLOCK_MONOTONIC),
    ("CLOCK_MONOTONIC_RAW", clock::CLOCK_MONOTONIC_RAW),
    ("CLOCK_MONOTONIC_COARSE", clock::CLOCK_MONOTONIC_COARSE),
];

/// Back-to-back reads per timed batch (the batch's own two CLOCK_MONOTONIC reads add 1/BATCH).
const READS_PER_BATCH: usize = 256;

#[derive(Debug, Clone, Serialize)]
pub struct Clocks {
    pub clocks: Vec<ClockFigures>,
    pub tsc: TscFigures,
}

/// One clock: what the kernel says its resolution is, and what reading it shows.
#[derive(Debug, Clone, Serialize)]
pub struct ClockFigures {
    pub clock: &'static str,
    pub resolution_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution_ns_unavailable_reason: Option<String>,
    /// The smallest positive difference between consecutive reads.
    pub smallest_step_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smallest_step_ns_unavailable_reason: Option<String>,
    /// How many changes of value the smallest step was chosen from.
    pub steps_observed: u64,
    pub read_cost: Option<Timing>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_cost_unavailable_reason: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TscFigures {
    /// /sys/devices/system/clocksource/clocksource0/current_clocksource.
    pub clocksource: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clocksource_unavailable_reason: Option<String>,
    pub rdtscp_available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdtscp_unavailable_reason: Option<String>,
    pub constant_tsc: bool,
    pub nonstop_tsc: bool,
    pub tsc_known_freq: bool,
    /// Median of `frequency_calibrations` calibrations against CLOCK_MONOTONIC.
    pub frequency_hz: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_hz_unavailable_reason: Option<String>,
    pub frequency_calibrations: usize,
    pub frequency_interval_ms: u64,
    pub frequency_spread_ppm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_spread_ppm_unavailable_reason: Option<String>,
    /// /sys/devices/system/cpu/cpu0/tsc_freq_khz × 1000, where the kernel exports it.
    pub sysfs_frequency_hz: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sysfs_frequency_hz_unavailable_reason: Option<String>,
    pub rdtscp_cost: Option<Timing>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdtscp_cost_unavailable_reason: Option<String>,
    /// TSC ticks between two back-to-back `rdtscp`s.
    pub rdtscp_gap: Option<CycleGap>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdtscp_gap_unavailable_reason: Option<String>,
}

/// Differences between consecutive reads of a counter, in its own ticks, over `pairs` pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CycleGap {
    pub pairs: usize,
    pub min_cycles: f64,
    pub median_cycles: f64,
}

pub fn measure(effort: &Effort) -> Clocks {
    Clocks {
        clocks: CLOCKS
            .iter()
            .map(|&(name, id)| measure_clock(name, id, effort))
            .collect(),
        tsc: measure_tsc(effort),
    }
}

fn measure_clock(name: &'static str, id: clockid_t, effort: &Effort) -> ClockFigures {
    let mut figures = ClockFigures {
        clock: name,
        resolution_ns: None,
        resolution_ns_unavailable_reason: None,
        smallest_step_ns: None,
        smallest_step_ns_unavailable_reason: None,
        steps_observed: 0,
        read_cost: None,
        read_cost_unavailable_reason: None,
    };
    match clock::resolution_ns(id) {
        Ok(ns) => figures.resolution_ns = Some(ns),
        Err(e) => {
            let reason = format!("clock_getres: {e}");
            figures.smallest_step_ns_unavailable_reason = Some(reason.clone());
            figures.read_cost_unavailable_reason = Some(reason.clone());
            figures.resolution_ns_unavailable_reason = Some(reason);
            return figures;
        }
    }
    let (step, observed) = smallest_step(id, effort.step_budget);
    figures.steps_observed = observed;
    figures.smallest_step_ns = step;
    if step.is_none() {
        figures.smallest_step_ns_unavailable_reason = Some(format!(
            "the clock did not advance within {} ms",
            effort.step_budget.as_millis()
        ));
    }
    figures.read_cost = Some(time_batches(effort.trials, READS_PER_BATCH, || {
        black_box(clock::now_ns(black_box(id)));
    }));
    figures
}

/// Reads the clock back to back until it has changed `MAX_STEPS` times or `budget` is spent;
/// returns the smallest positive change and how many changes were seen.
fn smallest_step(id: clockid_t, budget: Duration) -> (Option<u64>, u64) {
    const MAX_STEPS: u64 = 20_000;
    let start = Instant::now();
    let mut previous = clock::now_ns(id);
    let (mut smallest, mut observed) = (None::<u64>, 0u64);
    'outer: loop {
        for _ in 0..64 {
            let now = clock::now_ns(id);
            if now > previous {
                let step = now - previous;
                smallest = Some(smallest.map_or(step, |s| s.min(step)));
                observed += 1;
                if observed >= MAX_STEPS {
                    break 'outer;
                }
            }
            previous = now;
        }
        if start.elapsed() >= budget {
            break;
        }
    }
    (smallest, observed)
}

/// The flags line of /proc/cpuinfo (the first CPU's; they agree on the machines we know).
pub fn cpu_flags() -> Vec<String> {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| parse_flags(&text))
        .unwrap_or_default()
}

fn parse_flags(cpuinfo: &str) -> Option<Vec<String>> {
    let line = cpuinfo.lines().find(|l| l.starts_with("flags"))?;
    let (_, flags) = line.split_once(':')?;
    Some(flags.split_whitespace().map(String::from).collect())
}

fn read_trimmed(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("the kernel exports no {path}"),
            _ => format!("{path}: {e}"),
        })
}

fn measure_tsc(effort: &Effort) -> TscFigures {
    let flags = cpu_flags();
    let has = |f: &str| flags.iter().any(|x| x == f);
    let clocksource =
        read_trimmed("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    let sysfs = read_trimmed("/sys/devices/system/cpu/cpu0/tsc_freq_khz").and_then(|s| {
        s.parse::<u64>()
            .map(|khz| khz * 1000)
            .map_err(|e| format!("tsc_freq_khz {s:?}: {e}"))
    });
    let mut figures = TscFigures {
        clocksource_unavailable_reason: clocksource.as_ref().err().cloned(),
        clocksource: clocksource.ok(),
        rdtscp_available: false,
        rdtscp_unavailable_reason: None,
        constant_tsc: has("constant_tsc"),
        nonstop_tsc: has("nonstop_tsc"),
        tsc_known_freq: has("tsc_known_freq"),
        frequency_hz: None,
        frequency_hz_unavailable_reason: None,
        frequency_calibrations: 0,
        frequency_interval_ms: effort.tsc_interval.as_millis() as u64,
        frequency_spread_ppm: None,
        frequency_spread_ppm_unavailable_reason: None,
        sysfs_frequency_hz_unavailable_reason: sysfs.as_ref().err().cloned(),
        sysfs_frequency_hz: sysfs.ok(),
        rdtscp_cost: None,
        rdtscp_cost_unavailable_reason: None,
        rdtscp_gap: None,
        rdtscp_gap_unavailable_reason: None,
    };
    match Rdtscp::detect() {
        Ok(tsc) => measure_rdtscp(tsc, effort, &mut figures),
        Err(reason) => {
            figures.frequency_hz_unavailable_reason = Some(reason.clone());
            figures.frequency_spread_ppm_unavailable_reason = Some(reason.clone());
            figures.rdtscp_cost_unavailable_reason = Some(reason.clone());
            figures.rdtscp_gap_unavailable_reason = Some(reason.clone());
            figures.rdtscp_unavailable_reason = Some(reason);
        }
    }
    figures
}

fn measure_rdtscp(tsc: Rdtscp, effort: &Effort, figures: &mut TscFigures) {
    figures.rdtscp_available = true;
    figures.rdtscp_cost = Some(time_batches(effort.trials, READS_PER_BATCH, || {
        black_box(tsc.read());
    }));
    figures.rdtscp_gap = rdtscp_gap(tsc, effort.trials * 5);
    let rates = calibrate(tsc, effort.tsc_calibrations, effort.tsc_interval);
    figures.frequency_calibrations = rates.len();
    figures.frequency_hz = median(&rates);
    figures.frequency_spread_ppm = spread_ppm(&rates);
    let no_rate = "no calibration saw both the TSC and CLOCK_MONOTONIC advance";
    if figures.frequency_hz.is_none() {
        figures.frequency_hz_unavailable_reason = Some(no_rate.into());
    }
    if figures.frequency_spread_ppm.is_none() {
        figures.frequency_spread_ppm_unavailable_reason = Some(no_rate.into());
    }
    if figures.rdtscp_gap.is_none() {
        figures.rdtscp_gap_unavailable_reason = Some("no pairs were read".into());
    }
}

/// The seeds' way to cost `rdtscp`: the difference between two reads in a row, many times.
fn rdtscp_gap(tsc: Rdtscp, pairs: usize) -> Option<CycleGap> {
    let gaps: Vec<f64> = (0..pairs)
        .map(|_| {
            let first = tsc.read();
            let second = tsc.read();
            second.wrapping_sub(first) as f64
        })
        .collect();
    let (min_cycles, median_cycles) = min_and_median(&gaps)?;
    Some(CycleGap {
        pairs,
        min_cycles,
        median_cycles,
    })
}

/// `count` frequencies, each from two (TSC, CLOCK_MONOTONIC) pairs `interval` apart.
fn calibrate(tsc: Rdtscp, count: usize, interval: Duration) -> Vec<f64> {
    (0..count)
        .filter_map(|_| {
            let first = pair(tsc);
            std::thread::sleep(interval);
            tsc_hz(first, pair(tsc))
        })
        .collect()
}

/// A TSC reading bracketed by two CLOCK_MONOTONIC reads, the tightest of five tries, with the
/// midpoint of the bracket as its time: an interrupt between the reads would skew one try.
fn pair(tsc: Rdtscp) -> TscPair {
    (0..5)
        .map(|_| {
            let before = clock::now_ns(clock::CLOCK_MONOTONIC);
            let ticks = tsc.read();
            let after = clock::now_ns(clock::CLOCK_MONOTONIC);
            (
                after - before,
                TscPair {
                    tsc: ticks,
                    ns: before + (after - before) / 2,
                },
            )
        })
        .min_by_key(|(bracket, _)| *bracket)
        .map(|(_, p)| p)
        .expect("five tries")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_flags_come_from_the_first_flags_line() {
        let text = "processor\t: 0\nflags\t\t: fpu tsc rdtscp constant_tsc\n\nflags\t: other\n";
        assert_eq!(
            parse_flags(text).unwrap(),
            ["fpu", "tsc", "rdtscp", "constant_tsc"]
        );
        assert_eq!(parse_flags("processor: 0\n"), None);
    }

    #[test]
    fn monotonic_advances_in_steps_no_larger_than_a_millisecond() {
        let (step, observed) = smallest_step(clock::CLOCK_MONOTONIC, Duration::from_millis(5));
        assert!(observed > 0);
        assert!(step.unwrap() < 1_000_000, "{step:?}");
    }
}
