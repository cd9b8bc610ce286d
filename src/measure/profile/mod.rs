//! Where a side's CPU goes: sampling its threads with perf_event_open(2) (`cycles` where a PMU
//! exists, software `cpu-clock` otherwise), naming the samples (kallsyms, ELF symbols) and
//! charging them to categories (copies, protocol, memory, locks, scheduling …), each share with
//! a 95 % interval. A profile that cannot be taken says why; it is never a row of zeros.
//!
//! ```no_run
//! # use bytepath::measure::profile::{self, SamplerSettings};
//! let tids = profile::process_threads(std::process::id()).unwrap();
//! let running = profile::start(&tids, &SamplerSettings::default()).unwrap();
//! // … the window …
//! let profile = running.stop();
//! ```
pub(crate) mod batches;
pub(crate) mod block;
pub(crate) mod breakdown;
pub(crate) mod categories;
pub(crate) mod demangle;
pub(crate) mod elf;
pub(crate) mod kallsyms;
pub(crate) mod sampler;
pub(crate) mod symbolize;
pub(crate) mod symtab;

pub use block::{CategoryShare, CopiesPerByte, ProfileBlock, Skew, SymbolCount};
pub use breakdown::{BlockMeta, Charger, NamedSample, Tally};
pub use categories::{Category, Space};
pub use sampler::SamplerSettings;
pub use symbolize::Symbolizer;

use sampler::{ThreadSampler, Window};

/// A side's profile over one window, or why there is none.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Profile {
    Measured(Box<ProfileBlock>),
    Unavailable { reason: String },
}

impl Profile {
    pub fn block(&self) -> Option<&ProfileBlock> {
        match self {
            Profile::Measured(b) => Some(b),
            Profile::Unavailable { .. } => None,
        }
    }

    pub fn unavailable_reason(&self) -> Option<&str> {
        match self {
            Profile::Measured(_) => None,
            Profile::Unavailable { reason } => Some(reason),
        }
    }
}

/// Why sampling could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub reason: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "profile unavailable: {}", self.reason)
    }
}

/// Sampling in progress over one side's threads.
pub struct RunningProfile {
    sampler: ThreadSampler,
    pid: u32,
    settings: SamplerSettings,
}

/// Opens and enables sampling of `tids` (threads of one process: a side's workers, or every
/// thread of a server from `process_threads`). Opening costs one perf event per thread and
/// CPU; call it just before the window.
pub fn start(tids: &[i32], settings: &SamplerSettings) -> Result<RunningProfile, Unavailable> {
    let unavailable = |reason: String| Unavailable { reason };
    let pid = owning_process(tids).map_err(unavailable)?;
    // Permission first: it is the reason that matters when kallsyms is hidden as well.
    let mut sampler = ThreadSampler::open(tids, settings).map_err(unavailable)?;
    kallsyms::check_visible().map_err(unavailable)?;
    sampler.enable().map_err(unavailable)?;
    Ok(RunningProfile {
        sampler,
        pid,
        settings: settings.clone(),
    })
}

impl RunningProfile {
    /// Empties the ring buffers into memory; only needed for windows longer than
    /// `SamplerSettings::max_window`.
    pub fn drain(&mut self) {
        self.sampler.drain();
    }

    /// Stops sampling and builds the block (reads kallsyms and the mapped files' symbols:
    /// about 0.1–0.3 s; `stop_with` reuses them across profiles).
    pub fn stop(self) -> Profile {
        self.stop_with(&mut Symbolizer::new())
    }

    /// Like `stop`, with symbol tables kept in `symbolizer`.
    pub fn stop_with(self, symbolizer: &mut Symbolizer) -> Profile {
        self.stop_sampling().build(symbolizer)
    }

    /// Stops sampling only (cheap: disable, drain), so several profiles can end at the
    /// same instant before any of them spends time naming symbols.
    pub fn stop_sampling(self) -> StoppedProfile {
        StoppedProfile {
            window: self.sampler.stop(),
            pid: self.pid,
            settings: self.settings,
        }
    }
}

/// A window's samples, not yet named.
pub struct StoppedProfile {
    window: Window,
    pid: u32,
    settings: SamplerSettings,
}

