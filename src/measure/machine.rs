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

#[cfg(test)]
mod tests {
    use super::*;

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
