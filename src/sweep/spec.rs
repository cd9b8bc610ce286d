//! A validated `SweepSpec`: the matrix (mechanisms × patterns × sizes × threads) and how every
//! point is visited (visits, visit length, budget, seed, CI target). `args::sweep` makes it
//! from the flags; the order of the visits is `stats::schedule`'s.
use crate::config::{self, Network, Pattern, Pinning, RunSpec, Stopping};
use crate::measure::counters::CounterSelection;
use crate::mechanism::recv_path::RecvPath;
use crate::mechanism::MechanismKind;
use std::time::Duration;

/// Largest accepted `--ci`: beyond ±50 % a confidence interval says nothing useful.
pub const MAX_CI_PERCENT: f64 = 50.0;
/// `--visits` bounds: an interval needs two visit means; a thousand is far past any budget.
pub const VISIT_BOUNDS: (usize, usize) = (2, 1000);

/// One point of the matrix.
pub use crate::config::Point;

/// A validated sweep: the matrix and the settings every point shares.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    pub mechanisms: Vec<MechanismKind>,
    pub patterns: Vec<Pattern>,
    pub sizes: Vec<usize>,
    pub threads: Vec<usize>,
    /// Relative CI half-width target (0.02 = ±2 %).
    pub ci_target: f64,
    /// Visits every point gets at least.
    pub min_visits: usize,
    /// Measured time of one visit.
    pub visit: Duration,
    /// Time per point, on average, over the whole sweep's visits.
    pub budget: Duration,
    /// Seed of the visit order, and whether `--seed` gave it.
    pub seed: u64,
    pub seed_given: bool,
    pub slice: Duration,
    pub warmup: Duration,
    pub pinning: Pinning,
    /// Whether `--pin` was left out and the default placement was chosen.
    pub pin_defaulted: bool,
    pub cpus: Vec<usize>,
    pub recv_size: Option<usize>,
    /// The `--counters` text; resolved per pattern (`auto` differs between stream and rr).
    pub counters: String,
    pub verify: bool,
    /// Where every point's sides run (`--netns`, `--mtu`, `--netem`).
    pub network: Network,
    /// `--remote`: every point's other side runs on `bytepath server` there.
    pub remote: Option<config::RemoteRun>,
    /// io_uring points: sends submitted together.
    pub queue_depth: u32,
    pub recv_path: RecvPath,
    /// `--profile`: one profiled visit of every point after the counter round.
    pub profile: bool,
}

impl SweepSpec {
    /// How many points the matrix holds.
    pub fn total(&self) -> usize {
        self.mechanisms.len() * self.patterns.len() * self.sizes.len() * self.threads.len()
    }

    /// Every point exactly once, interleaved: the points are taken in (pattern, threads, size)
    /// groups, and within group `g` the mechanism order is rotated by `g`, so every mechanism
    /// runs early and late in a group equally often and slow machine drift spreads over all
    /// mechanisms instead of masquerading as a difference between them.
    pub fn points(&self) -> Vec<Point> {
        let m = self.mechanisms.len();
        let mut out = Vec::with_capacity(self.total());
        let mut group = 0;
        for &pattern in &self.patterns {
            for &threads in &self.threads {
                for &message_size in &self.sizes {
                    for i in 0..m {
                        out.push(Point {
                            mechanism: self.mechanisms[(i + group) % m],
                            pattern,
                            message_size,
                            threads,
                        });
                    }
                    group += 1;
                }
            }
        }
        out
    }

    /// The run of one visit of a point: the shared settings with the point's own values.
    /// Perf counters are opened only in a counter visit (`counters`), never in the visits the
    /// headline figures come from.
    pub fn run_spec(&self, point: &Point, counters: bool) -> RunSpec {
        RunSpec {
            transport: crate::transport::Transport::Tcp,
            pipe_size: None,
            mechanism: point.mechanism,
            pattern: point.pattern,
            message_size: point.message_size,
            threads: point.threads,
            duration: self.visit,
            stopping: Stopping {
                messages_per_flow: None,
                slice: self.slice,
            },
            warmup: self.warmup,
            pinning: self.pinning.clone(),
            cpus: self.cpus.clone(),
            recv_size: self.recv_size,
            spin: false,
            verify: self.verify,
            counters: if counters {
                self.counter_selection()
            } else {
                CounterSelection::None
            },
            udp_split: false,
            processes: false,
            network: self.network.clone(),
            queue_depth: self.queue_depth,
            recv_path: self.recv_path,
            profile: false,
        }
    }

    /// What a counter visit opens: `auto` is every counter, for rr too (a counter visit's
    /// context-switch cost stays out of the headline figures).
    pub fn counter_selection(&self) -> CounterSelection {
        config::parse_counters(&self.counters, Pattern::Stream).unwrap_or(CounterSelection::None)
    }

    /// Whether each point gets a counter visit.
    pub fn counter_visits(&self) -> bool {
        self.counter_selection() != CounterSelection::None
    }

    /// The whole sweep's visit budget: points × `--budget`.
    pub fn total_budget(&self) -> Duration {
        self.budget * self.total() as u32
    }

    /// The effective settings as JSON, for the results folder's marker and for `--resume` to
    /// check that it continues the same sweep.
    pub fn to_json(&self) -> serde_json::Value {
        let mut json = serde_json::json!({
            "mechanisms": self.mechanisms.iter().map(|m| m.name()).collect::<Vec<_>>(),
            "patterns": self.patterns.iter().map(|p| p.name()).collect::<Vec<_>>(),
            "sizes_bytes": self.sizes,
            "threads": self.threads,
            "ci_target_rel": self.ci_target,
            "min_visits": self.min_visits,
            "visit_s": self.visit.as_secs_f64(),
            "budget_per_point_s": self.budget.as_secs_f64(),
            "seed": self.seed,
            "slice_s": self.slice.as_secs_f64(),
            "warmup_s": self.warmup.as_secs_f64(),
            "pin": self.pinning.name(),
            "recv_size_bytes": self.recv_size,
            "counters": self.counters,
            "verify": self.verify,
        });
        // Only when not loopback, so folders written before --netns existed still resume.
        if self.network.is_netns() {
            json["network"] = serde_json::to_value(&self.network).expect("JSON");
        }
        // The server, so `--resume` continues against the same one (the token is not kept).
        if let Some(remote) = &self.remote {
            json["remote"] = remote.target.to_string().into();
        }
        // Only when they differ from the defaults, so older folders still resume.
        if self.mechanisms.iter().any(|m| m.uses_queue_depth()) {
            json["queue_depth"] = self.queue_depth.into();
        }
        if self.recv_path != RecvPath::Recv {
            json["recv"] = self.recv_path.name().into();
        }
        if self.profile {
            json["profile"] = true.into();
        }
        json
    }
}
