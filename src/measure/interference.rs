//! What else used the machine during a visit: per-CPU busy time from /proc/stat (proc(5)) on
//! the CPUs the run uses, minus this process's own CPU time (getrusage(2) RUSAGE_SELF), steal,
//! the run queue from /proc/loadavg, and CPU and memory pressure from /proc/pressure/*
//! (PSI, where the kernel has it). Read once before and once after a visit, never on the
//! per-message path.
use crate::sys::clock_ticks_per_second;
use crate::sys::usage::{children_usage, process_usage};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One reading of everything the block is made from.
#[derive(Debug, Clone)]
pub struct Sample {
    at: Instant,
    /// Ticks summed over the run's CPUs: user+nice+system, irq+softirq, steal.
    busy_ticks: u64,
    irq_ticks: u64,
    steal_ticks: u64,
    own_cpu_s: f64,
    cpu_pressure_us: Option<u64>,
    memory_pressure_us: Option<u64>,
}

/// The `interference` block of a visit record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interference {
    pub wall_s: f64,
    /// The CPUs the shares are taken of (the run's pinning).
    pub cpus: usize,
    /// CPU time others used on those CPUs (user+system, less this process's own), as a share
    /// of the CPUs' time: what `--quiet-threshold` is compared with.
    pub others_cpu_share: f64,
    /// Interrupt and softirq time on those CPUs, as a share; reported, not judged, because
    /// this process's own loopback traffic is received in softirq.
    pub irq_softirq_share: f64,
    /// Time the hypervisor ran someone else on those CPUs, as a share.
    pub steal_share: f64,
    /// Runnable tasks at the end of the visit (/proc/loadavg, fourth field).
    pub runnable: Option<u32>,
    /// Share of the visit some task waited for a CPU (/proc/pressure/cpu "some"); `None` where
    /// the kernel has no PSI.
    pub cpu_pressure_share: Option<f64>,
    /// Share of the visit some task stalled on memory (/proc/pressure/memory "some").
    pub memory_pressure_share: Option<f64>,
    pub threshold: f64,
    /// Others (plus steal) used more than `threshold` of the CPUs: the visit is made again.
    pub disturbed: bool,
}

impl Sample {
    /// Reads the machine now, for the CPUs in `cpus` (all CPUs when empty).
    pub fn take(cpus: &[usize]) -> Sample {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let (busy_ticks, irq_ticks, steal_ticks) = cpu_ticks(&stat, cpus);
        let cpu_s = |u: crate::sys::usage::ThreadUsage| (u.user + u.system).as_secs_f64();
        // A forked side (`--processes`) is reaped before the visit's second sample, so the
        // children's time counts as this run's own, not as others'.
        let own_cpu_s =
            process_usage().map(cpu_s).unwrap_or(0.0) + children_usage().map(cpu_s).unwrap_or(0.0);
        Sample {
            at: Instant::now(),
            busy_ticks,
            irq_ticks,
            steal_ticks,
            own_cpu_s,
            cpu_pressure_us: pressure_some_total("/proc/pressure/cpu"),
            memory_pressure_us: pressure_some_total("/proc/pressure/memory"),
        }
    }

    /// The block for the time between `self` (before) and `after`.
    pub fn until(&self, after: &Sample, cpus: usize, threshold: f64) -> Interference {
        let wall_s = after.at.duration_since(self.at).as_secs_f64().max(1e-9);
        let hz = clock_ticks_per_second() as f64;
        let capacity = wall_s * cpus.max(1) as f64;
        let ticks = |a: u64, b: u64| b.saturating_sub(a) as f64 / hz;
        let own = (after.own_cpu_s - self.own_cpu_s).max(0.0);
        let busy = ticks(self.busy_ticks, after.busy_ticks);
        let others_cpu_share = ((busy - own).max(0.0) / capacity).min(1.0);
        let steal_share = (ticks(self.steal_ticks, after.steal_ticks) / capacity).min(1.0);
        let share = |a: Option<u64>, b: Option<u64>| {
            Some((b?.saturating_sub(a?) as f64 / 1e6 / wall_s).min(1.0))
        };
        Interference {
            wall_s,
            cpus: cpus.max(1),
            others_cpu_share,
            irq_softirq_share: (ticks(self.irq_ticks, after.irq_ticks) / capacity).min(1.0),
            steal_share,
            runnable: runnable(),
            cpu_pressure_share: share(self.cpu_pressure_us, after.cpu_pressure_us),
            memory_pressure_share: share(self.memory_pressure_us, after.memory_pressure_us),
            threshold,
            disturbed: (others_cpu_share + steal_share).min(1.0) > threshold,
        }
    }
}

