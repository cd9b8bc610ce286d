//! `--under-load N`: N bulk stream flows of the run's mechanism beside the measured rr flow.
//! The load is connected and started before the measured run opens its own flows and stopped
//! after its workers have been joined, so it runs through the whole warm-up and measured
//! phase. Its threads follow a schedule of their own (one `Control`, never the measured run's):
//! nothing of the load reaches the measured run's barrier, slices, counters or samples, and the
//! load's totals come back beside them (`RunOutcome::load`). Load threads are unpinned, or with
//! --pin on the CPUs of the rr flow each is beside (`config::under_load::placement`).
use super::control::Control;
use super::worker::{Job, Role, ThreadSample, Worker};
use super::{collect, side_worker, slices::SliceWatch, spawn, RunOutcome, Shared, STOP_GRACE};
use crate::config::under_load::{load_spec, placement};
use crate::config::{FlowPlacement, RunSpec};
use crate::error::Error;
use crate::transport::FlowConnector;
use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longer than any run: the load's phase is "measure" from its start until it is stopped.
const UNTIL_STOPPED: Duration = Duration::from_secs(365 * 24 * 3600);

/// What the load flows did, over the load's whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadTotals {
    pub flows: usize,
    pub message_size: usize,
    /// Where each load flow's two threads ran (CPUs; `None`: unpinned).
    pub placement: Vec<FlowPlacement>,
    /// Payload bytes the load's senders handed to the kernel, and its receivers received.
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// From the load's start (its threads past their barrier) to its stop.
    pub elapsed: Duration,
    /// What went wrong on a load thread, or a load thread that did not finish in time.
    pub errors: Vec<String>,
}

/// Runs `spec` through `engine::run_watched`, beside its load when it asks for one.
pub fn run_beside(
    spec: &RunSpec,
    connector: &dyn FlowConnector,
    interrupt: &AtomicBool,
    watch: SliceWatch,
) -> Result<RunOutcome, Error> {
    let Some(flows) = spec.under_load else {
        return super::run_watched(spec, connector, interrupt, watch);
    };
    let load = Load::start(spec, connector, flows).map_err(Error::Setup)?;
    let measured = super::run_watched(spec, connector, interrupt, watch);
    let totals = load.stop();
    let mut outcome = measured?;
    outcome.load = Some(totals);
    Ok(outcome)
}

/// The load under way.
struct Load {
    control: Arc<Control>,
    handles: Vec<JoinHandle<ThreadSample>>,
    endpoints: Vec<Arc<crate::transport::Endpoint>>,
    placement: Vec<FlowPlacement>,
    message_size: usize,
    started: Instant,
}

impl Load {
    /// Connects `flows` load flows, starts their threads and waits until every one is past
    /// its barrier: the load is running when this returns.
    fn start(spec: &RunSpec, connector: &dyn FlowConnector, flows: usize) -> io::Result<Load> {
        let load = load_spec(spec, flows);
        let ends = connector.connect(flows, load.socket_options())?;
        let control = Arc::new(Control::new()?);
        let shared = Shared::new(&load, 2 * flows, &control);
        let mut workers = Vec::with_capacity(2 * flows);
        let mut placements = Vec::with_capacity(flows);
        for (flow, pair) in ends.into_iter().enumerate() {
            let at = placement(spec, flow);
            placements.push(at);
            let buffer = pair.send_buffer;
            for (role, end) in [(Role::Sender, pair.sender), (Role::Receiver, pair.receiver)] {
                workers.push(load_worker(&load, flow, (role, end, buffer), &shared, at)?);
            }
        }
        control.schedule(Instant::now(), Duration::ZERO, UNTIL_STOPPED);
        let (handles, endpoints) = spawn(workers)?;
        shared.start.wait();
        Ok(Load {
            control,
            handles,
            endpoints,
            placement: placements,
            message_size: load.message_size,
            started: Instant::now(),
        })
    }

    /// Stops the load and joins its threads (shutting their sockets after the grace).
    fn stop(self) -> LoadTotals {
        self.control.stop();
        let elapsed = self.started.elapsed();
        let (samples, fired) = collect(self.handles, &self.endpoints, Instant::now() + STOP_GRACE);
        totals(&samples, fired, elapsed, self.placement, self.message_size)
    }
}

/// One side of a load flow: a stream worker that feeds no slice board and counts to nothing,
/// placed at `at`.
fn load_worker(
    load: &RunSpec,
    flow: usize,
    (role, end, send_buffer): (Role, crate::transport::Endpoint, usize),
    shared: &Shared,
    at: FlowPlacement,
) -> io::Result<(Worker, Job)> {
    let (mut worker, job) = side_worker(load, flow, role, end, send_buffer, shared)?;
    worker.slices = None;
    worker.count = None;
    worker.cpu = match role {
        Role::Sender => at.sender_cpu,
        Role::Receiver => at.receiver_cpu,
    };
    Ok((worker, job))
}

/// The load's totals from its threads' samples.
fn totals(
    samples: &[ThreadSample],
    watchdog_fired: bool,
    elapsed: Duration,
    placement: Vec<FlowPlacement>,
    message_size: usize,
) -> LoadTotals {
    let of = |role: Role, f: fn(&ThreadSample) -> u64| -> u64 {
        samples.iter().filter(|s| s.role == role).map(f).sum()
    };
    let mut errors: Vec<String> = samples
        .iter()
        .filter_map(|s| {
            Some(format!(
                "load flow {} {:?}: {}",
                s.flow,
                s.role,
                s.error.as_ref()?
            ))
        })
        .collect();
    if watchdog_fired {
        errors.push(format!(
            "a load thread did not finish within {} s of the stop; its sockets were shut",
            STOP_GRACE.as_secs()
        ));
    }
    LoadTotals {
        flows: placement.len(),
        message_size,
        placement,
        sent_bytes: of(Role::Sender, |s| s.sent_bytes),
        received_bytes: of(Role::Receiver, |s| s.received_bytes),
        elapsed,
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Pattern;
    use crate::transport::Link;

    #[test]
    fn the_load_runs_beside_the_rr_flow_and_stays_out_of_its_samples() {
        let spec = RunSpec {
            pattern: Pattern::Rr,
            under_load: Some(2),
            ..RunSpec::plain(64, Duration::from_millis(200))
        };
        let connector = Link::Loopback.connector(spec.transport).unwrap();
        let outcome = run_beside(&spec, &*connector, &AtomicBool::new(false), None).unwrap();
        let load = outcome.load.expect("a load ran");
        assert_eq!((load.flows, load.placement.len()), (2, 2));
        assert!(load.errors.is_empty(), "{:?}", load.errors);
        assert!(load.received_bytes > 0, "the load moved no bytes");
        assert!(load.sent_bytes >= load.received_bytes);
        assert!(load.elapsed >= spec.duration);
        // The measured run's samples are its own flow's two sides, nothing of the load.
        assert_eq!(outcome.samples.len(), 2);
        assert!(outcome.samples.iter().all(|s| s.flow == 0));
    }
}
