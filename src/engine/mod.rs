//! Runs one experiment point: connects the flows, starts a sending and a receiving thread per
//! flow, holds them at a start barrier, runs the warm-up, opens the measured phase, stops, and
//! collects each thread's sample. A watchdog shuts the sockets down if a side hangs. With
//! `--processes` one side of every flow runs in a forked child (`processes`); on a sink
//! (`--sink`) every flow has its sending side only (`sink`).
pub(crate) mod batch;
pub(crate) mod bidir;
pub(crate) mod control;
pub(crate) mod crr;
mod crr_worker;
mod jobs;
pub(crate) mod load;
pub mod peer;
pub mod phases;
pub(crate) mod processes;
pub(crate) mod profiling;
pub(crate) mod runner;
pub(crate) mod sink;
pub(crate) mod slices;
pub(crate) mod tcp_peer;
pub(crate) mod tcp_sampler;
mod threads;
pub(crate) mod window;
pub(crate) mod worker;

use crate::config::{Pattern, RunSpec};
use crate::error::Error;
use crate::measure::machine::MachineCpu;
use crate::measure::profile::Profile;
use crate::mechanism::FlowContext;
use crate::transport::{Endpoint, FlowConnector, FlowEnds};
use control::Control;
use phases::StopReason;
use slices::SliceBoard;
use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use worker::{Job, Role, ThreadSample, Worker};

pub use runner::PointRunner;
pub(crate) use threads::collect;
pub use threads::{spawn, Started};

/// How long workers get to finish after the stop before the watchdog closes their sockets.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);
const WORKER_STACK: usize = 512 << 10;

/// What the engine hands back for one run.
pub struct RunOutcome {
    pub samples: Vec<ThreadSample>,
    /// Machine-wide CPU time over the measured phase, or why it is not given.
    pub machine: Result<MachineCpu, String>,
    /// The controller's measured phase, start to stop.
    pub measured: Duration,
    /// Ctrl-C arrived before the planned end.
    pub interrupted: bool,
    /// A side did not finish within the grace period and its sockets were shut down.
    pub watchdog_fired: bool,
    /// Where the flows ran.
    pub placement: String,
    /// What flow 0's sending side can hold in the kernel (socket buffer or pipe size).
    pub send_buffer_bytes: usize,
    /// The measured side's per-slice totals, for the slices the statistics use.
    pub slices: SliceSeries,
    /// Why the point never ran (its record keeps the configuration and says so).
    pub not_run: Option<String>,
    /// This kernel lacks what the point needs (the probe's reason): skipped, not failed.
    pub skipped: Option<String>,
    /// `--profile`: each side's CPU breakdown over the measured phase, or why there is none.
    pub profiles: Vec<(Role, Profile)>,
    /// `--sink`: what both veth ends counted over the whole run (set-up to tear-down), or why
    /// they could not be read; `None` off a sink.
    pub sink: Option<Result<crate::transport::sink::SinkCounters, String>>,
    /// On a sink: each CPU's softirq time over the measured phase; `None` elsewhere or when
    /// /proc/stat could not be read in time.
    pub softirq_by_cpu: Option<Vec<(usize, f64)>>,
    /// `--under-load`: what the load flows beside the measured ones did; `None` without.
    pub load: Option<load::LoadTotals>,
    /// Each local tcp side's TCP_INFO per slice, or why there is none.
    pub tcp: tcp_sampler::TcpSampling,
}

impl RunOutcome {
    /// A run that was measured: the controller's phases, every side's samples, and the
    /// (slice length, bytes, messages) of the measured side's slices.
    pub fn measured(
        phases: phases::Phases,
        samples: Vec<ThreadSample>,
        watchdog_fired: bool,
        placement: String,
        send_buffer_bytes: usize,
        (length, bytes, messages): (Duration, Vec<u64>, Vec<u64>),
    ) -> RunOutcome {
        RunOutcome {
            softirq_by_cpu: phases.softirq_by_cpu,
            samples,
            machine: phases.machine,
            measured: phases.measured,
            interrupted: phases.interrupted,
            watchdog_fired,
            placement,
            send_buffer_bytes,
            slices: SliceSeries {
                length,
                bytes,
                messages,
                stop: phases.stop,
            },
            not_run: None,
            skipped: None,
            profiles: Vec::new(),
            sink: None,
            load: None,
            tcp: Default::default(),
        }
    }

