//! The controller's side of a run: fix the schedule, release the workers, then sleep through
//! the measured phase, and end it at its duration, when the workers stop the run (every flow
//! measured its count, or a side failed), or on Ctrl-C. The slices are diagnostics of the
//! run's steadiness; no interval is tested while the run goes on (stopping at the first tight
//! interval would narrow it). Also reads machine-wide CPU time around the measured phase.
//!
//! A controller that woke every 5 ms made cross-CPU round trips ~10 % shorter than a bare
//! ping-pong whose third thread slept (bench/floor.sh): a vCPU woken often wakes faster. So it
//! sleeps on the stop flag and looks at the Ctrl-C flag only every `INTERRUPT_POLL`.
use super::control::Control;
use super::profiling::{ProfileWindow, StoppedWindow};
use super::slices::{SliceBoard, SliceWatch};
use super::worker::Role;
use crate::config::{Pattern, RunSpec};
use crate::measure::machine::{softirq_per_cpu, MachineCpu};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Workers publish a slice on their first message after its end; give them this long.
const PUBLISH_GRACE: Duration = Duration::from_millis(5);
/// How often a sleeping controller looks at the Ctrl-C flag (a stop wakes it at once).
const INTERRUPT_POLL: Duration = Duration::from_millis(200);

/// Why the measured phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A count (`--messages`/`--bytes`) was not reached before the duration, its cap, ran out.
    MaxTime,
    /// The whole duration was measured.
    FixedDuration,
    /// Every flow measured its `--messages`/`--bytes` share.
    CountReached,
    Interrupted,
    /// A side failed (a forked or remote peer gone, a failed start) and stopped the run early;
    /// the record's errors say which.
    SideFailed,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::MaxTime => "maximum time reached",
            StopReason::FixedDuration => "fixed duration",
            StopReason::CountReached => "message count reached",
            StopReason::Interrupted => "interrupted",
            StopReason::SideFailed => "a side failed",
        }
    }

    /// The name records use (snake case, as serialized).
    pub fn name(self) -> &'static str {
        match self {
            StopReason::MaxTime => "max_time",
            StopReason::FixedDuration => "fixed_duration",
            StopReason::CountReached => "count_reached",
            StopReason::Interrupted => "interrupted",
            StopReason::SideFailed => "side_failed",
        }
    }
}

/// What the controller observed.
pub struct Phases {
    pub measured: Duration,
    pub machine: Result<MachineCpu, String>,
    pub interrupted: bool,
    /// Slices the statistics use (all complete, in order from the start of the measured phase).
    pub slices_used: usize,
    /// Slices already told to the watch while the run went on.
    pub slices_told: usize,
    pub stop: StopReason,
    /// `--profile`: the local sides' sampling over the measured phase, stopped at its end.
    pub sampling: Option<StoppedWindow>,
    /// On a sink: each CPU's softirq time over the measured phase (read beside the
    /// machine-wide CPU and kept only where it was), so the sender's CPUs can be picked out.
    pub softirq_by_cpu: Option<Vec<(usize, f64)>>,
}

/// The per-slice figure the CI follows: receiver Gbit/s for stream, round trips/s for rr.
pub fn slice_values(
    pattern: Pattern,
    slice: Duration,
    bytes: &[u64],
    messages: &[u64],
) -> Vec<f64> {
    let s = slice.as_secs_f64();
    match pattern {
        Pattern::Stream => bytes.iter().map(|&b| b as f64 * 8.0 / s / 1e9).collect(),
        Pattern::Rr | Pattern::Crr => messages.iter().map(|&m| m as f64 / s).collect(),
    }
}

/// Runs the schedule; with `spec.profile` the worker threads of `local` roles in this process
/// are sampled from the start of the measured phase to its end.
pub fn run_phases(
    spec: &RunSpec,
    control: &Control,
    start: &Barrier,
    board: &SliceBoard,
    interrupt: &AtomicBool,
    local: &[Role],
    watch: SliceWatch,
) -> Phases {
    let (from, until) = control.schedule(Instant::now(), spec.warmup, spec.duration);
    start.wait();
    if sleep_until(from, interrupt, control) == Wake::Interrupted {
        control.stop();
        return Phases {
            measured: Duration::ZERO,
            machine: Err("interrupted before the measured phase".into()),
            interrupted: true,
            slices_used: 0,
            slices_told: 0,
            stop: StopReason::Interrupted,
            sampling: None,
            softirq_by_cpu: None,
        };
    }
    let window = spec
        .profile
        .then(|| ProfileWindow::open(local, spec.duration));
    let per_cpu = || spec.network.is_sink().then(softirq_per_cpu).flatten();
    let first = (Instant::now(), MachineCpu::read());
    let first_softirq = per_cpu();
    let (slices_used, stop, slices_told) = match watch {
        None => {
            let (used, stop) = follow_slices(spec, from, board, interrupt, control);
            (used, stop, 0)
        }
        Some(watch) => watch_slices(spec, from, board, (interrupt, control), watch),
    };
    let sampling = window.map(ProfileWindow::stop);
    if stop != StopReason::MaxTime && stop != StopReason::FixedDuration {
        control.stop();
    }
    let last = (Instant::now(), MachineCpu::read());
    let last_softirq = per_cpu();
    let end = match stop {
        StopReason::MaxTime | StopReason::FixedDuration => until,
        _ => last.0.min(until),
    };
    let machine = machine_cpu(first, last, (from, end));
    Phases {
        measured: end.saturating_duration_since(from),
        softirq_by_cpu: softirq_since(first_softirq, last_softirq, machine.is_ok()),
        machine,
        interrupted: stop == StopReason::Interrupted,
        slices_used,
        slices_told,
        stop,
        sampling,
    }
}

