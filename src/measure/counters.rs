//! Per-thread perf counters through perf_event_open(2) (perf-event2 crate).
//! Each event is opened on its own, not as a group: on a machine without a PMU a group holding
//! one hardware event fails whole, and the software events must still count. Counts are scaled
//! by time_enabled / time_running when the kernel multiplexed them. A counter that could not be
//! opened is reported with its reason and never as zero.
use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software};
use perf_event::{Builder, Counter};
use std::io;

/// The events bytepath counts, in output order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterEvent {
    TaskClock,
    ContextSwitches,
    CpuMigrations,
    PageFaults,
    Cycles,
    Instructions,
    CacheReferences,
    CacheMisses,
    L1dLoadMisses,
    LlcLoadMisses,
}

pub const EVENT_COUNT: usize = 10;

impl CounterEvent {
    pub const ALL: [CounterEvent; EVENT_COUNT] = [
        CounterEvent::TaskClock,
        CounterEvent::ContextSwitches,
        CounterEvent::CpuMigrations,
        CounterEvent::PageFaults,
        CounterEvent::Cycles,
        CounterEvent::Instructions,
        CounterEvent::CacheReferences,
        CounterEvent::CacheMisses,
        CounterEvent::L1dLoadMisses,
        CounterEvent::LlcLoadMisses,
    ];

    /// Key used in JSON and CSV (unit in the name where there is one).
    pub fn key(self) -> &'static str {
        match self {
            CounterEvent::TaskClock => "task_clock_ns",
            CounterEvent::ContextSwitches => "context_switches",
            CounterEvent::CpuMigrations => "cpu_migrations",
            CounterEvent::PageFaults => "page_faults",
            CounterEvent::Cycles => "cycles",
            CounterEvent::Instructions => "instructions",
            CounterEvent::CacheReferences => "cache_references",
            CounterEvent::CacheMisses => "cache_misses",
            CounterEvent::L1dLoadMisses => "l1d_load_misses",
            CounterEvent::LlcLoadMisses => "llc_load_misses",
        }
    }

    pub fn is_hardware(self) -> bool {
        !matches!(
            self,
            CounterEvent::TaskClock
                | CounterEvent::ContextSwitches
                | CounterEvent::CpuMigrations
                | CounterEvent::PageFaults
        )
    }

    /// Events that only happen inside the kernel: counting them in user mode reads 0, which
    /// would be a fake figure.
    fn needs_kernel_mode(self) -> bool {
        matches!(
            self,
            CounterEvent::ContextSwitches | CounterEvent::CpuMigrations
        )
    }

    fn builder(self) -> Builder<'static> {
        let cache = |which, result| Cache {
            which,
            operation: CacheOp::READ,
            result,
        };
        match self {
            CounterEvent::TaskClock => Builder::new(Software::TASK_CLOCK),
            CounterEvent::ContextSwitches => Builder::new(Software::CONTEXT_SWITCHES),
            CounterEvent::CpuMigrations => Builder::new(Software::CPU_MIGRATIONS),
            CounterEvent::PageFaults => Builder::new(Software::PAGE_FAULTS),
            CounterEvent::Cycles => Builder::new(Hardware::CPU_CYCLES),
            CounterEvent::Instructions => Builder::new(Hardware::INSTRUCTIONS),
            CounterEvent::CacheReferences => Builder::new(Hardware::CACHE_REFERENCES),
            CounterEvent::CacheMisses => Builder::new(Hardware::CACHE_MISSES),
            CounterEvent::L1dLoadMisses => Builder::new(cache(CacheId::L1D, CacheResult::MISS)),
            CounterEvent::LlcLoadMisses => Builder::new(cache(CacheId::LL, CacheResult::MISS)),
        }
    }

    /// Opens the event for the calling thread (and, with `inherit`, every thread it starts
    /// afterwards), counting kernel mode too when permitted.
    fn open(self, inherit: bool) -> Result<(Counter, Scope), String> {
        let mut builder = self.builder();
        builder.observe_self().any_cpu().inherit(inherit);
        match builder.clone().include_kernel().build() {
            Ok(counter) => return Ok((counter, Scope::UserAndKernel)),
            Err(e) if !is_permission(&e) => return Err(unavailable_reason(self, &e)),
            Err(e) if self.needs_kernel_mode() => return Err(unavailable_reason(self, &e)),
            Err(_) => {}
        }
        builder
            .build()
            .map(|c| (c, Scope::UserOnly))
            .map_err(|e| unavailable_reason(self, &e))
    }
}