    /// A point this kernel cannot run (a mechanism or receive path its probe refused).
    pub fn skipped(spec: &RunSpec, reason: String) -> RunOutcome {
        RunOutcome {
            not_run: None,
            skipped: Some(reason),
            ..RunOutcome::not_run(spec, String::new())
        }
    }

    /// The outcome of a point that could not start (refused or failed before measuring).
    pub fn not_run(spec: &RunSpec, reason: String) -> RunOutcome {
        RunOutcome {
            samples: Vec::new(),
            machine: Err("the point did not run".into()),
            measured: Duration::ZERO,
            interrupted: false,
            watchdog_fired: false,
            placement: String::new(),
            send_buffer_bytes: 0,
            slices: SliceSeries {
                length: spec.stopping.slice,
                bytes: Vec::new(),
                messages: Vec::new(),
                stop: StopReason::Interrupted,
            },
            not_run: Some(reason),
            skipped: None,
            profiles: Vec::new(),
            sink: None,
            softirq_by_cpu: None,
            load: None,
            tcp: Default::default(),
        }
    }
}

/// Per-slice totals of the measured side (stream receiver, rr client).
#[derive(Debug, Clone, PartialEq)]
pub struct SliceSeries {
    pub length: Duration,
    pub bytes: Vec<u64>,
    pub messages: Vec<u64>,
    pub stop: StopReason,
}

impl SliceSeries {
    /// Each slice with its totals, in order.
    pub fn seen(&self) -> impl Iterator<Item = slices::SliceSeen> + '_ {
        let length = self.length;
        (self.bytes.iter().zip(&self.messages)).enumerate().map(
            move |(index, (&bytes, &messages))| slices::SliceSeen {
                index,
                length,
                bytes,
                messages,
            },
        )
    }
}

pub fn run(
    spec: &RunSpec,
    connector: &dyn FlowConnector,
    interrupt: &AtomicBool,
) -> Result<RunOutcome, Error> {
    run_watched(spec, connector, interrupt, None)
}

/// As `run`, telling `watch` (from the controller thread) of each slice of the measured side
/// as it completes, and of the rest after the join: every slice the record uses, in order.
pub fn run_watched(
    spec: &RunSpec,
    connector: &dyn FlowConnector,
    interrupt: &AtomicBool,
    slice_watch: slices::SliceWatch,
) -> Result<RunOutcome, Error> {
    let flows = open_flows(spec, connector).map_err(Error::Setup)?;
    let send_buffer_bytes = flows.first().map_or(0, |f| f.send_buffer);
    let control = Arc::new(Control::new().map_err(Error::Setup)?);
    // With `--processes` only one side of each flow waits at this barrier with the controller.
    let split = spec.processes.then(|| processes::child_role(spec.pattern));
    let shared = shared(spec, split, &control);
    let workers = all_workers(spec, flows, &shared).map_err(Error::Setup)?;
    let prepared = Prepared {
        workers,
        shared,
        placement: placement(spec, connector, split),
        send_buffer_bytes,
        split,
    };
    measure(spec, prepared, interrupt, slice_watch)
}

/// A run whose workers are made and not yet started.
struct Prepared {
    workers: Vec<(Worker, Job)>,
    shared: Shared,
    /// Where the sides run, in words.
    placement: String,
    /// What flow 0's sending side can hold in the kernel.
    send_buffer_bytes: usize,
    /// `--processes`: the role of the side every flow's child runs.
    split: Option<Role>,
}

