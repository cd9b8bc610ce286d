//! Machine-wide CPU time from /proc/stat (proc(5)). On loopback the receive path runs in
//! softirq context, which RUSAGE_THREAD does not always charge to the receiving thread.
use crate::sys::clock_ticks_per_second;

/// Aggregate "cpu" line of /proc/stat, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MachineCpu {
    pub user_s: f64,
    pub system_s: f64,
    pub softirq_s: f64,
    pub irq_s: f64,
    pub idle_s: f64,
}

impl MachineCpu {
    pub fn read() -> Option<MachineCpu> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        parse_proc_stat(&text, clock_ticks_per_second())
    }

    pub fn since(&self, earlier: &MachineCpu) -> MachineCpu {
        MachineCpu {
            user_s: self.user_s - earlier.user_s,
            system_s: self.system_s - earlier.system_s,
            softirq_s: self.softirq_s - earlier.softirq_s,
            irq_s: self.irq_s - earlier.irq_s,
            idle_s: self.idle_s - earlier.idle_s,
        }
    }
}

/// Parses the first ("cpu ") line: user nice system idle iowait irq softirq ...
pub fn parse_proc_stat(text: &str, ticks_per_s: u64) -> Option<MachineCpu> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    if ticks.len() < 7 {
        return None;
    }
    let s = |t: u64| t as f64 / ticks_per_s as f64;
    Some(MachineCpu {
        user_s: s(ticks[0] + ticks[1]),
        system_s: s(ticks[2]),
        idle_s: s(ticks[3] + ticks[4]),
        irq_s: s(ticks[5]),
        softirq_s: s(ticks[6]),
    })
}

/// Softirq time of each CPU so far, in seconds (the "cpuN" lines of /proc/stat), by CPU
/// number; `None` when /proc/stat cannot be read.
pub fn softirq_per_cpu() -> Option<Vec<(usize, f64)>> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    Some(parse_softirq_per_cpu(&text, clock_ticks_per_second()))
}

/// The seventh field (softirq) of every "cpuN" line.
pub fn parse_softirq_per_cpu(text: &str, ticks_per_s: u64) -> Vec<(usize, f64)> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let softirq: u64 = fields.nth(6)?.parse().ok()?;
            Some((cpu, softirq as f64 / ticks_per_s as f64))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softirq_is_read_per_cpu_and_the_aggregate_line_is_left_out() {
        let text = "cpu  100 20 300 4000 50 6 70 0 0 0\ncpu0 1 2 3 4 5 6 7 0 0 0\ncpu1 1 2 3 4 5 6 63 0\nintr 5\n";
        assert_eq!(parse_softirq_per_cpu(text, 100), vec![(0, 0.07), (1, 0.63)]);
    }

    #[test]
    fn parses_the_aggregate_cpu_line() {
        let text = "cpu  100 20 300 4000 50 6 70 0 0 0\ncpu0 1 2 3 4 5 6 7 0 0 0\n";
        let m = parse_proc_stat(text, 100).unwrap();
        assert_eq!(m.user_s, 1.2);
        assert_eq!(m.system_s, 3.0);
        assert_eq!(m.softirq_s, 0.7);
        assert_eq!(m.irq_s, 0.06);
    }

    #[test]
    fn rejects_a_truncated_line() {
        assert!(parse_proc_stat("cpu  1 2 3\n", 100).is_none());
    }
}
