//! Where the two sides of every flow run, chosen once per command: both on this host (over
//! loopback, or in two network namespaces joined by a veth pair: a `Link`), or the other side
//! on `bytepath server` on another host (a `Peer`). `run`, `sweep` and `ipc` open one `Sides`
//! from their arguments and run every point through it, so no command picks a placement itself.
use crate::config::{Network, RemoteRun, RunSpec};
use crate::engine::{self, RunOutcome};
use crate::error::Error;
use crate::remote::client::RemotePeer;
use crate::transport::{Link, Transport};
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
                    .check()?;
                Ok(Sides::Remote(remote.clone()))
            }
            None => Ok(Sides::Here(Link::open(network)?)),
        }
    }

    /// Where the sides run, in words, for a command's opening lines ("sides …"); `None` for
    /// plain loopback, which needs no mention.
    pub fn announce(&self) -> Option<String> {
        match self {
            Sides::Here(Link::Loopback) => None,
            Sides::Here(link) => Some(format!("in {}", link.describe())),
            Sides::Remote(remote) => Some(format!(
                "on two hosts: the server at {} runs the unmeasured side, this host measures",
                remote.target
            )),
        }
    }

    /// Whether `transport` can run in this placement, or why not: the server carries tcp and
    /// udp only; a veth pair carries IP sockets only.
    pub fn carries(network: &Network, remote: bool, transport: Transport) -> Result<(), String> {
        if remote {
            remote_carries(transport)?;
        }
        network.carries(transport)
    }

    /// `spec` as run in this placement: its `network` says where the sides ran, so the record
    /// built from it does too. Run and record the returned spec.
    pub fn place(&self, spec: RunSpec) -> RunSpec {
        match self {
            Sides::Here(_) => spec,
            Sides::Remote(_) => RunSpec {
                network: Network {
                    placement: crate::config::network::Placement::Remote,
                    ..Network::default()
                },
                ..spec
            },
        }
    }

    /// Runs one point in this placement; a point whose mechanism or receive path this kernel
    /// lacks is skipped with the probe's reason.
    pub fn run(&self, spec: &RunSpec, interrupt: &AtomicBool) -> Result<RunOutcome, Error> {
        if let Err(reason) = probe_point(spec) {
            return Ok(RunOutcome::skipped(spec, reason));
        }
        match self {
            Sides::Here(link) => {
                let connector = link.connector(spec.transport)?;
                engine::run(spec, &*connector, interrupt)
            }
            Sides::Remote(remote) => {
                // One control session per run: the server serves one run at a time.
                let peer =
                    RemotePeer::new(remote.target.clone(), remote.token.clone(), remote.reverse);
                engine::peer::run_with_peer(spec, Box::new(peer), interrupt)
            }
        }
    }
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
    crate::mechanism::probe(spec.mechanism)?;
    crate::mechanism::recv_path::probe(spec.recv_path)
}

/// Whether `bytepath server` can carry `transport` to another host, or why not: only IP
/// sockets leave the host, and the server carries tcp and udp.
pub fn remote_carries(transport: Transport) -> Result<(), String> {
    match transport {
        Transport::Tcp | Transport::Udp => Ok(()),
        _ => Err(format!(
            "{} cannot reach another host (it never leaves this machine's kernel); bytepath server carries tcp and udp only",
            transport.name()
        )),
    }
}
