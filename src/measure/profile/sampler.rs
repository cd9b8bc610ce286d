//! Sampling a list of threads with perf_event_open(2): one event per (thread, CPU), all events
//! of a CPU writing into that CPU's ring buffer (PERF_EVENT_IOC_SET_OUTPUT, as `perf record -t`
//! does), so the buffers scale with CPUs rather than threads and a CPU runs one sampled thread
//! at a time. Each sample carries IP, TID and the kernel call chain. Lost samples are read
//! per event (PERF_FORMAT_LOST, Linux 6.0) and from PERF_RECORD_LOST records.
use super::categories::Space;
use crate::measure::counters::{perf_event_paranoid, pmu_present};
use crate::sys::sampling::redirect_output;
use perf_event::events::{Hardware, Software};
use perf_event::{Builder, Counter, ReadFormat, SampleFlag, Sampler};
use std::io;
#[cfg(test)]
use std::os::fd::AsRawFd;
use std::time::Duration;

/// How a profile samples.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerSettings {
    /// Requested samples per second of thread CPU time (capped by
    /// /proc/sys/kernel/perf_event_max_sample_rate).
    pub frequency_hz: u64,
    /// The longest window the rings must hold without a drain.
    pub max_window: Duration,
    /// Kernel frames kept per sample; recharging looks at the first few only.
    pub max_stack: u16,
}

impl Default for SamplerSettings {
    /// 3999 Hz: perf record's 4000 less one, so the samples do not fall in step with a 1000 or
    /// 250 Hz tick; windows up to 5 s; 16 kernel frames.
    fn default() -> Self {
        SamplerSettings {
            frequency_hz: 3999,
            max_window: Duration::from_secs(5),
            max_stack: 16,
        }
    }
}

/// The sampling event and why it was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Cycles,
    CpuClock,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Cycles => "cycles",
            EventKind::CpuClock => "cpu-clock",
        }
    }
}

/// One sample as the kernel wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSample {
    pub tid: u32,
    pub space: Space,
    pub ip: u64,
    /// Kernel return addresses above the leaf, innermost first.
    pub callers: Box<[u64]>,
}

/// What a stopped sampler hands over.
#[derive(Debug)]
pub struct Window {
    pub samples: Vec<RawSample>,
    pub lost: u64,
    pub throttled: u64,
    pub event: EventKind,
    pub event_reason: String,
    pub frequency_hz: u64,
    pub threads: usize,
    pub missing_threads: Vec<i32>,
    pub cpus: usize,
    pub ring_bytes: usize,
}

/// Open events over a set of threads.
pub struct ThreadSampler {
    rings: Vec<Sampler>,
    followers: Vec<Counter>,
    drained: Drained,
    event: EventKind,
    event_reason: String,
    frequency_hz: u64,
    threads: usize,
    missing_threads: Vec<i32>,
    cpus: usize,
    ring_bytes: usize,
}

#[derive(Debug, Default)]
struct Drained {
    samples: Vec<RawSample>,
    lost_records: u64,
    throttled: u64,
}

/// What every event of one sampler shares.
#[derive(Debug, Clone, Copy)]
struct Plan {
    event: EventKind,
    frequency_hz: u64,
    max_stack: u16,
    lost_format: bool,
}

/// Bytes of one sample record: header, IP, pid/tid, chain length, frames and two context marks.
fn record_bytes(max_stack: u16) -> usize {
    8 + 8 + 8 + 8 + 8 * (usize::from(max_stack) + 2)
}

/// Total ring memory one sampler may lock.
const RING_BUDGET: usize = 64 << 20;
const MIN_RING: usize = 64 << 10;

