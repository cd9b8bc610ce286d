//! The machine a run happened on, recorded with every result so figures can be compared
//! honestly (kernel, CPU, counters available, the limits that shape zero copy).
use crate::measure::counters::{perf_event_paranoid, pmu_present};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub kernel_release: String,
    pub cpu_model: String,
    pub online_cpus: usize,
    /// CPUs this process may run on (affinity mask), as a list such as 0-1.
    pub allowed_cpus: String,
    pub pmu_available: bool,
    pub perf_event_paranoid: Option<i32>,
    pub running_as_root: bool,
    pub optmem_max_bytes: Option<u64>,
    pub tcp_wmem_max_bytes: Option<u64>,
    pub loopback_mtu: Option<u64>,
    pub clock: String,
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn read_number(path: &str) -> Option<u64> {
    read_trimmed(path)?.parse().ok()
}

impl Environment {
    pub fn detect(allowed_cpus: &[usize]) -> Environment {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        Environment {
            hostname: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_default(),
            kernel_release: crate::sys::kernel_release(),
            cpu_model,
            online_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            allowed_cpus: crate::config::format_cpu_list(allowed_cpus),
            pmu_available: pmu_present(),
            perf_event_paranoid: perf_event_paranoid(),
            running_as_root: crate::sys::is_root(),
            optmem_max_bytes: read_number("/proc/sys/net/core/optmem_max"),
            tcp_wmem_max_bytes: read_trimmed("/proc/sys/net/ipv4/tcp_wmem")
                .and_then(|t| t.split_whitespace().nth(2)?.parse().ok()),
            loopback_mtu: read_number("/sys/class/net/lo/mtu"),
            clock: "CLOCK_MONOTONIC via vDSO, read once per round trip (rr client) or per batch \
                    of up to 64 messages, 256 KiB at most (stream sides, rr server)"
                .into(),
        }
    }
}

/// Available memory from /proc/meminfo, in bytes.
pub fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_clock_text_states_the_batch_the_engine_stamps() {
        use crate::engine::batch::{MAX_BYTES, MAX_MESSAGES};
        let clock = super::Environment::detect(&[0]).clock;
        assert!(
            clock.contains(&format!("up to {MAX_MESSAGES} messages")),
            "{clock}"
        );
        assert!(
            clock.contains(&format!("{} KiB at most", MAX_BYTES >> 10)),
            "{clock}"
        );
    }
}
