//! Where the two sides of every flow run, chosen once per command: both on this host (over
//! loopback, or in two network namespaces joined by a veth pair: a `Link`), the sending side
//! alone on a sink (`--sink`, also a `Link`), or the other side on `bytepath server` on
//! another host (a `Peer`). `run`, `sweep` and `ipc` are handed one
//! `Sides`, opened from their arguments, and run every point through it as a `PointRunner`,
//! so no command picks a placement itself.
use crate::config::network::Placement;
use crate::config::{Network, RemoteRun, RunSpec};
use crate::engine::slices::{SliceSeen, SliceWatch};
use crate::engine::{self, PointRunner, RunOutcome};
use crate::error::Error;
use crate::remote::client::RemotePeer;
use crate::transport::sink::{SinkFlows, SinkLink};
use crate::transport::Link;
use std::sync::atomic::AtomicBool;

/// The placement of one command's runs, held for the whole command (a `--netns` link's
/// namespaces are deleted when it drops).
pub enum Sides {
    Here(Link),
    Remote(RemoteRun),
}

impl Sides {
    /// Sets up where the sides run. A remote server is asked for its hello (and the token
    /// checked) now, so an unreachable server or a wrong token is one error before any point,
    /// not a failed record per point.
    pub fn open(network: &Network, remote: Option<&RemoteRun>) -> Result<Sides, Error> {
        match remote {
            Some(remote) => {
                RemotePeer::new(remote.target.clone(), remote.token.clone(), remote.reverse)
                    .with_identity(remote.identity.clone())
                    .check()?;
                Ok(Sides::Remote(remote.clone()))
            }
            None => Ok(Sides::Here(Link::open(network)?)),
        }
    }
}

impl PointRunner for Sides {
    fn announce(&self) -> Option<String> {
        match self {
            Sides::Here(Link::Loopback) => None,
            Sides::Here(link) => Some(format!("in {}", link.describe())),
            Sides::Remote(remote) => Some(format!(
                "on two hosts: the server at {} runs the unmeasured side, this host measures",
                remote.target
            )),
        }
    }

    fn place(&self, spec: RunSpec) -> RunSpec {
        match self {
            Sides::Here(_) => spec,
            Sides::Remote(_) => RunSpec {
                network: Network {
                    placement: Placement::Remote,
                    ..Network::default()
                },
                ..spec
            },
        }
    }

    fn run(&self, spec: &RunSpec, interrupt: &AtomicBool) -> Result<RunOutcome, Error> {
        self.run_here_or_there(spec, interrupt, None)
    }

    /// On this host the controller tells each slice as it completes; a remote run tells them
    /// after it (the trait's default).
    fn run_watched(
        &self,
        spec: &RunSpec,
        interrupt: &AtomicBool,
        watch: &dyn Fn(SliceSeen),
    ) -> Result<RunOutcome, Error> {
        match self {
            Sides::Here(_) => self.run_here_or_there(spec, interrupt, Some(watch)),
            Sides::Remote(_) => {
                let outcome = self.run(spec, interrupt)?;
                outcome.slices.seen().for_each(watch);
                Ok(outcome)
            }
        }
    }
}

impl Sides {
    fn run_here_or_there(
        &self,
        spec: &RunSpec,
        interrupt: &AtomicBool,
        watch: SliceWatch,
    ) -> Result<RunOutcome, Error> {
        if let Err(reason) = probe_point(spec) {
            return Ok(RunOutcome::skipped(spec, reason));
        }
        match self {
            Sides::Here(Link::Sink(sink)) if spec.network.is_sink() => {
                run_on_sink(sink, spec, interrupt, watch)
            }
            // `sweep --beside-loopback`: a sink point's loopback twin, with its receiver here.
            Sides::Here(Link::Sink(_)) => run_over(&Link::Loopback, spec, interrupt, watch),
            Sides::Here(link) => run_over(link, spec, interrupt, watch),
            Sides::Remote(remote) => {
                // One control session per run: the server serves one run at a time.
                let peer =
                    RemotePeer::new(remote.target.clone(), remote.token.clone(), remote.reverse)
                        .with_identity(remote.identity.clone());
                engine::peer::run_with_peer(spec, Box::new(peer), interrupt)
            }
        }
    }
}

/// One point over `link`'s connector for its transport.
fn run_over(
    link: &Link,
    spec: &RunSpec,
    interrupt: &AtomicBool,
    watch: SliceWatch,
) -> Result<RunOutcome, Error> {
    let connector = link.connector(spec.transport)?;
    engine::load::run_beside(spec, &*connector, interrupt, watch)
}

/// One point on a sink, with what both veth ends counted from before its flows opened to after
/// they closed: the proof of where the bytes went.
fn run_on_sink(
    sink: &SinkLink,
    spec: &RunSpec,
    interrupt: &AtomicBool,
    watch: SliceWatch,
) -> Result<RunOutcome, Error> {
    let before = sink.counters();
    let mut outcome = engine::sink::run_watched(spec, &SinkFlows(sink), interrupt, watch)?;
    outcome.sink = Some(match (before, sink.counters()) {
        (Ok(before), Ok(after)) => Ok(after.since(&before)),
        (Err(e), _) | (_, Err(e)) => Err(format!("reading the veth counters: {e}")),
    });
    Ok(outcome)
}

/// The environment variable that makes this kernel look as if it lacked the named sending
/// mechanisms or receive paths (comma-separated), so the skip path can be seen and tested on
/// a kernel that has them all.
pub const ASSUME_MISSING: &str = "BYTEPATH_ASSUME_MISSING";

/// Whether this kernel offers the point's mechanism and receive path, or why not.
fn probe_point(spec: &RunSpec) -> Result<(), String> {
    let assumed = std::env::var(ASSUME_MISSING).unwrap_or_default();
    for name in [spec.mechanism.name(), spec.recv_path.name()] {
        if assumed.split(',').any(|n| n.trim() == name) {
            return Err(format!("{name}: unavailable ({ASSUME_MISSING} names it)"));
        }
    }
    crate::mechanism::supported(spec.mechanism)?;
    crate::mechanism::receive::path::supported(spec.recv_path)
}