impl ThreadSampler {
    /// Opens (disabled) events for `tids` on every online CPU. Fails with the reason when
    /// sampling is not permitted, no event opens, or none of the threads exists.
    pub fn open(tids: &[i32], settings: &SamplerSettings) -> Result<ThreadSampler, String> {
        let cpus = online_cpus();
        let (frequency_hz, capped) = capped_frequency(settings.frequency_hz);
        let (plan, mut event_reason) = choose_event(tids, cpus[0], frequency_hz, settings)?;
        if let Some(max) = capped {
            event_reason.push_str(&format!(
                "; {} Hz requested, capped by perf_event_max_sample_rate={max}",
                settings.frequency_hz
            ));
        }
        let ring_bytes = ring_size(frequency_hz, settings, cpus.len());
        let mut sampler = ThreadSampler {
            rings: Vec::new(),
            followers: Vec::new(),
            drained: Drained::default(),
            event: plan.event,
            event_reason,
            frequency_hz,
            threads: 0,
            missing_threads: Vec::new(),
            cpus: cpus.len(),
            ring_bytes,
        };
        for &cpu in &cpus {
            sampler.open_cpu(tids, cpu, plan)?;
        }
        sampler.threads = tids.len() - sampler.missing_threads.len();
        if sampler.threads == 0 {
            return Err(format!(
                "none of the {} threads exists any more",
                tids.len()
            ));
        }
        Ok(sampler)
    }

    fn open_cpu(&mut self, tids: &[i32], cpu: usize, plan: Plan) -> Result<(), String> {
        let mut ring: Option<Sampler> = None;
        for &tid in tids {
            if self.missing_threads.contains(&tid) {
                continue;
            }
            if ring.is_none() {
                match open_ring(tid, cpu, plan, self.ring_bytes) {
                    Ok((r, bytes)) => (ring, self.ring_bytes) = (Some(r), bytes),
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {
                        self.missing_threads.push(tid)
                    }
                    Err(e) => return Err(open_error(plan.event, &e)),
                }
                continue;
            }
            let owner = ring.as_ref().expect("ring opened above");
            match open_follower(tid, cpu, plan, owner) {
                Ok(c) => self.followers.push(c),
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => self.missing_threads.push(tid),
                Err(e) => return Err(open_error(plan.event, &e)),
            }
        }
        self.rings.extend(ring);
        Ok(())
    }

    /// Starts sampling on every event.
    pub fn enable(&mut self) -> Result<(), String> {
        let counters = self.rings.iter_mut().map(|s| s.as_counter_mut());
        for c in counters.chain(self.followers.iter_mut()) {
            c.enable()
                .map_err(|e| format!("enabling a sampling event failed: {e}"))?;
        }
        Ok(())
    }

    /// Moves what the rings hold into memory; a caller with a long window may call this
    /// periodically so the rings never fill.
    pub fn drain(&mut self) {
        for ring in &mut self.rings {
            drain_ring(ring, &mut self.drained);
        }
    }

    /// Stops every event, drains the rings and reads the lost-sample counts.
    pub fn stop(mut self) -> Window {
        let counters = self.rings.iter_mut().map(|s| s.as_counter_mut());
        for c in counters.chain(self.followers.iter_mut()) {
            let _ = c.disable();
        }
        self.drain();
        let counters = self.rings.iter_mut().map(|s| s.as_counter_mut());
        let read_lost: Option<u64> = counters
            .chain(self.followers.iter_mut())
            .map(|c| c.read_full().ok().and_then(|d| d.lost()))
            .sum();
        Window {
            samples: std::mem::take(&mut self.drained.samples),
            // Each dropped sample is counted by its event and again by a LOST record when the
            // ring had room for one afterwards: the larger of the two is the count.
            lost: read_lost.unwrap_or(0).max(self.drained.lost_records),
            throttled: self.drained.throttled,
            event: self.event,
            event_reason: self.event_reason.clone(),
            frequency_hz: self.frequency_hz,
            threads: self.threads,
            missing_threads: self.missing_threads.clone(),
            cpus: self.cpus,
            ring_bytes: self.ring_bytes,
        }
    }
}

