//! TCP_INFO per flow, per slice: a thread of its own, never a worker, reads each local tcp
//! socket's tcp_info once at the start of the measured phase, once at every slice boundary
//! and once at the stop (one getsockopt(2) per socket each time), so the per-message path
//! stays as it was. It sleeps on the run's stop word between readings, as the controller does.
use super::control::{Control, Phase};
use super::worker::{Job, Role, Worker};
use crate::config::{Pattern, RunSpec};
use crate::sys::tcp_info::{tcp_flow_info, TcpFlowInfo};
use crate::transport::{buffers, Endpoint, Transport};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One local side of one tcp flow, as the sampler saw it. A `bytepath server` sends its
/// side's series back in this form (`tcp_peer` bounds and checks them).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSeries {
    pub flow: u32,
    pub role: Role,
    /// When each sample was read, after the start of the measured phase (nanoseconds on the
    /// wire).
    #[serde(with = "nanos")]
    pub at: Vec<Duration>,
    pub samples: Vec<TcpFlowInfo>,
    /// SO_RCVBUF and SO_SNDBUF as getsockopt(2) read them back at the start.
    pub buffers: Option<(usize, usize)>,
    /// Why sampling this socket stopped early, if it did.
    pub error: Option<String>,
}

/// What a run's sampling gave: each local tcp side's series, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum TcpSampling {
    Sampled(Vec<TcpSeries>),
    NotSampled(String),
    /// `--remote`: this host's sides, and the server's as it sent them back (or why it sent
    /// none).
    WithPeer {
        here: Vec<TcpSeries>,
        peer: Result<Vec<TcpSeries>, String>,
    },
}

impl Default for TcpSampling {
    fn default() -> Self {
        TcpSampling::NotSampled("TCP_INFO is sampled only where both sides run in this process's engine (loopback, --netns, --processes); this placement's flows were not sampled".into())
    }
}

/// Why a run asked not to sample has no TCP_INFO (a server's side, too, when its driver did
/// not ask for it).
pub const SWITCHED_OFF: &str =
    "not sampled: TCP_INFO was switched off for this run (--tcp-info off, or a --remote driver that did not ask for it)";

/// Why a run's flows have no TCP_INFO, or `None` when they have.
pub fn why_not_sampled(spec: &RunSpec) -> Option<String> {
    if !spec.tcp_info {
        return Some(SWITCHED_OFF.into());
    }
    if spec.transport != Transport::Tcp {
        let t = spec.transport.name();
        return Some(format!(
            "{t} flows are not tcp: the kernel keeps no tcp_info for them"
        ));
    }
    (spec.pattern == Pattern::Crr).then(|| {
        "crr opens a connection per transaction: no flow lives across slices to be sampled".into()
    })
}

/// A socket to sample.
pub struct TcpEnd {
    flow: u32,
    role: Role,
    endpoint: Arc<Endpoint>,
}

/// The local tcp sides of a run's workers (the reverse direction of `--bidir` shares its
/// flow's sockets, so each socket is sampled once).
pub fn ends(spec: &RunSpec, workers: &[(Worker, Job)]) -> Result<Vec<TcpEnd>, String> {
    if let Some(why) = why_not_sampled(spec) {
        return Err(why);
    }
    Ok(workers
        .iter()
        .filter(|(w, _)| !w.reverse && w.endpoint.socket_fd().is_some())
        .map(|(w, _)| TcpEnd {
            flow: w.flow,
            role: w.role,
            endpoint: w.endpoint.clone(),
        })
        .collect())
}

/// A running sampler, or why there is none.
pub struct Sampler(Result<JoinHandle<Vec<TcpSeries>>, String>);

/// Starts the sampler beside the workers (before the controller fixes the schedule).
pub fn start(spec: &RunSpec, control: &Arc<Control>, ends: Result<Vec<TcpEnd>, String>) -> Sampler {
    let (control, slice) = (control.clone(), spec.stopping.slice);
    let handle = ends.and_then(|ends| {
        std::thread::Builder::new()
            .name("bytepath-tcp-info".into())
            .spawn(move || sample(&control, slice, ends))
            .map_err(|e| format!("the TCP_INFO sampler could not start: {e}"))
    });
    Sampler(handle)
}

impl Sampler {
    /// The series, once the run has stopped (the thread ends at the stop).
    pub fn finish(self) -> TcpSampling {
        match self.0 {
            Err(why) => TcpSampling::NotSampled(why),
            Ok(handle) => match handle.join() {
                Ok(series) => TcpSampling::Sampled(series),
                Err(_) => TcpSampling::NotSampled("the TCP_INFO sampler panicked".into()),
            },
        }
    }
}

/// The sampler's loop: a reading at the start of the measured phase, at each slice boundary,
/// and at the stop.
fn sample(control: &Control, slice: Duration, ends: Vec<TcpEnd>) -> Vec<TcpSeries> {
    let mut series: Vec<TcpSeries> = ends.iter().map(opened).collect();
    let Some(from) = wait_for_schedule(control) else {
        return series;
    };
    let mut next = from;
    loop {
        let now = Instant::now();
        if now < next {
            control.wait_for_stop(next - now);
        }
        let now = Instant::now();
        let stopped = control.phase_at(now) == Phase::Stop;
        if now >= next || stopped {
            for (end, s) in ends.iter().zip(&mut series) {
                read_one(end, s, now.saturating_duration_since(from));
            }
            next += slice;
        }
        if stopped {
            return series;
        }
    }
}

/// A side's empty series, with its buffers as the kernel reads them back.
fn opened(end: &TcpEnd) -> TcpSeries {
    let fd = end.endpoint.socket_fd();
    TcpSeries {
        flow: end.flow,
        role: end.role,
        at: Vec::with_capacity(64),
        samples: Vec::with_capacity(64),
        buffers: fd.and_then(|fd| buffers::granted(fd).ok()),
        error: None,
    }
}

/// One reading of one side; a failed one ends that side's series with the reason.
fn read_one(end: &TcpEnd, series: &mut TcpSeries, at: Duration) {
    if series.error.is_some() {
        return;
    }
    let Some(fd) = end.endpoint.socket_fd() else {
        return;
    };
    match tcp_flow_info(fd) {
        Ok(info) => {
            series.at.push(at);
            series.samples.push(info);
        }
        Err(e) => series.error = Some(format!("getsockopt(TCP_INFO) failed: {e}")),
    }
}

/// The start of the measured phase, once the controller has fixed it (it does so right after
/// the workers start); `None` when the run stops first.
fn wait_for_schedule(control: &Control) -> Option<Instant> {
    loop {
        if let Some(from) = control.scheduled_from() {
            return Some(from);
        }
        if control.is_stopped() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Reading times as whole nanoseconds, the form they travel in.
mod nanos {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(at: &[Duration], s: S) -> Result<S::Ok, S::Error> {
        let ns: Vec<u64> = at.iter().map(|d| d.as_nanos() as u64).collect();
        ns.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Duration>, D::Error> {
        let ns = Vec::<u64>::deserialize(d)?;
        Ok(ns.into_iter().map(Duration::from_nanos).collect())
    }
}