/// Starts the workers (forking a side with `--processes`), runs the phases, joins them and
/// gathers the outcome: what every run shares, whatever its flows' ends.
fn measure(
    spec: &RunSpec,
    prepared: Prepared,
    interrupt: &AtomicBool,
    slice_watch: slices::SliceWatch,
) -> Result<RunOutcome, Error> {
    let (shared, workers, split) = (prepared.shared, prepared.workers, prepared.split);
    let (start, board, control) = (shared.start, shared.board, shared.control);
    let (workers, child) = match split {
        Some(role) => {
            let (mine, child) = processes::fork_side(workers, role, &control)?;
            (mine, Some(child))
        }
        None => (workers, None),
    };
    let local = local_roles(&workers);
    let tcp_ends = tcp_sampler::ends(spec, &workers);
    let (handles, endpoints) = spawn(workers).map_err(Error::Setup)?;
    let tcp_sampler = tcp_sampler::start(spec, &control, tcp_ends);
    let watch = child.map(|c| c.watch(&endpoints, &control)).transpose()?;
    let mut phases = phases::run_phases(
        spec,
        &control,
        &start,
        &board,
        interrupt,
        &local,
        slice_watch,
    );
    let deadline = Instant::now() + STOP_GRACE;
    let (mut samples, mut watchdog_fired) = collect(handles, &endpoints, deadline);
    if let Some(watch) = watch {
        watchdog_fired |= watch.finish(deadline, &endpoints, &mut samples);
    }
    // Named after the join, so the workers' last messages do not compete with it.
    let profiles = profiling::here(spec, split, phases.sampling.take());
    let (bytes, messages) = slices_after_join(&board, &phases, spec, slice_watch);
    let mut outcome = RunOutcome::measured(
        phases,
        samples,
        watchdog_fired,
        prepared.placement,
        prepared.send_buffer_bytes,
        (spec.stopping.slice, bytes, messages),
    );
    outcome.profiles = profiles;
    outcome.tcp = tcp_sampler.finish();
    Ok(outcome)
}

/// The roles whose threads run in this process: both, or with `--processes` the side not
/// forked, or on a sink the sender alone.
fn local_roles(workers: &[(Worker, Job)]) -> Vec<Role> {
    let mut roles = vec![Role::Sender, Role::Receiver];
    roles.retain(|r| workers.iter().any(|(w, _)| w.role == *r));
    roles
}

/// Where the sides run, in words: the connector's (crr's own listener), and with
/// `--processes` which side was forked.
fn placement(spec: &RunSpec, connector: &dyn FlowConnector, split: Option<Role>) -> String {
    let placement = match spec.pattern {
        Pattern::Crr => crr::describe(spec.transport),
        _ => connector.describe(),
    };
    match split {
        Some(_) => processes::describe(&placement, spec.pattern),
        None => placement,
    }
}

/// What the workers share with the controller: the control block, the start barrier (every
/// worker in this process, and the controller) and the slice board.
fn shared(spec: &RunSpec, split: Option<Role>, control: &Arc<Control>) -> Shared {
    let directions = if spec.bidir { 2 } else { 1 };
    let here = if split.is_some() { 1 } else { 2 } * spec.threads * directions;
    Shared::new(spec, here, control)
}

/// The slices' totals, read after the join (every worker has published every slice it
/// finished); the watcher is told of the slices it has not seen yet.
fn slices_after_join(
    board: &SliceBoard,
    phases: &phases::Phases,
    spec: &RunSpec,
    slice_watch: slices::SliceWatch,
) -> (Vec<u64>, Vec<u64>) {
    let totals = board.read(phases.slices_used);
    if let Some(tell) = slice_watch {
        let told = phases.slices_told;
        board.tell(tell, spec.stopping.slice, told, phases.slices_used);
    }
    totals
}

/// The run's flows: connected by the transport, or for crr listening sockets the clients
/// connect to in each transaction.
fn open_flows(spec: &RunSpec, connector: &dyn FlowConnector) -> io::Result<Vec<FlowEnds>> {
    if spec.pattern == Pattern::Crr {
        crr::listen(spec.transport, spec.threads)
    } else {
        connector.connect(spec.threads, spec.socket_options())
    }
}

