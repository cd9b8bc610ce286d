//! Doubles for the driver's unit tests (in the manner of hyperfine's mock `Executor`): a
//! `PointRunner` that answers every run with the figures a script gives it, and a `Machine`
//! whose visits cost a scripted wall time, some of them disturbed, whose canaries and probe
//! are only counted. The studies' loops (the schedule, the budget, the adaptive rounds,
//! `--resume`, the answers) run on them without measuring anything.
use super::machine::{Machine, VisitWatch};
use crate::config::watch::Watch;
use crate::config::{Pattern, RunSpec};
use crate::engine::phases::StopReason;
use crate::engine::slices::SliceSeen;
use crate::engine::window::WindowResult;
use crate::engine::worker::{Role, ThreadSample};
use crate::engine::{PointRunner, RunOutcome, SliceSeries};
use crate::error::Error;
use crate::measure::counters::{CounterSample, CounterValue};
use crate::measure::histogram::LatencyHistogram;
use crate::measure::interference::Interference;
use crate::sys::usage::ThreadUsage;
use std::cell::{Cell, RefCell};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What one scripted run gives.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// Measured: the headline figure (Gbit/s received for stream, round trips/s for rr) and
    /// each side's CPU time per payload byte.
    Measured { headline: f64, cpu_ns_per_byte: f64 },
    /// The run failed with this error.
    Failed(String),
    /// This kernel lacks what the point needs.
    Skipped(String),
}

/// The figure of a run: its spec, and how many runs of the same point came before it.
type Script = dyn Fn(&RunSpec, usize) -> Figure;

/// A `PointRunner` that measures nothing: every run's figures come from the script, and
/// every run is kept, so a test can count what the study asked for.
pub struct ScriptedRunner {
    script: Box<Script>,
    runs: RefCell<Vec<RunSpec>>,
    /// Ctrl-C is pressed (the flag set) once this many runs were made.
    interrupt_after: Option<(usize, &'static AtomicBool)>,
}

impl ScriptedRunner {
    pub fn new(script: impl Fn(&RunSpec, usize) -> Figure + 'static) -> ScriptedRunner {
        ScriptedRunner {
            script: Box::new(script),
            runs: RefCell::new(Vec::new()),
            interrupt_after: None,
        }
    }

    /// Sets `flag` (as Ctrl-C does) after `runs` runs.
    pub fn interrupting(mut self, runs: usize, flag: &'static AtomicBool) -> ScriptedRunner {
        self.interrupt_after = Some((runs, flag));
        self
    }

    /// Every run made, in order.
    pub fn runs(&self) -> Vec<RunSpec> {
        self.runs.borrow().clone()
    }
}

/// Two runs of the same point: what a study's point names.
pub fn same_point(a: &RunSpec, b: &RunSpec) -> bool {
    (
        a.transport,
        a.mechanism,
        a.pattern,
        a.message_size,
        a.threads,
        a.pipe_size,
        a.bidir,
    ) == (
        b.transport,
        b.mechanism,
        b.pattern,
        b.message_size,
        b.threads,
        b.pipe_size,
        b.bidir,
    )
}

impl PointRunner for ScriptedRunner {
    fn announce(&self) -> Option<String> {
        None
    }

    fn place(&self, spec: RunSpec) -> RunSpec {
        spec
    }

    fn run(&self, spec: &RunSpec, _: &AtomicBool) -> Result<RunOutcome, Error> {
        let before = self
            .runs
            .borrow()
            .iter()
            .filter(|r| same_point(r, spec))
            .count();
        self.runs.borrow_mut().push(spec.clone());
        if let Some((after, flag)) = self.interrupt_after {
            if self.runs.borrow().len() >= after {
                flag.store(true, Ordering::SeqCst);
            }
        }
        Ok(match (self.script)(spec, before) {
            Figure::Measured {
                headline,
                cpu_ns_per_byte,
            } => measured(spec, headline, cpu_ns_per_byte),
            Figure::Failed(why) => RunOutcome::not_run(spec, why),
            Figure::Skipped(why) => RunOutcome::skipped(spec, why),
        })
    }

