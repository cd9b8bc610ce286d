//! While the run goes on: the thread that reads the server's results back (`read_results`) and
//! the `PeerWatch` that stops the server's side and collects them when the local side ends.
use super::{STEP_TIMEOUT, WATCH_POLL};
use crate::config::Target;
use crate::engine::control::Control;
use crate::engine::peer::{PeerEnd, PeerSlices, PeerWatch};
use crate::engine::tcp_peer;
use crate::engine::tcp_sampler::TcpSeries;
use crate::engine::worker::{Role, ThreadSample};
use crate::error::Error;
use crate::remote::channel::ControlStream;
use crate::remote::escaped;
use crate::remote::protocol::{self, FrameError, Message};
use crate::transport::Endpoint;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// The server a run's results come from, and what the run knows of them beforehand.
pub(super) struct Server {
    pub(super) target: Target,
    /// The workers it runs: (flow, role).
    pub(super) expected: Vec<(u32, Role)>,
    /// Why its side has no profile, when it cannot sample.
    pub(super) no_profile: Option<String>,
    /// Why its sides have no TCP_INFO, when it cannot sample them.
    pub(super) no_tcp_info: Option<String>,
}

/// Starts the thread that reads the server's results back; the watch stops the server's side
/// and collects them.
pub(super) fn start(
    stream: ControlStream,
    server: Server,
    endpoints: &[Arc<Endpoint>],
    control: &Arc<Control>,
) -> Result<Box<dyn PeerWatch>, Error> {
    let writer = stream.try_clone().map_err(Error::Setup)?;
    stream
        .set_read_timeout(Some(WATCH_POLL))
        .map_err(Error::Setup)?;
    let (tx, rx) = mpsc::channel();
    let endpoints = endpoints.to_vec();
    let control = control.clone();
    thread::Builder::new()
        .name("bytepath-remote-watch".into())
        .spawn(move || {
            let report = read_results(stream, &control);
            if report.is_err() {
                control.stop();
                endpoints.iter().for_each(|ep| ep.abort());
            } else if report.as_ref().is_ok_and(|r| r.error.is_some()) {
                // The server cut its side short (it is ending, or its watchdog fired):
                // this side stops too instead of waiting out the schedule alone.
                control.stop();
            }
            let _ = tx.send(report);
        })
        .map_err(Error::Setup)?;
    Ok(Box::new(RemoteWatch {
        server,
        writer,
        results: rx,
    }))
}

/// What the server sent back: its samples, its slices when it measured, and why its side
/// failed, if it did.
#[derive(Default)]
struct Report {
    samples: Vec<ThreadSample>,
    slices: Option<Box<PeerSlices>>,
    profile: Option<Box<crate::measure::profile::Profile>>,
    /// Its sides' TCP_INFO as sent (unchecked), or why it has none. (This and the slices are
    /// boxed: the report is also the error a failed watch returns, kept small.)
    tcp: Option<Box<Result<Vec<TcpSeries>, String>>>,
    error: Option<String>,
}

/// Reads `Sample` (and `Slices`) frames until `Done`. Before the local run ends, silence is
/// expected; a closed or broken control connection is the server gone (`Err`: the flows must
/// be aborted). Every error text the server sends is kept escaped: it is shown later.
fn read_results(mut stream: ControlStream, control: &Control) -> Result<Report, Report> {
    let mut report = Report::default();
    let mut quiet_since: Option<Instant> = None;
    let failed = |mut report: Report, why: String| {
        report.error = Some(escaped(&why));
        Err(report)
    };
    loop {
        match protocol::read_message(&mut stream) {
            Ok(Message::Sample { mut sample }) => {
                sample.error = sample.error.as_deref().map(escaped);
                report.samples.push(*sample)
            }
            Ok(Message::Profile { profile }) => report.profile = Some(profile),
            Ok(Message::TcpInfo {
                series,
                unavailable_reason,
            }) => {
                report.tcp = Some(Box::new(match unavailable_reason {
                    Some(why) => Err(escaped(&why)),
                    None => Ok(series),
                }))
            }
            Ok(Message::Slices {
                slice_ns,
                bytes,
                messages,
            }) => {
                report.slices = Some(Box::new(PeerSlices {
                    length: Duration::from_nanos(slice_ns),
                    bytes,
                    messages,
                }))
            }
            Ok(Message::Done { error, .. }) => {
                let _ = protocol::write_message(&mut stream, &Message::Bye);
                report.error = error.as_deref().map(escaped);
                return Ok(report);
            }
            Ok(Message::Error { message, .. }) => return failed(report, message),
            Ok(other) => {
                let why = format!("sent an unexpected {} message", other.kind());
                return failed(report, why);
            }
            Err(FrameError::Idle) => {
                // After the local side stopped, the server has STOP_GRACE plus a step to report.
                if control.is_stopped() {
                    let since = *quiet_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > crate::engine::STOP_GRACE + STEP_TIMEOUT {
                        return failed(report, "sent no results after the run".into());
                    }
                }
            }
            Err(e) => return failed(report, format!("the control connection failed: {e}")),
        }
    }
}

struct RemoteWatch {
    server: Server,
    writer: ControlStream,
    results: Receiver<Result<Report, Report>>,
}

/// The server's TCP_INFO as the record takes it: checked against the sides it runs, its
/// texts escaped; or why there is none.
fn their_tcp(
    sent: Option<Box<Result<Vec<TcpSeries>, String>>>,
    server: &Server,
) -> Option<Result<Vec<TcpSeries>, String>> {
    if let Some(why) = &server.no_tcp_info {
        return Some(Err(why.clone()));
    }
    let checked = (*sent?).and_then(|series| tcp_peer::accepted(series, &server.expected));
    Some(checked.map(|mut series| {
        for s in &mut series {
            s.error = s.error.as_deref().map(escaped);
        }
        series
    }))
}

impl PeerWatch for RemoteWatch {
    fn stop(&mut self) {
        // The server may already be gone; the watching thread reports that.
        let _ = protocol::write_message(&mut self.writer, &Message::Stop);
    }

    fn finish(
        self: Box<Self>,
        deadline: Instant,
        endpoints: &[Arc<Endpoint>],
        samples: &mut Vec<ThreadSample>,
    ) -> PeerEnd {
        let wait = deadline.saturating_duration_since(Instant::now()) + STEP_TIMEOUT;
        let (report, fired) = match self.results.recv_timeout(wait) {
            Ok(Ok(report) | Err(report)) => (report, false),
            Err(_) => {
                endpoints.iter().for_each(|ep| ep.abort());
                let error = Some("sent no results in time".into());
                (
                    Report {
                        error,
                        ..Report::default()
                    },
                    true,
                )
            }
        };
        samples.extend(report.samples);
        let why = report
            .error
            .unwrap_or_else(|| "its worker thread panicked".into());
        let server = &self.server;
        let error = format!("no result from the server at {}: {why}", server.target);
        crate::engine::worker::fill_missing(samples, &server.expected, 0, &error);
        let tcp = their_tcp(report.tcp, server);
        let profile = match (report.profile, self.server.no_profile) {
            (Some(p), _) => Some(*p),
            (None, Some(reason)) => Some(crate::measure::profile::Profile::Unavailable { reason }),
            (None, None) => None,
        };
        PeerEnd {
            fired,
            slices: report.slices.map(|s| *s),
            profile,
            tcp,
        }
    }
}
