//! A run whose other side is a peer outside this process: `bytepath server` on another host
//! (`--remote`). Only the measured side's workers (stream receiver, rr client) run here; the
//! peer runs the other side of every flow on its own schedule, released by `start` just before
//! this side fixes its own, and sends its samples back when the run ends. Like a `--processes`
//! child, a peer that fails or vanishes stops the run and shuts the flows down, so the local
//! workers end at once, and every sample it did not send is marked missing with the reason.
use super::control::Control;
use super::worker::{Role, ThreadSample};
use super::{collect, measured_role, phases, side_worker, spawn, RunOutcome, Shared, STOP_GRACE};
use crate::config::{Pattern, RunSpec};
use crate::error::Error;
use crate::measure::profile::Profile;
use crate::transport::{Endpoint, SocketOptions};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// One flow's local end, and what its sending end can hold in the kernel.
pub struct LocalEnd {
    pub endpoint: Endpoint,
    pub send_buffer: usize,
}

/// The measured side's per-slice totals, when the peer ran that side.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerSlices {
    pub length: Duration,
    pub bytes: Vec<u64>,
    pub messages: Vec<u64>,
}

/// What a peer hands back when the run ends.
#[derive(Debug, Default)]
pub struct PeerEnd {
    /// The watchdog fired: the flows were aborted.
    pub fired: bool,
    /// The measured side's slices, when the peer measured.
    pub slices: Option<PeerSlices>,
    /// `--profile`: the peer's side's CPU breakdown, or why there is none.
    pub profile: Option<Profile>,
    /// TCP_INFO of the peer's sides, checked, or why there is none (`None`: not asked).
    pub tcp: Option<Result<Vec<super::tcp_sampler::TcpSeries>, String>>,
}

/// The other side of every flow, run by a peer.
pub trait Peer {
    /// The side this process runs of every flow: the measured one unless the peer measures
    /// (`run --remote --reverse`).
    fn local_role(&self, pattern: Pattern) -> Role {
        measured_role(pattern)
    }
    /// Opens the flows' local ends; when it returns, the peer's side of each is set up.
    fn connect(&mut self, spec: &RunSpec, options: SocketOptions) -> Result<Vec<LocalEnd>, Error>;
    /// Where the sides run, in the record's words.
    fn describe(&self) -> String;
    /// Releases the peer's side: its warm-up starts now, then its measured phase.
    fn start(&mut self) -> Result<(), Error>;
    /// Watches the peer until the run ends: on failure it stops `control` and aborts
    /// `endpoints`.
    fn watch(
        self: Box<Self>,
        endpoints: &[Arc<Endpoint>],
        control: &Arc<Control>,
    ) -> Result<Box<dyn PeerWatch>, Error>;
}

/// A peer while its results are awaited.
pub trait PeerWatch {
    /// This side's run ended: the peer must stop too.
    fn stop(&mut self);
    /// Adds the peer's samples to `samples`, waiting until `deadline`; then the flows are
    /// aborted. Returns whether the watchdog fired, the peer's slices if it measured, and its
    /// profile if one was asked for.
    fn finish(
        self: Box<Self>,
        deadline: Instant,
        endpoints: &[Arc<Endpoint>],
        samples: &mut Vec<ThreadSample>,
    ) -> PeerEnd;
}

/// The measured side's slices: the peer's when it measured (cut to the slices this schedule
/// used), else this side's board.
fn slices(
    theirs: Option<PeerSlices>,
    peer_measures: bool,
    phases: &phases::Phases,
    board: &super::slices::SliceBoard,
    spec: &RunSpec,
) -> (Duration, Vec<u64>, Vec<u64>) {
    match theirs {
        // This schedule says how many slices the run used (fewer when interrupted).
        Some(mut theirs) if peer_measures => {
            theirs.bytes.truncate(phases.slices_used);
            theirs.messages.truncate(phases.slices_used);
            (theirs.length, theirs.bytes, theirs.messages)
        }
        // The peer failed to send them: its missing samples already fail the run.
        _ if peer_measures => (spec.stopping.slice, Vec::new(), Vec::new()),
        _ => {
            let (bytes, messages) = board.read(phases.slices_used);
            (spec.stopping.slice, bytes, messages)
        }
    }
}

/// The peer did not start: the local workers wait at the start barrier, so they are released
/// into a stopped run and joined.
fn release_stopped(
    control: &Control,
    start: &Barrier,
    handles: Vec<std::thread::JoinHandle<ThreadSample>>,
    endpoints: &[Arc<Endpoint>],
) {
    control.stop();
    endpoints.iter().for_each(|ep| ep.abort());
    start.wait();
    let _ = collect(handles, endpoints, Instant::now() + STOP_GRACE);
}

/// The peer's profile of its side, or why there is none.
fn their_profile(sent: Option<Profile>) -> Profile {
    sent.unwrap_or_else(|| Profile::Unavailable {
        reason: "the peer sent no profile of its side".into(),
    })
}

/// Runs `spec` with this process's side only and `peer` running the other.
pub fn run_with_peer(
    spec: &RunSpec,
    mut peer: Box<dyn Peer>,
    interrupt: &AtomicBool,
) -> Result<RunOutcome, Error> {
    let options = spec.socket_options();
    let ends = peer.connect(spec, options)?;
    let send_buffer_bytes = ends.first().map_or(0, |e| e.send_buffer);
    let control = Arc::new(Control::new().map_err(Error::Setup)?);
    let shared = Shared::new(spec, spec.threads, &control);
    let (start, board) = (shared.start.clone(), shared.board.clone());
    let role = peer.local_role(spec.pattern);
    // The peer measures: its slices replace this side's board, which nobody here writes.
    let peer_measures = role != measured_role(spec.pattern);
    let workers = ends
        .into_iter()
        .enumerate()
        .map(|(flow, end)| side_worker(spec, flow, role, end.endpoint, end.send_buffer, &shared))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(Error::Setup)?;
    let placement = peer.describe();
    let tcp_ends = super::tcp_sampler::ends(spec, &workers);
    let (handles, endpoints) = spawn(workers).map_err(Error::Setup)?;
    let tcp_sampler = super::tcp_sampler::start(spec, &control, tcp_ends);
    let started = peer.start();
    let mut watch = match started.and_then(|()| peer.watch(&endpoints, &control)) {
        Ok(watch) => watch,
        Err(e) => {
            release_stopped(&control, &start, handles, &endpoints);
            return Err(e);
        }
    };
    let mut phases = phases::run_phases(spec, &control, &start, &board, interrupt, &[role], None);
    watch.stop();
    let deadline = Instant::now() + STOP_GRACE;
    let (mut samples, mut watchdog_fired) = collect(handles, &endpoints, deadline);
    let end = watch.finish(deadline, &endpoints, &mut samples);
    watchdog_fired |= end.fired;
    let mut profiles = phases.sampling.take().map_or_else(Vec::new, |s| s.build());
    if spec.profile {
        profiles.push((role.other(), their_profile(end.profile)));
    }
    let (length, bytes, messages) = slices(end.slices, peer_measures, &phases, &board, spec);
    let mut outcome = RunOutcome::measured(
        phases,
        samples,
        watchdog_fired,
        placement,
        send_buffer_bytes,
        (length, bytes, messages),
    );
    outcome.profiles = profiles;
    outcome.tcp = super::tcp_peer::joined(tcp_sampler.finish(), end.tcp);
    Ok(outcome)
}