/// Which events a run opens. Per-thread counters ride along on every context switch (the
/// kernel saves and restores them), which adds about 2 µs per switch on these VMs: enough to
/// slow a same-CPU round trip by a third, so latency runs can leave them off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterSelection {
    All,
    Software,
    Hardware,
    None,
}

impl CounterSelection {
    pub fn name(self) -> &'static str {
        match self {
            CounterSelection::All => "all",
            CounterSelection::Software => "software",
            CounterSelection::Hardware => "hardware",
            CounterSelection::None => "none",
        }
    }

    fn includes(self, event: CounterEvent) -> bool {
        match self {
            CounterSelection::All => true,
            CounterSelection::Software => !event.is_hardware(),
            CounterSelection::Hardware => event.is_hardware(),
            CounterSelection::None => false,
        }
    }
}

/// Which privilege levels a counter saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    UserAndKernel,
    UserOnly,
}

fn is_permission(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM))
}

/// `/proc/sys/kernel/perf_event_paranoid`, if readable.
pub fn perf_event_paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether the kernel exposes a CPU PMU at all.
pub fn pmu_present() -> bool {
    std::path::Path::new("/sys/bus/event_source/devices/cpu").exists()
        || std::path::Path::new("/sys/bus/event_source/devices/cpu_core").exists()
}

/// Why an event could not be opened, in the words the output uses after "n/a".
pub fn unavailable_reason(event: CounterEvent, e: &io::Error) -> String {
    let no_hardware = matches!(
        e.raw_os_error(),
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP)
    );
    if is_permission(e) {
        let paranoid = perf_event_paranoid().map_or("unknown".to_string(), |p| p.to_string());
        if event.needs_kernel_mode() {
            return format!("permission: kernel-mode event, perf_event_paranoid={paranoid}");
        }
        return format!("permission: perf_event_paranoid={paranoid}");
    }
    if event.is_hardware() && no_hardware {
        return "no PMU".to_string();
    }
    format!("perf_event_open failed: {e}")
}

/// One event's result over a measured interval.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum CounterValue {
    Counted {
        value: f64,
        scope: Scope,
        multiplexed: bool,
    },
    Unavailable(String),
}

impl CounterValue {
    pub fn value(&self) -> Option<f64> {
        match self {
            CounterValue::Counted { value, .. } => Some(*value),
            CounterValue::Unavailable(_) => None,
        }
    }

    /// Sums two threads' readings; unavailable on either side stays unavailable.
    fn merge(&self, other: &CounterValue) -> CounterValue {
        match (self, other) {
            (CounterValue::Unavailable(r), _) | (_, CounterValue::Unavailable(r)) => {
                CounterValue::Unavailable(r.clone())
            }
            (
                CounterValue::Counted {
                    value: a,
                    scope: sa,
                    multiplexed: ma,
                },
                CounterValue::Counted {
                    value: b,
                    scope: sb,
                    multiplexed: mb,
                },
            ) => CounterValue::Counted {
                value: a + b,
                scope: if sa == sb { *sa } else { Scope::UserOnly },
                multiplexed: *ma || *mb,
            },
        }
    }
}

/// All events' results for one thread or one side.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CounterSample {
    pub values: [CounterValue; EVENT_COUNT],
}

impl CounterSample {
    pub fn get(&self, event: CounterEvent) -> &CounterValue {
        &self.values[event as usize]
    }

    pub fn merge(&self, other: &CounterSample) -> CounterSample {
        CounterSample {
            values: std::array::from_fn(|i| self.values[i].merge(&other.values[i])),
        }
    }
}

/// The calling thread's counters, opened once before the run and enabled for the measured
/// phase only.
pub struct ThreadCounters {
    slots: Vec<Result<(Counter, Scope), String>>,
}

impl ThreadCounters {
    /// Opens every event for the calling thread. Never fails: failures become reasons.
    pub fn open(selection: CounterSelection) -> ThreadCounters {
        Self::open_with(selection, false)
    }

    /// Like `open`, and the counts include every thread the calling thread starts after this
    /// call (perf_event_open(2) `inherit`): a server's threads, summed.
    pub fn open_inherited(selection: CounterSelection) -> ThreadCounters {
        Self::open_with(selection, true)
    }