/// Every flow's two workers (with `--bidir` the reverse direction's two before them).
fn all_workers(
    spec: &RunSpec,
    flows: Vec<FlowEnds>,
    shared: &Shared,
) -> io::Result<Vec<(Worker, Job)>> {
    let mut workers = Vec::with_capacity(2 * spec.threads);
    for (flow, pair) in flows.into_iter().enumerate() {
        if spec.bidir {
            workers.extend(bidir::reverse_workers(spec, flow, &pair, shared)?);
        }
        workers.extend(flow_workers(spec, flow, pair, shared)?);
    }
    Ok(workers)
}

/// What every worker of a run shares.
pub struct Shared {
    pub control: Arc<Control>,
    pub start: Arc<Barrier>,
    pub board: Arc<SliceBoard>,
}

impl Shared {
    /// What `workers_here` workers of this process share with the controller: the control
    /// block, the start barrier (those workers and the controller) and the slice board.
    pub fn new(spec: &RunSpec, workers_here: usize, control: &Arc<Control>) -> Shared {
        let slice_count = phases::div_duration(spec.duration, spec.stopping.slice).max(1);
        Shared {
            control: control.clone(),
            start: Arc::new(Barrier::new(workers_here + 1)),
            board: Arc::new(SliceBoard::new(slice_count)),
        }
    }
}

/// The two workers of one flow, with their jobs.
fn flow_workers(
    spec: &RunSpec,
    flow: usize,
    pair: FlowEnds,
    shared: &Shared,
) -> io::Result<[(Worker, Job); 2]> {
    Ok([
        side_worker(
            spec,
            flow,
            Role::Sender,
            pair.sender,
            pair.send_buffer,
            shared,
        )?,
        side_worker(
            spec,
            flow,
            Role::Receiver,
            pair.receiver,
            pair.send_buffer,
            shared,
        )?,
    ])
}

/// The worker of one side (`role`) of one flow, with its job. `send_buffer` is what the
/// flow's sending end can hold in the kernel.
pub fn side_worker(
    spec: &RunSpec,
    flow: usize,
    role: Role,
    endpoint: Endpoint,
    send_buffer: usize,
    shared: &Shared,
) -> io::Result<(Worker, Job)> {
    let placement = spec.placement(flow);
    let ctx = FlowContext {
        flow: flow as u32,
        message_size: spec.message_size,
        fill_pattern: spec.verify,
        send_buffer,
        queue_depth: spec.queue_depth,
        flush_each: spec.pattern != Pattern::Stream,
        framing: spec.framing(),
    };
    let job = jobs::job(spec, role, ctx, &endpoint)?;
    let measured = role == measured_side(spec);
    let worker = Worker {
        flow: ctx.flow,
        role,
        cpu: match role {
            Role::Sender => placement.sender_cpu,
            Role::Receiver => placement.receiver_cpu,
        },
        message_size: spec.message_size,
        counters: spec.counters,
        slices: measured.then(|| (shared.board.clone(), spec.stopping.slice)),
        count: spec
            .stopping
            .messages_per_flow
            .filter(|_| measured)
            .map(|share| (share, spec.threads)),
        sends_at_most: None,
        stamp_every: match (spec.pattern, role) {
            (Pattern::Rr | Pattern::Crr, Role::Sender) => 1,
            _ => batch::messages_per_stamp(spec.message_size),
        },
        control: shared.control.clone(),
        start: shared.start.clone(),
        endpoint: Arc::new(endpoint),
        reverse: false,
    };
    Ok((worker, job))
}

/// The side a run's statistics follow: `measured_role`'s, except on a sink, which has no
/// receiver: there the stream sender's throughput, what the kernel accepted.
pub fn measured_side(spec: &RunSpec) -> Role {
    match spec.network.is_sink() {
        true => Role::Sender,
        false => measured_role(spec.pattern),
    }
}

/// The side the statistics follow: the stream receiver's throughput, the rr client's round
/// trips.
pub fn measured_role(pattern: Pattern) -> Role {
    match pattern {
        Pattern::Stream => Role::Receiver,
        Pattern::Rr | Pattern::Crr => Role::Sender,
    }
}
