//! A validated `SweepSpec`: the matrix (mechanisms × patterns × sizes × threads) and how every
//! point is visited (visits, visit length, budget, seed, CI target). `args::sweep` makes it
//! from the flags; the order of the visits is `stats::schedule`'s.
use crate::config::{self, Network, Pattern, Pinning, RunSpec, Stopping};
use crate::measure::counters::CounterSelection;
use crate::mechanism::receive::path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::stats::point::VisitPlan;
use std::time::Duration;

/// Largest accepted `--ci`: beyond ±50 % a confidence interval says nothing useful.
pub const MAX_CI_PERCENT: f64 = 50.0;
/// `--visits` bounds: an interval needs two visit means; a thousand is far past any budget.
pub const VISIT_BOUNDS: (usize, usize) = (2, 1000);

/// One point of the matrix.
pub use crate::config::Point;

/// A validated sweep: the matrix and the settings every point shares. Serialized, it is the
/// results folder's `spec` block, which `--resume` compares key by key: the keys are those
/// of schema 2, and a setting only present when used is left out when unused, so folders
/// written before it existed still resume.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SweepSpec {
    pub mechanisms: Vec<MechanismKind>,
    pub patterns: Vec<Pattern>,
    #[serde(rename = "sizes_bytes")]
    pub sizes: Vec<usize>,
    pub threads: Vec<usize>,
    /// Relative CI half-width target (0.02 = ±2 %).
    #[serde(rename = "ci_target_rel")]
    pub ci_target: f64,
    /// Visits every point gets at least.
    pub min_visits: usize,
    /// Measured time of one visit.
    #[serde(rename = "visit_s", serialize_with = "config::seconds")]
    pub visit: Duration,
    /// Time per point, on average, over the whole sweep's visits.
    #[serde(rename = "budget_per_point_s", serialize_with = "config::seconds")]
    pub budget: Duration,
    /// Seed of the visit order, and whether `--seed` gave it.
    pub seed: u64,
    #[serde(skip)]
    pub seed_given: bool,
    #[serde(rename = "slice_s", serialize_with = "config::seconds")]
    pub slice: Duration,
    #[serde(rename = "warmup_s", serialize_with = "config::seconds")]
    pub warmup: Duration,
    #[serde(rename = "pin")]
    pub pinning: Pinning,
    /// Whether `--pin` was left out and the default placement was chosen.
    #[serde(skip)]
    pub pin_defaulted: bool,
    #[serde(skip)]
    pub cpus: Vec<usize>,
    #[serde(rename = "recv_size_bytes")]
    pub recv_size: Option<usize>,
    /// The `--counters` text; resolved per pattern (`auto` differs between stream and rr).
    pub counters: String,
    pub verify: bool,
    /// Where every point's sides run (`--netns`, `--sink`, `--mtu`, `--netem`); recorded only
    /// when not loopback.
    #[serde(skip_serializing_if = "on_loopback")]
    pub network: Network,
    /// `--remote`: every point's other side runs on `bytepath server` there. Recorded as the
    /// server's address, so `--resume` continues against the same one (the token is not kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<config::RemoteRun>,
    /// io_uring points: sends submitted together; `None` when no mechanism is an io_uring one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    #[serde(rename = "recv", skip_serializing_if = "plain_recv")]
    pub recv_path: RecvPath,
    /// `--profile`: one profiled visit of every point after the counter round.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub profile: bool,
    /// `--count-copies`: one visit of every point with the kernel's tracepoints open, after
    /// the profile round. Absent from markers written before it existed, so they resume.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count_copies: bool,
    /// `--bidir`: every point also has a twin whose flows go both ways, in the same group of
    /// visits as its one-way point (so the two pair per round).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bidir: bool,
    /// `--under-load N`: every rr point also has a twin visited with N load flows beside it,
    /// in the same group of visits as its unloaded point (so the two pair per round). Absent
    /// from markers written before it existed, so they resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_load: Option<usize>,
    /// `--beside-loopback` (with `--sink`): every point also has a twin over loopback UDP, in
    /// the same group of visits as its sink point, so the two places' answers stand side by
    /// side on the same rounds.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub beside_loopback: bool,
    /// `--udp-split` (on a sink): a message above one datagram or send goes as several.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub udp_split: bool,
    /// `--gso`: every point's UDP GSO segment size; absent without it.
    #[serde(rename = "gso_segment_bytes", skip_serializing_if = "Option::is_none")]
    pub gso: Option<usize>,
    /// `--quiet-threshold`, `--settle`: how the sweep watches the machine.
    // Recorded through the arguments block (--settle, --quiet-threshold), so the spec
    // block, which --resume reads back, keeps its keys.
    #[serde(skip)]
    pub watch: crate::config::watch::Watch,
    /// `--margin`: the equivalence margin of the crossover verdicts and of the adaptive rule.
    /// Recorded only when not the default, so folders written before it existed still resume.
    #[serde(skip_serializing_if = "default_margin")]
    pub margin: f64,
    /// `--rcvbuf` / `--sndbuf`: every point's tcp socket buffers. Recorded only when set, so
    /// folders written before it existed still resume.
    #[serde(default, skip_serializing_if = "no_buffers")]
    pub socket_buffers: crate::transport::buffers::SocketBuffers,
    /// `--tcp-info`: whether every tcp point samples TCP_INFO. Recorded only when off, so
    /// folders written before it existed still resume.
    #[serde(skip_serializing_if = "is_sampled")]
    pub tcp_info: bool,
}