impl StoppedProfile {
    /// Names and charges the samples (call while the sampled process still runs: its maps
    /// are read now).
    pub fn build(self, symbolizer: &mut Symbolizer) -> Profile {
        let window = self.window;
        if window.samples.is_empty() {
            let reason = match window.lost {
                0 => format!(
                    "no samples: the {} thread(s) used no CPU time in the window",
                    window.threads
                ),
                n => format!("no samples kept: all {n} were lost (ring buffers full)"),
            };
            return Profile::Unavailable { reason };
        }
        let named = match symbolizer.name_samples(self.pid, &window.samples) {
            Ok(named) => named,
            Err(reason) => return Profile::Unavailable { reason },
        };
        let mut tally = Tally::default();
        for sample in &named {
            tally.add(sample, 1);
        }
        let method = method_text(&window, &tally, &self.settings, &symbolizer.sources());
        let blocks = batches::copy_share_blocks(&window.samples, &named);
        let mut block = tally.into_block(BlockMeta {
            event: window.event.name().into(),
            event_reason: window.event_reason.clone(),
            frequency_hz: window.frequency_hz,
            threads: window.threads,
            lost: window.lost,
            throttled: window.throttled,
            method,
        });
        block.copy_share_blocks = blocks;
        Profile::Measured(Box::new(block))
    }
}

/// How the block was measured, in the words a report prints beside it.
fn method_text(w: &Window, t: &Tally, s: &SamplerSettings, sources: &[String]) -> String {
    let pct = |n: u64| 100.0 * n as f64 / t.samples.max(1) as f64;
    let missing = match w.missing_threads.len() {
        0 => String::new(),
        n => format!(" ({n} listed thread(s) had exited)"),
    };
    format!(
        "{event} sampling at {freq} Hz of {threads} thread(s){missing} on {cpus} CPU(s), kernel \
         and user mode, kernel call chains up to {stack} frames (user chains not taken: \
         bytepath has no frame pointers); a {ring} KiB ring per CPU; {samples} samples, {lost} \
         lost, {thr} throttled. Shares are of samples with 95 % Wilson score intervals, which \
         treat samples as independent: they cover sampling noise, not run-to-run variation. \
         {skew:.1} % of samples fell where interrupts are re-enabled (a timer sample due while \
         they were off is taken there); {re} of them, inside lock releases, were charged to \
         the first categorised caller in the call chain. {helpers} samples in generic helpers \
         (memcpy, usercopy checks, clocks, timers) were charged to their caller. Symbols: \
         kernel from /proc/kallsyms; {sources}.",
        event = w.event.name(),
        freq = w.frequency_hz,
        threads = w.threads,
        cpus = w.cpus,
        stack = s.max_stack,
        ring = w.ring_bytes / 1024,
        samples = t.samples,
        lost = w.lost,
        thr = w.throttled,
        skew = pct(t.skew_samples),
        re = t.recharged,
        helpers = t.caller_charged,
        sources = if sources.is_empty() {
            "no user symbols needed".to_string()
        } else {
            sources.join("; ")
        },
    )
}

/// The process all of `tids` belong to (the Tgid of `/proc/<tid>/status`).
fn owning_process(tids: &[i32]) -> Result<u32, String> {
    let mut owner = None;
    for &tid in tids {
        let Some(tgid) = thread_group(tid) else {
            continue;
        };
        match owner {
            None => owner = Some(tgid),
            Some(o) if o != tgid => {
                return Err(format!("threads of more than one process ({o} and {tgid}): profile each process on its own"))
            }
            Some(_) => {}
        }
    }
    owner.ok_or_else(|| format!("none of the {} threads exists", tids.len()))
}

fn thread_group(tid: i32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Every thread of process `pid` now (`/proc/<pid>/task`), e.g. a server's whole process.
pub fn process_threads(pid: u32) -> std::io::Result<Vec<i32>> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// A thread's name (`/proc/<pid>/task/<tid>/comm`), e.g. `bytepath-0-send`.
pub fn thread_name(pid: u32, tid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// The calling thread's id, to hand to `start` from the thread that will be sampled.
pub fn current_thread_id() -> i32 {
    crate::sys::sampling::current_thread_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_threads_belong_to_this_process() {
        let pid = std::process::id();
        let tids = process_threads(pid).unwrap();
        assert!(tids.contains(&current_thread_id()));
        assert_eq!(owning_process(&tids).unwrap(), pid);
    }

    #[test]
    fn threads_of_two_processes_are_refused() {
        let init_and_me = [1, current_thread_id()];
        if thread_group(1).is_none() {
            crate::skip_test(None, "/proc/1 is not visible");
            return;
        }
        let err = owning_process(&init_and_me).unwrap_err();
        assert!(err.contains("more than one process"), "{err}");
    }

    #[test]
    fn an_unavailable_profile_serializes_its_reason() {
        let p = Profile::Unavailable {
            reason: "permission".into(),
        };
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["status"], "unavailable");
        assert_eq!(json["reason"], "permission");
        assert!(p.block().is_none());
    }
}