    fn open_with(selection: CounterSelection, inherit: bool) -> ThreadCounters {
        let slot = |e: &CounterEvent| {
            if selection.includes(*e) {
                e.open(inherit)
            } else {
                Err(format!("not counted: --counters {}", selection.name()))
            }
        };
        ThreadCounters {
            slots: CounterEvent::ALL.iter().map(slot).collect(),
        }
    }

    pub fn start(&mut self) {
        for (counter, _) in self.slots.iter_mut().flatten() {
            let _ = counter.reset();
            let _ = counter.enable();
        }
    }

    pub fn stop(&mut self) -> CounterSample {
        for (counter, _) in self.slots.iter_mut().flatten() {
            let _ = counter.disable();
        }
        CounterSample {
            values: std::array::from_fn(|i| read_slot(&mut self.slots[i])),
        }
    }
}

fn read_slot(slot: &mut Result<(Counter, Scope), String>) -> CounterValue {
    let (counter, scope) = match slot {
        Ok(c) => c,
        Err(reason) => return CounterValue::Unavailable(reason.clone()),
    };
    match counter.read_count_and_time() {
        Ok(ct) => scale(ct.count, ct.time_enabled, ct.time_running, *scope),
        Err(e) => CounterValue::Unavailable(format!("read failed: {e}")),
    }
}

/// Scales a multiplexed count to the whole enabled time.
pub fn scale(count: u64, enabled_ns: u64, running_ns: u64, scope: Scope) -> CounterValue {
    if running_ns == 0 {
        if enabled_ns == 0 {
            return CounterValue::Counted {
                value: count as f64,
                scope,
                multiplexed: false,
            };
        }
        return CounterValue::Unavailable("never scheduled on the PMU (multiplexing)".into());
    }
    let multiplexed = running_ns < enabled_ns;
    let value = if multiplexed {
        count as f64 * enabled_ns as f64 / running_ns as f64
    } else {
        count as f64
    };
    CounterValue::Counted {
        value,
        scope,
        multiplexed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_hardware_event_reads_as_no_pmu() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(unavailable_reason(CounterEvent::Cycles, &e), "no PMU");
    }

    #[test]
    fn permission_error_names_perf_event_paranoid() {
        let e = io::Error::from_raw_os_error(libc::EACCES);
        let reason = unavailable_reason(CounterEvent::Instructions, &e);
        assert!(
            reason.starts_with("permission: perf_event_paranoid="),
            "{reason}"
        );
        let reason = unavailable_reason(CounterEvent::ContextSwitches, &e);
        assert!(reason.contains("kernel-mode event"), "{reason}");
    }

    #[test]
    fn multiplexed_counts_are_scaled_to_enabled_time() {
        let v = scale(1000, 200, 100, Scope::UserAndKernel);
        assert_eq!(
            v,
            CounterValue::Counted {
                value: 2000.0,
                scope: Scope::UserAndKernel,
                multiplexed: true
            }
        );
        assert!(matches!(
            scale(5, 100, 0, Scope::UserOnly),
            CounterValue::Unavailable(_)
        ));
    }

    #[test]
    fn merging_keeps_unavailable_and_sums_counts() {
        let a = CounterValue::Counted {
            value: 1.0,
            scope: Scope::UserAndKernel,
            multiplexed: false,
        };
        let na = CounterValue::Unavailable("no PMU".into());
        assert_eq!(a.merge(&a).value(), Some(2.0));
        assert_eq!(a.merge(&na), na);
    }

    #[test]
    fn events_left_out_by_the_selection_say_so() {
        let mut counters = ThreadCounters::open(CounterSelection::Hardware);
        counters.start();
        let sample = counters.stop();
        assert_eq!(
            sample.get(CounterEvent::TaskClock),
            &CounterValue::Unavailable("not counted: --counters hardware".into())
        );
    }

    #[test]
    fn software_task_clock_counts_on_this_thread() {
        let mut counters = ThreadCounters::open(CounterSelection::All);
        counters.start();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let sample = counters.stop();
        match sample.get(CounterEvent::TaskClock) {
            CounterValue::Counted { value, .. } => assert!(*value > 0.0),
            CounterValue::Unavailable(r) => {
                crate::skip_test(None, format!("task-clock unavailable here: {r}"))
            }
        }
    }
}