fn is_sampled(on: &bool) -> bool {
    *on
}

fn no_buffers(buffers: &crate::transport::buffers::SocketBuffers) -> bool {
    !buffers.is_set()
}

fn default_margin(margin: &f64) -> bool {
    *margin == crate::stats::verdict::DEFAULT_MARGIN
}

fn on_loopback(network: &Network) -> bool {
    network.placement == crate::config::network::Placement::Loopback
}

fn plain_recv(path: &RecvPath) -> bool {
    *path == RecvPath::Recv
}

impl SweepSpec {
    /// What a point's record states of how it was visited: the sweep's visiting settings, with
    /// why its visits stopped and the round its counters were opened in.
    pub fn visit_plan(&self, stop_reason: &str, counters_round: Option<usize>) -> VisitPlan {
        VisitPlan {
            min_visits: self.min_visits,
            visit_s: self.visit.as_secs_f64(),
            warmup_s: self.warmup.as_secs_f64(),
            slice_s: self.slice.as_secs_f64(),
            ci_target: Some(self.ci_target),
            stop_reason: stop_reason.into(),
            counters_round,
            seed: Some(self.seed),
        }
    }

    /// How many points the matrix holds.
    pub fn total(&self) -> usize {
        let directions = if self.bidir { 2 } else { 1 };
        let places = if self.beside_loopback { 2 } else { 1 };
        let loads = if self.under_load.is_some() { 2 } else { 1 };
        self.mechanisms.len()
            * self.patterns.len()
            * self.sizes.len()
            * self.threads.len()
            * directions
            * places
            * loads
    }

    /// Every point exactly once, interleaved: the points are taken in (pattern, threads, size)
    /// groups, and within group `g` the mechanism order is rotated by `g`, so every mechanism
    /// runs early and late in a group equally often and slow machine drift spreads over all
    /// mechanisms instead of masquerading as a difference between them. With `--bidir` each
    /// one-way point is followed by its bidir twin, in the same group; with
    /// `--beside-loopback` each sink point by its loopback twin; with `--under-load` each rr point
    /// by its loaded twin.
    pub fn points(&self) -> Vec<Point> {
        let m = self.mechanisms.len();
        let mut out = Vec::with_capacity(self.total());
        let mut group = 0;
        for &pattern in &self.patterns {
            for &threads in &self.threads {
                for &message_size in &self.sizes {
                    for i in 0..m {
                        let one_way = Point {
                            mechanism: self.mechanisms[(i + group) % m],
                            pattern,
                            message_size,
                            threads,
                            bidir: false,
                            loopback_twin: false,
                            under_load: false,
                        };
                        out.push(one_way);
                        if self.bidir {
                            out.push(Point {
                                bidir: true,
                                ..one_way
                            });
                        }
                        if self.beside_loopback {
                            out.push(Point {
                                loopback_twin: true,
                                ..one_way
                            });
                        }
                        if self.under_load.is_some() {
                            out.push(Point {
                                under_load: true,
                                ..one_way
                            });
                        }
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
            transport: self.transport(),
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
            udp_split: self.udp_split,
            gso: self.gso,
            processes: false,
            // A loopback twin's flows stay in this namespace, with their receiver.
            network: match point.loopback_twin {
                true => Network::default(),
                false => self.network.clone(),
            },
            queue_depth: self.queue_depth.unwrap_or(config::DEFAULT_QUEUE_DEPTH),
            recv_path: self.recv_path,
            profile: false,
            crr: Default::default(),
            bidir: point.bidir,
            under_load: self.under_load.filter(|_| point.under_load),
            socket_buffers: self.socket_buffers,
            tcp_info: self.tcp_info,
        }
    }

    /// What every point is carried by: tcp, or on a sink (`--sink`) udp, the one transport a
    /// sink carries.
    pub fn transport(&self) -> crate::transport::Transport {
        transport_of(&self.network)
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
}

/// What a sweep's points are carried by in `network`: tcp, or on a sink (`--sink`) udp, the
/// one transport a sink carries.
pub fn transport_of(network: &Network) -> crate::transport::Transport {
    match network.is_sink() {
        true => crate::transport::Transport::Udp,
        false => crate::transport::Transport::Tcp,
    }
}
