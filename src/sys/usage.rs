//! Per-thread resource usage: getrusage(2) with RUSAGE_THREAD (CPU time, context switches,
//! page faults).
use super::cvt;
use std::io;
use std::time::Duration;

/// CPU time and context switches of the calling thread so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThreadUsage {
    pub user: Duration,
    pub system: Duration,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Page faults served without I/O (ru_minflt).
    #[serde(default)]
    pub minor_faults: u64,
    /// Page faults that waited for I/O (ru_majflt): a cold file read through a mapping.
    #[serde(default)]
    pub major_faults: u64,
}

impl ThreadUsage {
    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
        }
    }

    pub fn add(&mut self, other: &ThreadUsage) {
        self.user += other.user;
        self.system += other.system;
        self.voluntary_switches += other.voluntary_switches;
        self.involuntary_switches += other.involuntary_switches;
        self.minor_faults += other.minor_faults;
        self.major_faults += other.major_faults;
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::new(tv.tv_sec.max(0) as u64, (tv.tv_usec.max(0) as u32) * 1000)
}

/// Usage of the calling thread (RUSAGE_THREAD).
pub fn thread_usage() -> io::Result<ThreadUsage> {
    usage(libc::RUSAGE_THREAD)
}

/// CPU time, context switches and page faults of the whole calling process so far
/// (RUSAGE_SELF: every thread, including those that have exited).
pub fn process_usage() -> io::Result<ThreadUsage> {
    usage(libc::RUSAGE_SELF)
}

/// CPU time of the calling process's children that have ended and been waited for
/// (RUSAGE_CHILDREN): a forked side (`--processes`) once its run is over.
pub fn children_usage() -> io::Result<ThreadUsage> {
    usage(libc::RUSAGE_CHILDREN)
}

fn usage(who: i32) -> io::Result<ThreadUsage> {
    // SAFETY: rusage is plain old data.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    cvt(unsafe { libc::getrusage(who, &mut ru) })?;
    Ok(ThreadUsage {
        user: timeval(ru.ru_utime),
        system: timeval(ru.ru_stime),
        voluntary_switches: ru.ru_nvcsw.max(0) as u64,
        involuntary_switches: ru.ru_nivcsw.max(0) as u64,
        minor_faults: ru.ru_minflt.max(0) as u64,
        major_faults: ru.ru_majflt.max(0) as u64,
    })
}
