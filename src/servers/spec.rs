//! A validated `bytepath servers` invocation (`ServersSpec`, the marker's `spec` block), where
//! its server and load generator run (`Placement`, `--placement`), and the points it visits.
use super::model::ServerModel;
use crate::error::{bad, ConfigError};
use std::time::Duration;

/// A validated `bytepath servers` invocation. Serialized, it is the marker's `spec` block: the
/// study's whole configuration (`seed` and `visits` under the keys they always had).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ServersSpec {
    pub models: Vec<ServerModel>,
    pub clients: Vec<usize>,
    #[serde(rename = "size_bytes")]
    pub size: usize,
    /// Each point's measured time, split evenly over its visits.
    #[serde(rename = "duration_s", serialize_with = "crate::config::seconds")]
    pub duration: Duration,
    /// Visits per point (`--visits`), in rounds ordered by `seed`.
    pub visits: usize,
    pub seed: u64,
    #[serde(rename = "warmup_s", serialize_with = "crate::config::seconds")]
    pub warmup: Duration,
    /// `--rate`: requests per second over all clients (open loop); `None`: closed loop.
    #[serde(rename = "rate_per_s")]
    pub rate: Option<f64>,
    pub server_threads: usize,
    /// `--client-threads`: given, or one per CPU of the load side (the marker's
    /// `client_threads` and `client_threads_default`).
    #[serde(flatten)]
    pub client_threads: super::client_threads::ClientThreads,
    pub requests_per_connection: Option<u64>,
    /// `--connection`: the connection modes measured, each a point dimension (`true`:
    /// per-request, every client connects again for each request).
    #[serde(serialize_with = "connection_names")]
    pub connections: Vec<bool>,
    pub stalled_clients: usize,
    pub record_connections: bool,
    pub placement: Placement,
    /// Where the server and the load generator run (`--netns`, `--mtu`, `--netem`).
    pub network: crate::config::Network,
    /// `--remote`: every point's server runs on `bytepath server` on another host.
    pub remote: Option<crate::config::RemoteRun>,
    /// `--profile`: a window of its own after each measured one, the server process sampled.
    pub profile: bool,
    /// `--settle`: how the study waits for a quiet machine (the quiet threshold is not yet
    /// applied per visit here).
    // Recorded through the arguments block (--settle, --quiet-threshold), so the spec
    // block, which --resume reads back, keeps its keys.
    #[serde(skip)]
    pub watch: crate::config::watch::Watch,
    /// `--margin`: the equivalence margin the report's verdicts are stated with (a share).
    pub margin: f64,
}

/// Where the server process and the load generator run (`--placement`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Placement {
    /// "split" or "none".
    pub pin: &'static str,
    /// CPUs of every server thread (inherited from the server's first thread); `None`: any.
    pub server_cpus: Option<Vec<usize>>,
    /// CPUs of the load generator's threads; `None`: any.
    pub client_cpus: Option<Vec<usize>>,
}

impl Placement {
    /// The CPUs the load generator runs on, and which they are in words: split's lower half,
    /// else every allowed CPU (`remote`: the server runs on the other host).
    pub fn load_side(&self, allowed: &[usize], remote: bool) -> (Vec<usize>, &'static str) {
        match (&self.client_cpus, remote) {
            (Some(cpus), _) => (cpus.clone(), "the load side of --placement split"),
            (None, true) => (
                allowed.to_vec(),
                "this host (--remote: the server runs on the other host)",
            ),
            (None, false) => (
                allowed.to_vec(),
                "the allowed CPUs (--placement none: the server shares them)",
            ),
        }
    }

    /// split: the server on the upper half of the allowed CPUs, the clients on the lower half,
    /// so the load generator never takes the server's CPU (the seeds ran them on two hosts).
    pub fn parse(text: Option<&str>, cpus: &[usize]) -> Result<Placement, ConfigError> {
        let split = cpus.len() >= 2;
        match text.unwrap_or(if split { "split" } else { "none" }) {
            "none" => Ok(Placement {
                pin: "none",
                server_cpus: None,
                client_cpus: None,
            }),
            "split" if split => {
                let (clients, server) = cpus.split_at(cpus.len() / 2);
                Ok(Placement {
                    pin: "split",
                    server_cpus: Some(server.to_vec()),
                    client_cpus: Some(clients.to_vec()),
                })
            }
            "split" => Err(bad(format!(
                "--placement split: needs at least 2 CPUs, this process may use {cpus:?}; allowed: none"
            ))),
            other => Err(bad(format!(
                "--placement {other:?}: allowed: split, none (cross, same and CPU lists are --pin's, which places the threads of run, sweep, ipc and file)"
            ))),
        }
    }
}

impl ServersSpec {
    /// One visit's measured window: the point's duration over its visits.
    pub fn visit_duration(&self) -> Duration {
        self.duration / self.visits.max(1) as u32
    }

    /// Every (model, clients, per-request), models and connection modes interleaved within
    /// each client count (so a round visits them back to back and they pair).
    pub fn points(&self) -> Vec<(ServerModel, usize, bool)> {
        let modes = &self.connections;
        self.clients
            .iter()
            .flat_map(|&c| {
                modes
                    .iter()
                    .flat_map(move |&p| self.models.iter().map(move |&m| (m, c, p)))
            })
            .collect()
    }
}

/// The marker writes the connection modes by name.
fn connection_names<S: serde::Serializer>(modes: &[bool], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(modes.iter().map(|&p| connection_name(p)))
}

/// A connection mode's name as records and reports write it (`--connection`).
pub fn connection_name(per_request: bool) -> &'static str {
    if per_request {
        "per-request"
    } else {
        "persistent"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_puts_the_server_on_the_upper_cpus_and_the_clients_below() {
        let p = Placement::parse(None, &[0, 1]).unwrap();
        assert_eq!(
            (p.pin, p.server_cpus, p.client_cpus),
            ("split", Some(vec![1]), Some(vec![0]))
        );
        let p = Placement::parse(Some("split"), &[2, 3, 5, 7]).unwrap();
        assert_eq!(
            (p.server_cpus, p.client_cpus),
            (Some(vec![5, 7]), Some(vec![2, 3]))
        );
        assert_eq!(
            Placement::parse(None, &[0]).unwrap().pin,
            "none",
            "one CPU: nothing to split"
        );
        let e = Placement::parse(Some("split"), &[0]).unwrap_err().0;
        assert!(e.contains("at least 2 CPUs"), "{e}");
        let e = Placement::parse(Some("half"), &[0, 1]).unwrap_err().0;
        assert!(e.contains("allowed: split, none"), "{e}");
    }
}