/// (user+nice+system, irq+softirq, steal) ticks summed over the per-CPU lines of `cpus`, or
/// the aggregate line when `cpus` is empty.
pub fn cpu_ticks(stat: &str, cpus: &[usize]) -> (u64, u64, u64) {
    let mut sums = (0, 0, 0);
    for line in stat.lines() {
        let mut fields = line.split_whitespace();
        let Some(name) = fields.next() else { continue };
        let wanted = match name.strip_prefix("cpu") {
            Some("") => cpus.is_empty(),
            Some(n) => n.parse::<usize>().is_ok_and(|n| cpus.contains(&n)),
            None => false,
        };
        if !wanted {
            continue;
        }
        let t: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
        let at = |i: usize| t.get(i).copied().unwrap_or(0);
        sums.0 += at(0) + at(1) + at(2);
        sums.1 += at(5) + at(6);
        sums.2 += at(7);
    }
    sums
}

/// The "some" line's total (µs) of a PSI file; `None` where the kernel has none.
fn pressure_some_total(path: &str) -> Option<u64> {
    parse_pressure_some(&std::fs::read_to_string(path).ok()?)
}

pub fn parse_pressure_some(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

fn runnable() -> Option<u32> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace()
        .nth(3)?
        .split('/')
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  10 0 10 100 0 1 1 2 0 0\n\
        cpu0 4 1 5 50 0 1 0 1 0 0\n\
        cpu1 6 0 5 50 0 0 1 1 0 0\n\
        intr 1 2 3\n";

    #[test]
    fn ticks_are_summed_over_the_run_cpus_only() {
        assert_eq!(cpu_ticks(STAT, &[0]), (10, 1, 1));
        assert_eq!(cpu_ticks(STAT, &[0, 1]), (21, 2, 2));
        assert_eq!(cpu_ticks(STAT, &[]), (20, 2, 2));
        assert_eq!(cpu_ticks(STAT, &[7]), (0, 0, 0));
    }

    #[test]
    fn pressure_reads_the_some_total() {
        let text = "some avg10=0.00 avg60=0.10 avg300=0.00 total=12345\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n";
        assert_eq!(parse_pressure_some(text), Some(12345));
        assert_eq!(parse_pressure_some("garbage"), None);
    }

    #[test]
    fn own_cpu_time_is_not_counted_as_others() {
        // This thread spins for 300 ms on CPU 0 alone: its own time must be taken off.
        let cpu = crate::sys::affinity::allowed_cpus().unwrap()[0];
        let block = std::thread::spawn(move || {
            crate::sys::affinity::pin_current_thread(cpu).unwrap();
            let before = Sample::take(&[cpu]);
            let start = Instant::now();
            while start.elapsed().as_millis() < 300 {
                std::hint::black_box(0u64);
            }
            before.until(&Sample::take(&[cpu]), 1, 0.5)
        })
        .join()
        .unwrap();
        // Our spin filled the CPU; anything others did is what remains. On a loaded machine
        // others may still show, but our own 300 ms must not: at most what others really used.
        assert!(block.others_cpu_share < 0.9, "{block:?}");
        assert!(block.wall_s >= 0.3);
    }
}