    fn run_watched(
        &self,
        spec: &RunSpec,
        interrupt: &AtomicBool,
        watch: &dyn Fn(SliceSeen),
    ) -> Result<RunOutcome, Error> {
        let outcome = self.run(spec, interrupt)?;
        outcome.slices.seen().for_each(watch);
        Ok(outcome)
    }
}

/// Slices of a scripted run: enough for a slice interval.
const SLICES: u32 = 4;

/// A run that moved what `headline` says over the spec's duration, both sides spending
/// `cpu_ns_per_byte` of CPU on every payload byte; with several flows (`--threads`) each flow's
/// two sides carry an equal share, so the record finds every side it expects.
fn measured(spec: &RunSpec, headline: f64, cpu_ns_per_byte: f64) -> RunOutcome {
    let elapsed = spec.duration.max(Duration::from_millis(4));
    let secs = elapsed.as_secs_f64();
    let size = spec.message_size.max(1) as u64;
    let messages = match spec.pattern {
        Pattern::Stream => (headline * 1e9 / 8.0 * secs / size as f64) as u64,
        Pattern::Rr | Pattern::Crr => (headline * secs) as u64,
    }
    .max(u64::from(SLICES));
    let bytes = messages * size;
    let flows = spec.threads.max(1) as u64;
    let (flow_messages, flow_bytes) = (messages / flows, messages / flows * size);
    let cpu = Duration::from_nanos((cpu_ns_per_byte * flow_bytes as f64) as u64);
    let side = |flow: u64, role| ThreadSample {
        window: Some(window(flow_messages, flow_bytes, elapsed, cpu)),
        total_messages: flow_messages,
        sent_bytes: if role == Role::Sender { flow_bytes } else { 0 },
        received_bytes: if role == Role::Receiver {
            flow_bytes
        } else {
            0
        },
        error: None,
        ..ThreadSample::missing(flow as u32, role, std::process::id(), String::new())
    };
    let slice = elapsed / SLICES;
    RunOutcome {
        samples: (0..flows)
            .flat_map(|flow| [side(flow, Role::Sender), side(flow, Role::Receiver)])
            .collect(),
        machine: Err("scripted: no machine-wide CPU".into()),
        measured: elapsed,
        interrupted: false,
        watchdog_fired: false,
        placement: "scripted".into(),
        send_buffer_bytes: 0,
        slices: SliceSeries {
            length: slice,
            bytes: vec![bytes / u64::from(SLICES); SLICES as usize],
            messages: vec![messages / u64::from(SLICES); SLICES as usize],
            stop: StopReason::FixedDuration,
        },
        not_run: None,
        skipped: None,
        profiles: Vec::new(),
        sink: None,
        tcp: crate::engine::tcp_sampler::TcpSampling::NotSampled("scripted: nothing ran".into()),
        softirq_by_cpu: None,
        load: spec
            .under_load
            .map(|flows| scripted_load(spec, flows, elapsed)),
    }
}

/// A scripted `--under-load`: each load flow moved 1 GB over the run, every byte received.
fn scripted_load(
    spec: &RunSpec,
    flows: usize,
    elapsed: Duration,
) -> crate::engine::load::LoadTotals {
    let bytes = flows as u64 * 1_000_000_000;
    crate::engine::load::LoadTotals {
        flows,
        message_size: crate::config::under_load::LOAD_MESSAGE_SIZE,
        placement: (0..flows)
            .map(|i| crate::config::under_load::placement(spec, i))
            .collect(),
        sent_bytes: bytes,
        received_bytes: bytes,
        elapsed,
        errors: Vec::new(),
    }
}

fn window(messages: u64, bytes: u64, elapsed: Duration, cpu: Duration) -> WindowResult {
    let mut histogram = LatencyHistogram::new();
    let per = elapsed.as_nanos() as u64 / messages.max(1);
    histogram.record_n(per, messages);
    WindowResult {
        messages,
        bytes,
        elapsed,
        usage: ThreadUsage {
            user: cpu / 2,
            system: cpu - cpu / 2,
            ..ThreadUsage::default()
        },
        counters: CounterSample {
            values: std::array::from_fn(|_| CounterValue::Unavailable("scripted".into())),
        },
        histogram,
    }
}

/// A machine that measures nothing: the `n`-th visit watched (from 0) costs `wall_s(n)`
/// seconds, the visits `disturbed` names were disturbed, and the canaries, settles and probes
/// asked for are counted.
pub struct ScriptedMachine {
    wall_s: Box<dyn Fn(usize) -> f64>,
    pub disturbed: Vec<usize>,
    watched: Cell<usize>,
    /// The round of every canary, in order.
    pub canaries: RefCell<Vec<usize>>,
    pub settles: Cell<usize>,
    pub probes: Cell<usize>,
}

impl ScriptedMachine {
    pub fn new(wall_s: impl Fn(usize) -> f64 + 'static) -> ScriptedMachine {
        ScriptedMachine {
            wall_s: Box::new(wall_s),
            disturbed: Vec::new(),
            watched: Cell::new(0),
            canaries: RefCell::new(Vec::new()),
            settles: Cell::new(0),
            probes: Cell::new(0),
        }
    }

    /// Visits watched so far.
    pub fn visits(&self) -> usize {
        self.watched.get()
    }
}

impl Machine for ScriptedMachine {
    fn probe(&self, _: &Path, _: &[usize]) -> Result<bool, Error> {
        self.probes.set(self.probes.get() + 1);
        Ok(false)
    }

    fn canary(&self, _: &Path, round: usize, _: &[usize]) -> Result<(), Error> {
        self.canaries.borrow_mut().push(round);
        Ok(())
    }

    fn settle(&self, _: &Watch, _: &[usize], _: &AtomicBool, _: bool) {
        self.settles.set(self.settles.get() + 1);
    }

    fn watch(&self, cpus: &[usize]) -> Box<dyn VisitWatch> {
        let n = self.watched.get();
        self.watched.set(n + 1);
        Box::new(ScriptedWatch {
            wall_s: (self.wall_s)(n),
            cpus: cpus.len(),
            disturbed: self.disturbed.contains(&n),
        })
    }
}

struct ScriptedWatch {
    wall_s: f64,
    cpus: usize,
    disturbed: bool,
}

impl VisitWatch for ScriptedWatch {
    fn end(self: Box<Self>, threshold: f64) -> (f64, Interference) {
        let others = if self.disturbed { 0.5 } else { 0.0 };
        let interference = Interference {
            wall_s: self.wall_s,
            cpus: self.cpus.max(1),
            others_cpu_share: others,
            irq_softirq_share: 0.0,
            steal_share: 0.0,
            runnable: None,
            cpu_pressure_share: None,
            memory_pressure_share: None,
            threshold,
            disturbed: self.disturbed,
        };
        (self.wall_s, interference)
    }
}
