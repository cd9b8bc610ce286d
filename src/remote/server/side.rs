//! A run's side here: one worker per flow, started, pinned with its counters open and held
//! at the barrier until the client's `Go` fixes the schedule (before it they neither send nor
//! read), and ended: stopped and its flows shut when the session failed, its samples
//! collected; and, when the client asked, its flows' TCP_INFO sampled per slice as a local
//! run samples them, sent back thinned to what the wire carries.
use super::budget::ByteBudget;
use super::watchdog::{Guarded, Watchdog};
use super::{refuse, Refusal};
use crate::config::RunSpec;
use crate::engine::control::Control;
use crate::engine::slices::SliceBoard;
use crate::engine::tcp_sampler::{self, Sampler};
use crate::engine::worker::{Role, ThreadSample};
use crate::engine::{self, Shared, STOP_GRACE};
use crate::remote::channel::ControlStream;
use crate::remote::protocol::{ErrorCode, Message};
use crate::transport::Endpoint;
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// This side's workers, started and held at the barrier (`start`) until `Go` fixes the
/// schedule, with what the session follows them by.
pub(super) struct Side {
    pub(super) control: Arc<Control>,
    pub(super) board: Arc<SliceBoard>,
    pub(super) handles: Vec<std::thread::JoinHandle<ThreadSample>>,
    pub(super) endpoints: Vec<Arc<Endpoint>>,
    /// The barrier the workers wait at, until the session passes it.
    start: Option<Arc<Barrier>>,
    /// The flows' TCP_INFO per slice (or why there is none), until `tcp_info` takes it.
    sampler: Option<Sampler>,
}

impl Side {
    /// A watchdog that holds this side to `budget` and ends it and the session's control
    /// connection at `at`.
    pub(super) fn guard(
        &self,
        stream: &ControlStream,
        at: Instant,
        budget: Option<ByteBudget>,
    ) -> Result<Watchdog, Refusal> {
        let failed = |e: std::io::Error| refuse(ErrorCode::Failed, format!("the watchdog: {e}"));
        let guarded = Guarded {
            control: self.control.clone(),
            endpoints: self.endpoints.clone(),
            stream: TcpStream::try_clone(stream).map_err(failed)?,
        };
        Watchdog::arm(at, guarded, budget).map_err(failed)
    }

    /// `Go`: the schedule fixed from now, then the workers let past the barrier. Returns the
    /// measured phase's bounds.
    pub(super) fn go(&mut self, spec: &RunSpec) -> (Instant, Instant) {
        let bounds = self
            .control
            .schedule(Instant::now(), spec.warmup, spec.duration);
        self.release();
        bounds
    }

    /// Lets the workers past the barrier, once.
    fn release(&mut self) {
        if let Some(start) = self.start.take() {
            start.wait();
        }
    }

    /// Ends the side: a failed session stops it and shuts its flows first, so workers still
    /// held at the barrier pass it only to stop, having sent nothing. Returns the samples
    /// and whether the flows had to be shut to collect them.
    pub(super) fn end(&mut self, failed: bool) -> (Vec<ThreadSample>, bool) {
        if failed {
            self.control.stop();
            self.endpoints.iter().for_each(|ep| ep.abort());
        }
        self.release();
        let deadline = Instant::now() + STOP_GRACE;
        engine::collect(std::mem::take(&mut self.handles), &self.endpoints, deadline)
    }

    /// The `tcp_info` message, once the side has ended (the sampler stops with the run).
    pub(super) fn tcp_info(&mut self) -> Message {
        let sampling = self.sampler.take().map(Sampler::finish).unwrap_or_default();
        let (series, unavailable_reason) = engine::tcp_peer::for_the_wire(sampling);
        Message::TcpInfo {
            series,
            unavailable_reason,
        }
    }
}

/// Starts one worker per flow in `role`; each pins itself, opens its counters and waits at
/// the barrier for `Go`. A sender hands over at most `sends_per_flow` messages, when given.
pub(super) fn start_side(
    spec: &RunSpec,
    (role, sends_per_flow): (Role, Option<u64>),
    slice_count: usize,
    flows: Vec<(Endpoint, usize)>,
) -> Result<Side, Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let control = Arc::new(Control::new().map_err(|e| failed("mapping the schedule", e))?);
    let start = Arc::new(Barrier::new(spec.threads + 1));
    let board = Arc::new(SliceBoard::new(slice_count));
    let shared = Shared {
        control: control.clone(),
        start: start.clone(),
        board: board.clone(),
    };
    let workers = flows
        .into_iter()
        .enumerate()
        .map(|(flow, (endpoint, buffer))| {
            let (mut worker, job) =
                engine::side_worker(spec, flow, role, endpoint, buffer, &shared)?;
            worker.sends_at_most = sends_per_flow.filter(|_| role == Role::Sender);
            Ok((worker, job))
        })
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| failed("setting up the mechanism", e))?;
    let ends = tcp_sampler::ends(spec, &workers);
    let (handles, endpoints) = engine::spawn(workers).map_err(|e| failed("starting workers", e))?;
    let sampler = Some(tcp_sampler::start(spec, &control, ends));
    Ok(Side {
        control,
        board,
        handles,
        endpoints,
        start: Some(start),
        sampler,
    })
}
