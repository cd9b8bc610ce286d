//! What memory a run may count on here: the host's MemAvailable, and, inside a container with
//! a memory limit, what its cgroup (v2) has left below `memory.max` (a container sees the
//! host's MemAvailable, far above what it may use before the OOM killer ends it).
//! cgroups(7), Documentation/admin-guide/cgroup-v2.rst ("memory.max", "memory.current").
use std::path::Path;

/// Where this process's cgroup v2 files are in a container (its own cgroup namespace root).
const CGROUP: &str = "/sys/fs/cgroup";

/// The cgroup's memory limit and use, when it has a limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct CgroupMemory {
    pub(super) max: u64,
    pub(super) current: u64,
}

/// The limit under `dir`: `None` when memory.max is absent (no cgroup v2 memory controller
/// here) or says "max" (no limit).
pub(super) fn cgroup_memory(dir: &Path) -> Option<CgroupMemory> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let max = read("memory.max")?.trim().parse::<u64>().ok()?;
    let current = read("memory.current")
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or(0);
    Some(CgroupMemory { max, current })
}

/// The memory a run's buffers may use: MemAvailable, or less where the cgroup has less left.
pub(super) fn available() -> Option<u64> {
    let host = crate::environment::mem_available();
    let cgroup = cgroup_memory(Path::new(CGROUP)).map(|c| c.max.saturating_sub(c.current));
    match (host, cgroup) {
        (Some(h), Some(c)) => Some(h.min(c)),
        (h, c) => h.or(c),
    }
}

/// The start-up line saying what runs are held to.
pub(super) fn describe() -> String {
    match cgroup_memory(Path::new(CGROUP)) {
        Some(c) => format!(
            "memory: runs are held to this container's limit, {} MiB ({CGROUP}/memory.max; {} MiB in use now)",
            c.max >> 20,
            c.current >> 20
        ),
        None => format!(
            "memory: no cgroup memory limit here ({CGROUP}/memory.max is absent or says max); runs are held to the host's MemAvailable"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cgroup_limit_is_read_and_max_or_absent_means_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(cgroup_memory(dir.path()), None, "absent");
        std::fs::write(dir.path().join("memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_memory(dir.path()), None, "no limit");
        std::fs::write(dir.path().join("memory.max"), "1073741824\n").unwrap();
        std::fs::write(dir.path().join("memory.current"), "104857600\n").unwrap();
        assert_eq!(
            cgroup_memory(dir.path()),
            Some(CgroupMemory {
                max: 1 << 30,
                current: 100 << 20
            })
        );
    }
}