fn builder(plan: Plan, tid: i32, cpu: usize) -> Builder<'static> {
    let mut b = match plan.event {
        EventKind::Cycles => Builder::new(Hardware::CPU_CYCLES),
        EventKind::CpuClock => Builder::new(Software::CPU_CLOCK),
    };
    let mut read = ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING;
    if plan.lost_format {
        read |= ReadFormat::LOST;
    }
    b.observe_pid(tid)
        .one_cpu(cpu)
        .sample_frequency(plan.frequency_hz)
        .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::CALLCHAIN)
        .exclude_callchain_user(true)
        .sample_max_stack(plan.max_stack)
        .include_kernel()
        .read_format(read);
    b
}

/// Opens the event that owns `cpu`'s ring, halving the ring while the locked-memory limit
/// refuses it (down to 64 KiB). Returns the ring and its size.
fn open_ring(tid: i32, cpu: usize, plan: Plan, bytes: usize) -> io::Result<(Sampler, usize)> {
    let mut bytes = bytes;
    loop {
        let counter = builder(plan, tid, cpu).build()?;
        match counter.sampled(bytes) {
            Ok(ring) => return Ok((ring, bytes)),
            Err(e) if bytes > MIN_RING && is_memory_limit(&e) => bytes /= 2,
            Err(e) => return Err(e),
        }
    }
}

fn open_follower(tid: i32, cpu: usize, plan: Plan, owner: &Sampler) -> io::Result<Counter> {
    let counter = builder(plan, tid, cpu).build()?;
    redirect_output(&counter, owner)?;
    Ok(counter)
}

fn is_memory_limit(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::ENOMEM))
}

/// Picks `cycles` where a PMU opens it and `cpu-clock` otherwise, probing on the first thread
/// that still exists; also learns whether the kernel takes PERF_FORMAT_LOST.
fn choose_event(
    tids: &[i32],
    cpu: usize,
    frequency_hz: u64,
    settings: &SamplerSettings,
) -> Result<(Plan, String), String> {
    let mut plan = Plan {
        event: EventKind::Cycles,
        frequency_hz,
        max_stack: settings.max_stack,
        lost_format: true,
    };
    let mut reason = String::from("cycles: a PMU is present");
    if !pmu_present() {
        plan.event = EventKind::CpuClock;
        reason = "no PMU (/sys/bus/event_source/devices has no cpu): software cpu-clock".into();
    }
    let mut alive = tids.iter();
    let mut tid = *alive.next().ok_or("no threads to sample")?;
    loop {
        match builder(plan, tid, cpu).build() {
            Ok(_) => return Ok((plan, reason)),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => match alive.next() {
                Some(&next) => tid = next,
                None => {
                    return Err(format!(
                        "none of the {} threads exists any more",
                        tids.len()
                    ))
                }
            },
            Err(e) if plan.lost_format && e.raw_os_error() == Some(libc::EINVAL) => {
                plan.lost_format = false;
            }
            Err(e) if plan.event == EventKind::Cycles && is_no_hardware(&e) => {
                reason = format!("cycles failed ({e}): software cpu-clock");
                plan.event = EventKind::CpuClock;
                plan.lost_format = true;
            }
            Err(e) => return Err(open_error(plan.event, &e)),
        }
    }
}

fn is_no_hardware(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP)
    )
}

/// Why an event could not be opened, in the words a record prints.
pub fn open_error(event: EventKind, e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            let paranoid = perf_event_paranoid().map_or("unknown".into(), |p| p.to_string());
            format!("permission: sampling kernel and user code needs root, CAP_PERFMON or perf_event_paranoid <= 1 (it is {paranoid})")
        }
        Some(libc::EMFILE) | Some(libc::ENFILE) => {
            format!(
                "too many open files: one {} event per thread and CPU ({e})",
                event.name()
            )
        }
        _ => format!("perf_event_open({}) failed: {e}", event.name()),
    }
}