/// As `follow_slices`, waking at each slice's end (and its publishing grace) to tell `watch`
/// of the slices every thread has finished. Only with a watch (`--json-stream`): otherwise the
/// controller sleeps through the phase, since waking often changes what it measures (above).
/// Returns the slices complete at the end, why it ended, and how many were told.
fn watch_slices(
    spec: &RunSpec,
    from: Instant,
    board: &SliceBoard,
    (interrupt, control): (&AtomicBool, &Control),
    watch: &dyn Fn(super::slices::SliceSeen),
) -> (usize, StopReason, usize) {
    let slice = spec.stopping.slice;
    let total = board.len();
    let mut told = 0;
    for boundary in 1..=total {
        let wake = sleep_until(
            from + slice * boundary as u32 + PUBLISH_GRACE,
            interrupt,
            control,
        );
        let complete = board.complete(boundary, spec.threads);
        board.tell(watch, slice, told, complete);
        told = told.max(complete);
        if wake != Wake::Deadline {
            break;
        }
    }
    // The same ending as without a watch: by now its sleep is over, so it returns at once.
    let (used, stop) = follow_slices(spec, from, board, interrupt, control);
    (used, stop, told)
}

/// Sleeps through the measured phase; returns how many slices are complete when it ends, and
/// why.
fn follow_slices(
    spec: &RunSpec,
    from: Instant,
    board: &SliceBoard,
    interrupt: &AtomicBool,
    control: &Control,
) -> (usize, StopReason) {
    let slice = spec.stopping.slice;
    let total = board.len();
    let wake = sleep_until(
        from + slice * total as u32 + PUBLISH_GRACE,
        interrupt,
        control,
    );
    let finished = || {
        let elapsed = Instant::now().saturating_duration_since(from);
        board.complete(div_duration(elapsed, slice).min(total), spec.threads)
    };
    match wake {
        Wake::Deadline => {}
        Wake::Interrupted => return (finished(), StopReason::Interrupted),
        // The stop flag is raised by the last flow reaching its count, or by a side that
        // failed; only the first is a planned end.
        Wake::Stopped if control.flows_done() >= spec.threads => {
            return (finished(), StopReason::CountReached)
        }
        Wake::Stopped => return (finished(), StopReason::SideFailed),
    }
    let reason = match spec.stopping.messages_per_flow {
        None => StopReason::FixedDuration,
        Some(_) => StopReason::MaxTime,
    };
    (total, reason)
}

/// How many whole `slice`s fit in `span`.
pub fn div_duration(span: Duration, slice: Duration) -> usize {
    (span.as_nanos() / slice.as_nanos().max(1)) as usize
}

/// Why a controller sleep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    Deadline,
    Interrupted,
    /// The workers ended the run (every flow's count reached).
    Stopped,
}

/// Sleeps until `deadline`, the run's stop, or Ctrl-C (seen within `INTERRUPT_POLL`).
fn sleep_until(deadline: Instant, interrupt: &AtomicBool, control: &Control) -> Wake {
    loop {
        if interrupt.load(Ordering::Relaxed) {
            return Wake::Interrupted;
        }
        if control.is_stopped() {
            return Wake::Stopped;
        }
        let now = Instant::now();
        if now >= deadline {
            return Wake::Deadline;
        }
        control.wait_for_stop((deadline - now).min(INTERRUPT_POLL));
    }
}

/// Each CPU's softirq time from reading `a` to reading `b`, where both were read and close
/// enough to the window (`in_time`: the machine-wide CPU read with them was kept).
type SoftirqByCpu = Vec<(usize, f64)>;
fn softirq_since(
    a: Option<SoftirqByCpu>,
    b: Option<SoftirqByCpu>,
    in_time: bool,
) -> Option<SoftirqByCpu> {
    let (a, b) = (a?, b?);
    let since = b.iter().filter_map(|&(cpu, late)| {
        let (_, early) = a.iter().find(|(c, _)| *c == cpu)?;
        Some((cpu, late - early))
    });
    in_time.then(|| since.collect())
}

/// Machine-wide CPU between two readings, if they were taken close enough to the window.
fn machine_cpu(
    first: (Instant, Option<MachineCpu>),
    last: (Instant, Option<MachineCpu>),
    window: (Instant, Instant),
) -> Result<MachineCpu, String> {
    let (Some(a), Some(b)) = (first.1, last.1) else {
        return Err("/proc/stat could not be read".into());
    };
    let span = window.1.saturating_duration_since(window.0);
    let late = first
        .0
        .saturating_duration_since(window.0)
        .max(last.0.saturating_duration_since(window.1));
    if late > span / 20 + PUBLISH_GRACE {
        return Err(format!(
            "the controller read /proc/stat {:.0} ms late (busy workers starved it), so the reading would not match the window",
            late.as_secs_f64() * 1e3
        ));
    }
    Ok(b.since(&a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_values_are_gbits_for_stream_and_rates_for_rr() {
        let slice = Duration::from_millis(100);
        assert_eq!(
            slice_values(Pattern::Stream, slice, &[125_000_000], &[1]),
            vec![10.0]
        );
        assert_eq!(
            slice_values(Pattern::Rr, slice, &[0], &[5000]),
            vec![50_000.0]
        );
    }

    #[test]
    fn whole_slices_are_counted() {
        let ms = Duration::from_millis;
        assert_eq!(div_duration(ms(999), ms(100)), 9);
        assert_eq!(div_duration(ms(1000), ms(100)), 10);
    }
}
