//! A validated `MeshSpec`: the hosts, which ordered pairs, the points measured per pair in the
//! `run` vocabulary, how many visits, how many pairs at once, and how the servers are started.
//! `args::mesh` makes it from the flags.
use crate::config::{self, Network, RunSpec, Target};
use crate::measure::counters::CounterSelection;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The most visits a mesh may ask for: beyond this a CI gains nothing worth the time.
pub const MAX_VISITS: usize = 100;
/// `--ssh-command` when it is not given: never stop to ask for a password.
pub const DEFAULT_SSH: &str = "ssh -o BatchMode=yes";

/// Which ordered pairs are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairSet {
    /// Every host to every other.
    All,
    /// Each host with its neighbours in list order (the last with the first), both ways.
    Ring,
    /// The host at this index with every other, both ways.
    Star(usize),
}

/// One point measured on every pair: a sweep's point (mechanism, pattern, size, flows), with
/// the same key.
pub use crate::config::Point as MeshPoint;

/// `--launch ssh`: how the servers are started on the hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program and its arguments that reach a host (split at white space).
    pub ssh: Vec<String>,
    /// The bytepath executable on the hosts.
    pub binary: String,
}

/// A validated mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshSpec {
    pub hosts: Vec<Target>,
    /// How the hosts were given, for the marker: hosts, hosts-file or hosts-from-dns.
    pub hosts_from: String,
    pub pairs: PairSet,
    pub points: Vec<MeshPoint>,
    pub duration: Duration,
    pub warmup: Duration,
    pub visits: usize,
    pub concurrent: usize,
    pub token: Option<Vec<u8>>,
    pub launch: Option<Launch>,
    /// `--margin`: the equivalence margin the flags and hosts are judged with (a share).
    pub margin: f64,
}

impl MeshSpec {
    /// The run one visit of `point` is: tcp, no counters (headline figures come from visits
    /// with nothing extra open), unpinned (the servers place their own threads).
    pub fn run_spec(&self, point: &MeshPoint) -> RunSpec {
        RunSpec {
            mechanism: point.mechanism,
            pattern: point.pattern,
            threads: point.threads,
            warmup: self.warmup,
            cpus: Vec::new(),
            network: Network {
                placement: config::network::Placement::Remote,
                ..Network::default()
            },
            ..RunSpec::plain(point.message_size, self.duration)
        }
    }
}

/// The spec as the marker keeps it (`--resume` continues only the same mesh): hosts and points
/// by their names, durations in seconds, the pairs as given (`star:HOST`). The keys are this
/// struct's fields, the same as every mesh marker's so far; the token and the launch command
/// are not recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkerSpec {
    pub hosts: Vec<String>,
    pub hosts_from: String,
    pub pairs: String,
    pub points: Vec<String>,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub visits: usize,
    pub concurrent: usize,
    /// Always `none`: a mesh's visits open no counters (see `MeshSpec::run_spec`).
    pub counters: CounterSelection,
    /// Folders from before `--margin` read the default.
    #[serde(default = "default_margin")]
    pub margin: f64,
}

fn default_margin() -> f64 {
    crate::stats::verdict::DEFAULT_MARGIN
}

impl From<&MeshSpec> for MarkerSpec {
    fn from(spec: &MeshSpec) -> MarkerSpec {
        MarkerSpec {
            hosts: spec.hosts.iter().map(Target::to_string).collect(),
            hosts_from: spec.hosts_from.clone(),
            pairs: match spec.pairs {
                PairSet::All => "all".to_string(),
                PairSet::Ring => "ring".to_string(),
                PairSet::Star(h) => format!("star:{}", spec.hosts[h]),
            },
            points: spec.points.iter().map(MeshPoint::key).collect(),
            duration_s: spec.duration.as_secs_f64(),
            warmup_s: spec.warmup.as_secs_f64(),
            visits: spec.visits,
            concurrent: spec.concurrent,
            counters: CounterSelection::None,
            margin: spec.margin,
        }
    }
}

/// The marker's `spec` block is the spec's `MarkerSpec`.
impl Serialize for MeshSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        MarkerSpec::from(self).serialize(serializer)
    }
}