fn drain_ring(ring: &mut Sampler, out: &mut Drained) {
    while let Some(record) = ring.next_record() {
        let bytes = record.to_contiguous();
        match record.ty() {
            PERF_RECORD_SAMPLE => {
                let kernel =
                    record.misc() & PERF_RECORD_MISC_CPUMODE_MASK == PERF_RECORD_MISC_KERNEL;
                out.samples.extend(parse_sample(&bytes, kernel));
            }
            PERF_RECORD_LOST => out.lost_records += word(&bytes, 1).unwrap_or(0),
            PERF_RECORD_THROTTLE => out.throttled += 1,
            _ => {}
        }
    }
}

/// A sample record's body for sample_type IP | TID | CALLCHAIN: ip, pid and tid (u32 each),
/// the chain length, the chain. Parsed here rather than by perf-event-data 0.1.8, which
/// fails on a chain of length 0 at the end of a record (every user-mode sample when user
/// chains are excluded).
fn parse_sample(bytes: &[u8], kernel: bool) -> Option<RawSample> {
    let ip = word(bytes, 0)?;
    let tid = u32::from_ne_bytes(bytes.get(12..16)?.try_into().ok()?);
    let nr = usize::try_from(word(bytes, 2)?).ok()?;
    let chain: Vec<u64> = (0..nr).map_while(|i| word(bytes, 3 + i)).collect();
    Some(RawSample {
        tid,
        space: if kernel { Space::Kernel } else { Space::User },
        ip,
        callers: kernel_callers(&chain, ip),
    })
}

/// The `i`-th native-endian u64 of a record body.
fn word(bytes: &[u8], i: usize) -> Option<u64> {
    let b = bytes.get(i * 8..i * 8 + 8)?;
    Some(u64::from_ne_bytes(b.try_into().ok()?))
}

const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_THROTTLE: u32 = 5;
const PERF_RECORD_SAMPLE: u32 = 9;
const PERF_RECORD_MISC_CPUMODE_MASK: u16 = 7;
const PERF_RECORD_MISC_KERNEL: u16 = 1;
/// Chain entries at or above this are context marks (PERF_CONTEXT_MAX, -4095).
const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;

/// The kernel part of a chain after the leaf: entries following PERF_CONTEXT_KERNEL up to the
/// next context mark, without the leaf itself.
pub fn kernel_callers(chain: &[u64], ip: u64) -> Box<[u64]> {
    let mut in_kernel = false;
    let mut frames: Vec<u64> = Vec::new();
    for &entry in chain {
        if entry >= PERF_CONTEXT_MAX {
            in_kernel = entry == PERF_CONTEXT_KERNEL;
            continue;
        }
        if in_kernel {
            frames.push(entry);
        }
    }
    if frames.first() == Some(&ip) {
        frames.remove(0);
    }
    frames.into_boxed_slice()
}

/// Online CPUs from /sys/devices/system/cpu/online ("0-3,6"); all that parallelism reports
/// if it is unreadable.
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            (0..n).collect()
        })
}

fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().ok()?..=b.parse().ok()?),
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// The frequency actually requested and, when capped, the cap.
fn capped_frequency(requested: u64) -> (u64, Option<u64>) {
    let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    match max {
        Some(max) if max > 0 && requested > max => (max, Some(max)),
        _ => (requested.max(1), None),
    }
}

/// A power of two holding `max_window` of samples at `frequency_hz` on one CPU, within the
/// memory budget shared by all CPUs.
fn ring_size(frequency_hz: u64, settings: &SamplerSettings, cpus: usize) -> usize {
    let want = (frequency_hz as f64
        * settings.max_window.as_secs_f64()
        * record_bytes(settings.max_stack) as f64) as usize;
    let cap = (RING_BUDGET / cpus.max(1)).next_power_of_two() / 2;
    want.next_power_of_two().clamp(MIN_RING, cap.max(MIN_RING))
}

/// The raw descriptor numbers of the open events, for tests.
#[cfg(test)]
fn event_fds(s: &ThreadSampler) -> Vec<i32> {
    let rings = s.rings.iter().map(|r| r.as_raw_fd());
    rings
        .chain(s.followers.iter().map(|c| c.as_raw_fd()))
        .collect()
}

#[cfg(test)]
#[path = "sampler_tests.rs"]
mod tests;
