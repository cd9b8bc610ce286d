//! One thread's measured window: opened when the thread first sees the measure phase, closed
//! when it first sees stop. Opening and closing read rusage and the perf counters; in between
//! only counts and histogram samples are touched.
use super::control::{Control, Phase};
use super::slices::{SliceBoard, SliceClock};
use crate::measure::counters::{CounterSample, CounterSelection, ThreadCounters};
use crate::measure::histogram::LatencyHistogram;
use crate::sys::usage::{thread_usage, ThreadUsage};
use std::sync::Arc;
use std::time::{Duration, Instant};

enum State {
    Before,
    Open {
        started: Instant,
        usage: ThreadUsage,
    },
    Closed,
}

/// What a closed window holds.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct WindowResult {
    pub messages: u64,
    pub bytes: u64,
    pub elapsed: Duration,
    pub usage: ThreadUsage,
    pub counters: CounterSample,
    pub histogram: LatencyHistogram,
}

pub struct Window {
    state: State,
    counters: ThreadCounters,
    messages: u64,
    bytes: u64,
    histogram: LatencyHistogram,
    /// Only on the measured side (stream receiver, rr client).
    slices: Option<SliceClock>,
    /// Slices to count into once the window opens (and the schedule is surely fixed).
    pending_slices: Option<(Arc<SliceBoard>, Duration, Arc<Control>)>,
    result: Option<(Duration, ThreadUsage, CounterSample)>,
}

impl Window {
    /// Opens this thread's counters (call on the worker thread, after pinning).
    pub fn new(counters: CounterSelection) -> Window {
        Window {
            state: State::Before,
            counters: ThreadCounters::open(counters),
            messages: 0,
            bytes: 0,
            histogram: LatencyHistogram::new(),
            slices: None,
            pending_slices: None,
            result: None,
        }
    }

    /// Makes this window count its messages into measurement slices as well, from the start
    /// of the measured phase `control` holds when the window opens: on a server's side the
    /// schedule is fixed only after the workers pass the start barrier (at the client's `Go`).
    pub fn attach_slices(
        &mut self,
        board: Arc<SliceBoard>,
        length: Duration,
        control: Arc<Control>,
    ) {
        self.pending_slices = Some((board, length, control));
    }

    /// Follows the run's phase; returns whether samples now count.
    #[inline]
    pub fn follow(&mut self, phase: Phase, now: Instant) -> bool {
        match (&self.state, phase) {
            (State::Before, Phase::Measure) => self.open(now),
            (State::Before, Phase::Stop) => self.state = State::Closed,
            (State::Open { .. }, Phase::Stop) => self.close(now),
            _ => {}
        }
        matches!(self.state, State::Open { .. })
    }

    /// Messages counted so far in the open window.
    #[inline]
    pub fn counted(&self) -> u64 {
        self.messages
    }

    /// Closes the window at `now` whatever the phase (this flow's count is reached).
    pub fn close_at(&mut self, now: Instant) {
        if self.is_open() {
            self.close(now);
        }
    }

    /// Counts messages completed at `now` (inside the open window).
    #[inline]
    pub fn record(&mut self, now: Instant, messages: u64, bytes: u64) {
        self.messages += messages;
        self.bytes += bytes;
        if let Some(slices) = self.slices.as_mut() {
            slices.add(now, messages, bytes);
        }
    }

    /// One latency sample per message; `messages` completed together share the interval.
    #[inline]
    pub fn latency(&mut self, interval: Duration, messages: u64) {
        let ns = interval.as_nanos() as u64;
        self.histogram.record_n(ns / messages.max(1), messages);
    }

    pub fn is_open(&self) -> bool {
        matches!(self.state, State::Open { .. })
    }

    /// The measured phase has not been seen yet.
    pub fn is_waiting(&self) -> bool {
        matches!(self.state, State::Before)
    }

    fn open(&mut self, now: Instant) {
        if let Some((board, length, control)) = self.pending_slices.take() {
            self.slices = Some(SliceClock::new(board, control.measure_from(), length));
        }
        let usage = thread_usage().unwrap_or_default();
        self.counters.start();
        self.state = State::Open {
            started: now,
            usage,
        };
    }

    fn close(&mut self, now: Instant) {
        if let Some(slices) = self.slices.as_mut() {
            slices.pass(now);
        }
        if let State::Open { started, usage } = self.state {
            let counters = self.counters.stop();
            let used = thread_usage().unwrap_or_default().since(&usage);
            self.result = Some((now.duration_since(started), used, counters));
        }
        self.state = State::Closed;
    }

    /// Closes the window if still open (a worker that ended early) and hands over the result;
    /// `None` when the window never opened.
    pub fn finish(mut self) -> Option<WindowResult> {
        if matches!(self.state, State::Open { .. }) {
            self.close(Instant::now());
        }
        let (elapsed, usage, counters) = self.result?;
        Some(WindowResult {
            messages: self.messages,
            bytes: self.bytes,
            elapsed,
            usage,
            counters,
            histogram: self.histogram,
        })
    }
}
