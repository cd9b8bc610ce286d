//! `bytepath sweep` flags -> a validated `SweepSpec`: the matrix (mechanisms × patterns × sizes
//! × threads) and how every point is visited (visits, visit length, budget, seed, CI target).
//! Single values are parsed by `config`'s parsers; this file only adds comma lists and the CI.
//! The order of the visits is `schedule`'s.
use crate::cli::SweepArgs;
use crate::config::{
    self, ConfigError, Network, Pattern, Pinning, RunSpec, Stopping, MAX_MESSAGE_SIZE, MAX_THREADS,
};
use crate::measure::counters::CounterSelection;
use crate::mechanism::recv_path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::transport::Transport;
use std::time::Duration;

/// Largest accepted `--ci`: beyond ±50 % a confidence interval says nothing useful.
pub const MAX_CI_PERCENT: f64 = 50.0;
/// `--visits` bounds: an interval needs two visit means; a thousand is far past any budget.
pub const VISIT_BOUNDS: (usize, usize) = (2, 1000);

fn bad(msg: impl Into<String>) -> ConfigError {
    ConfigError(msg.into())
}

/// One point of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub mechanism: MechanismKind,
    pub pattern: Pattern,
    pub message_size: usize,
    pub threads: usize,
}

impl Point {
    /// Identifies the point across sweeps: `mechanism/pattern/size/threads`.
    pub fn key(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.mechanism.name(),
            self.pattern.name(),
            self.message_size,
            self.threads
        )
    }
}

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
}

impl SweepSpec {
    pub fn from_args(args: &SweepArgs, cpus: &[usize]) -> Result<SweepSpec, ConfigError> {
        let patterns = parse_list("--patterns", &args.patterns, |t| t.parse::<Pattern>())?;
        for &pattern in &patterns {
            config::parse_counters(&args.counters, pattern)?;
        }
        let (visit, slice) = parse_times(args)?;
        let default_pin = if cpus.len() >= 2 { "cross" } else { "same" };
        let network = Network::from_args(&args.network)?;
        let remote = config::RemoteRun::from_args(&args.remote, &network)?;
        if remote.as_ref().is_some_and(|r| r.reverse) {
            return Err(ConfigError(
                "--reverse with sweep: a sweep reads each visit's figures on this host, which --reverse would leave on the server; --reverse is for `run` (stream) only".into(),
            ));
        }
        let mechanisms = match args.mechanisms.trim() {
            "all" => MechanismKind::ALL.to_vec(),
            text => parse_list("--mechanisms", text, |t| t.parse())?,
        };
        if args.queue_depth.is_some() && !mechanisms.iter().any(|m| m.uses_queue_depth()) {
            return Err(bad(
                "--queue-depth without an io_uring mechanism: applies to uring, uring-gather and uring-zc only",
            ));
        }
        for &m in &mechanisms {
            config::check_transport(Transport::Tcp, m)?;
        }
        let recv_path: RecvPath = args.recv.parse()?;
        config::check_recv_path(recv_path, Transport::Tcp, args.verify)?;
        Ok(SweepSpec {
            mechanisms,
            patterns,
            sizes: parse_list("--sizes", &args.sizes, config::parse_message_size)?,
            threads: parse_list("--threads", &args.threads, config::parse_threads)?,
            ci_target: parse_ci(&args.ci)?,
            min_visits: parse_visits(&args.visits)?,
            visit,
            budget: config::parse_duration("--budget", &args.budget, false)?,
            seed: parse_seed(args.seed.as_deref())?,
            seed_given: args.seed.is_some(),
            slice,
            warmup: config::parse_duration("--warmup", &args.warmup, true)?,
            pinning: config::parse_pinning(Some(args.pin.as_deref().unwrap_or(default_pin)), cpus)?,
            pin_defaulted: args.pin.is_none(),
            cpus: cpus.to_vec(),
            recv_size: parse_recv_size(args.recv_size.as_deref())?,
            counters: args.counters.clone(),
            verify: args.verify,
            network,
            remote,
            queue_depth: config::parse_queue_depth(args.queue_depth.as_deref())?,
            recv_path,
        })
    }

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
        json
    }
}

/// Splits a comma list and parses each entry; refuses an empty list, an empty entry and a
/// value given twice (compared after parsing, so `1K,1024` is a duplicate).
pub fn parse_list<T: PartialEq>(
    flag: &str,
    text: &str,
    parse: impl Fn(&str) -> Result<T, ConfigError>,
) -> Result<Vec<T>, ConfigError> {
    if text.trim().is_empty() {
        return Err(bad(format!(
            "{flag} {text:?}: empty; allowed: a comma-separated list such as a,b,c"
        )));
    }
    let mut out: Vec<T> = Vec::new();
    for (i, part) in text.split(',').map(str::trim).enumerate() {
        if part.is_empty() {
            return Err(bad(format!(
                "{flag} {text:?}: entry {} is empty; allowed: a comma-separated list with no empty entries",
                i + 1
            )));
        }
        let value = parse(part).map_err(|e| bad(format!("{flag}: {e}")))?;
        if out.contains(&value) {
            return Err(bad(format!(
                "{flag} {text:?}: {part:?} repeats an earlier value; allowed: each value once"
            )));
        }
        out.push(value);
    }
    Ok(out)
}

/// `2%` or `2` (both percent) -> 0.02; refuses 0, negative, and above 50 %.
pub fn parse_ci(text: &str) -> Result<f64, ConfigError> {
    config::parse_percent("--ci", text, MAX_CI_PERCENT)
}

/// `--visit` and `--slice`, both above zero, a slice no longer than a visit.
fn parse_times(args: &SweepArgs) -> Result<(Duration, Duration), ConfigError> {
    let visit = config::parse_duration("--visit", &args.visit, false)?;
    let slice = config::parse_duration("--slice", &args.slice, false)?;
    if slice > visit {
        return Err(bad(format!(
            "--slice {} is longer than --visit {}; allowed: slice ≤ visit (a visit is cut into slices)",
            args.slice, args.visit
        )));
    }
    Ok((visit, slice))
}

/// `--visits`: a whole number from 2 to 1000.
pub fn parse_visits(text: &str) -> Result<usize, ConfigError> {
    let (lo, hi) = VISIT_BOUNDS;
    match text.trim().parse::<usize>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "--visits {text:?}: allowed: a whole number from {lo} to {hi} (an interval needs two visit means)"
        ))),
    }
}

/// `--seed`: a whole number up to 2^64 - 1; without one, a fresh seed from the OS.
pub fn parse_seed(text: Option<&str>) -> Result<u64, ConfigError> {
    match text {
        Some(t) => t.trim().parse::<u64>().map_err(|_| {
            bad(format!(
                "--seed {t:?}: allowed: a whole number from 0 to {}",
                u64::MAX
            ))
        }),
        None => {
            let mut bytes = [0u8; 8];
            getrandom::fill(&mut bytes)
                .map_err(|e| bad(format!("--seed: no seed given and none from the OS ({e})")))?;
            Ok(u64::from_le_bytes(bytes))
        }
    }
}

fn parse_recv_size(text: Option<&str>) -> Result<Option<usize>, ConfigError> {
    text.map(config::parse_recv_size).transpose()
}

/// Bounds of the lists, for the property tests and the error texts.
pub const SIZE_BOUNDS: (usize, usize) = (8, MAX_MESSAGE_SIZE);
pub const THREAD_BOUNDS: (usize, usize) = (1, MAX_THREADS);

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn args(extra: &[&str]) -> SweepArgs {
        let cli = crate::cli::Cli::parse_from(["bytepath", "sweep"].iter().chain(extra));
        match cli.command {
            crate::cli::Command::Sweep(a) => a,
            _ => unreachable!(),
        }
    }

    fn spec(extra: &[&str]) -> Result<SweepSpec, ConfigError> {
        SweepSpec::from_args(&args(extra), &[0, 1])
    }

    #[test]
    fn the_default_matrix_is_four_mechanisms_six_sizes_four_thread_counts_streamed() {
        let s = spec(&[]).unwrap();
        assert_eq!(s.total(), 4 * 6 * 4);
        assert_eq!(s.patterns, vec![Pattern::Stream]);
        assert_eq!(s.sizes, vec![256, 1024, 4096, 16384, 65536, 512 * 1024]);
        assert_eq!(s.ci_target, 0.02);
    }

    #[test]
    fn default_pin_is_cross_with_two_cpus_and_same_with_one() {
        let s = spec(&[]).unwrap();
        assert_eq!((s.pinning, s.pin_defaulted), (Pinning::Cross, true));
        let one = SweepSpec::from_args(&args(&[]), &[0]).unwrap();
        assert_eq!(one.pinning, Pinning::Same);
        let given = spec(&["--pin", "same"]).unwrap();
        assert_eq!((given.pinning, given.pin_defaulted), (Pinning::Same, false));
    }

    #[test]
    fn ci_accepts_percent_with_or_without_the_sign() {
        assert_eq!(parse_ci("2%").unwrap(), 0.02);
        assert_eq!(parse_ci("2").unwrap(), 0.02);
        assert_eq!(parse_ci("0.5%").unwrap(), 0.005);
        assert_eq!(parse_ci("50%").unwrap(), 0.5);
    }

    #[test]
    fn ci_of_zero_negative_or_above_half_is_refused() {
        for text in ["0", "0%", "-1%", "51%", "abc", "", "%", "nan", "inf"] {
            let err = parse_ci(text).unwrap_err().0;
            assert!(err.starts_with("--ci"), "{err}");
        }
    }

    #[test]
    fn a_slice_must_fit_in_a_visit() {
        assert!(spec(&["--slice", "600ms", "--visit", "500ms"])
            .unwrap_err()
            .0
            .contains("slice ≤ visit"));
        assert!(spec(&["--budget", "0s"])
            .unwrap_err()
            .0
            .starts_with("--budget"));
        assert!(spec(&["--slice", "0s"])
            .unwrap_err()
            .0
            .starts_with("--slice"));
    }

    #[test]
    fn lists_refuse_empty_entries_duplicates_and_bad_values() {
        let cases = [
            (vec!["--mechanisms", ""], "empty"),
            (vec!["--sizes", "256,,1K"], "entry 2 is empty"),
            (vec!["--sizes", "1K,1024"], "repeats"),
            (vec!["--threads", "1,2,1"], "repeats"),
            (vec!["--mechanisms", "send,teleport"], "unknown mechanism"),
            (vec!["--sizes", "12"], "multiple of 8"),
            (vec!["--sizes", "128M"], "multiple of 8"),
            (vec!["--threads", "0"], "1 to 1024"),
            (vec!["--patterns", "stream,crr"], "unknown pattern"),
        ];
        for (extra, expected) in cases {
            let err = spec(&extra).unwrap_err().0;
            assert!(err.starts_with(extra[0]), "{err}");
            assert!(err.contains(expected), "{extra:?}: {err}");
        }
    }

    #[test]
    fn recv_size_uses_the_run_rule() {
        assert_eq!(
            spec(&["--recv-size", "64K"]).unwrap().recv_size,
            Some(65536)
        );
        assert!(spec(&["--recv-size", "0"])
            .unwrap_err()
            .0
            .starts_with("--recv-size"));
    }

    #[test]
    fn counters_open_only_in_a_counter_visit_and_auto_is_all_for_both_patterns() {
        let s = spec(&["--patterns", "stream,rr"]).unwrap();
        for pattern in [Pattern::Stream, Pattern::Rr] {
            let point = Point {
                mechanism: MechanismKind::Send,
                pattern,
                message_size: 64,
                threads: 1,
            };
            assert_eq!(s.run_spec(&point, false).counters, CounterSelection::None);
            assert_eq!(s.run_spec(&point, true).counters, CounterSelection::All);
        }
        assert!(s.counter_visits());
        assert!(!spec(&["--counters", "none"]).unwrap().counter_visits());
    }

    #[test]
    fn a_visit_runs_for_the_visit_length_with_no_stopping_rule() {
        let s = spec(&["--visit", "400ms", "--slice", "50ms", "--budget", "3s"]).unwrap();
        let run = s.run_spec(&s.points()[0], false);
        assert_eq!(run.duration, Duration::from_millis(400));
        assert_eq!(run.stopping.slice, Duration::from_millis(50));
        assert_eq!(run.stopping.messages_per_flow, None);
        assert_eq!(s.total_budget(), Duration::from_secs(3 * 96));
    }

    #[test]
    fn visits_and_seed_are_checked_and_a_missing_seed_is_drawn() {
        assert_eq!(spec(&["--visits", "5"]).unwrap().min_visits, 5);
        for bad in ["1", "0", "1001", "x", "2.5"] {
            let err = spec(&["--visits", bad]).unwrap_err().0;
            assert!(
                err.starts_with("--visits") && err.contains("2 to 1000"),
                "{err}"
            );
        }
        let s = spec(&["--seed", "42"]).unwrap();
        assert_eq!((s.seed, s.seed_given), (42, true));
        assert!(spec(&["--seed=-1"]).unwrap_err().0.starts_with("--seed"));
        assert!(!spec(&[]).unwrap().seed_given);
    }

    #[test]
    fn consecutive_groups_rotate_the_mechanism_order() {
        let s = spec(&[
            "--mechanisms",
            "send,copy,gather",
            "--sizes",
            "256,1K",
            "--threads",
            "1",
        ])
        .unwrap();
        let keys: Vec<String> = s.points().iter().map(Point::key).collect();
        assert_eq!(
            keys,
            [
                "send/stream/256/1",
                "copy/stream/256/1",
                "gather/stream/256/1",
                "copy/stream/1024/1",
                "gather/stream/1024/1",
                "send/stream/1024/1",
            ]
        );
    }

    fn sublist<T: Clone + std::fmt::Debug + 'static>(all: Vec<T>) -> impl Strategy<Value = Vec<T>> {
        let n = all.len();
        prop::sample::subsequence(all, 1..=n).prop_shuffle()
    }

    fn matrix() -> impl Strategy<Value = SweepSpec> {
        (
            sublist(MechanismKind::ALL.to_vec()),
            sublist(vec![Pattern::Stream, Pattern::Rr]),
            sublist(vec![8usize, 256, 1024, 4096, 65536, 1 << 20]),
            sublist(vec![1usize, 2, 3, 4, 8, 16]),
        )
            .prop_map(|(mechanisms, patterns, sizes, threads)| SweepSpec {
                mechanisms,
                patterns,
                sizes,
                threads,
                ..spec(&[]).unwrap()
            })
    }

    proptest! {
        #[test]
        fn every_point_is_measured_exactly_once(s in matrix()) {
            let points = s.points();
            prop_assert_eq!(points.len(), s.total());
            let unique: HashSet<String> = points.iter().map(Point::key).collect();
            prop_assert_eq!(unique.len(), s.total());
            for p in &points {
                prop_assert!(s.mechanisms.contains(&p.mechanism) && s.sizes.contains(&p.message_size));
                prop_assert!(s.threads.contains(&p.threads) && s.patterns.contains(&p.pattern));
            }
        }

        #[test]
        fn no_mechanism_runs_all_its_points_in_one_block(s in matrix()) {
            // Every group of len(mechanisms) consecutive points holds each mechanism once.
            for group in s.points().chunks(s.mechanisms.len()) {
                let names: HashSet<_> = group.iter().map(|p| p.mechanism.name()).collect();
                prop_assert_eq!(names.len(), s.mechanisms.len());
            }
        }

        #[test]
        fn listed_sizes_parse_back_in_order(sizes in prop::collection::hash_set(1usize..=(SIZE_BOUNDS.1 / 8), 1..8)) {
            let sizes: Vec<usize> = sizes.into_iter().map(|n| n * 8).collect();
            let text = sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(",");
            prop_assert_eq!(parse_list("--sizes", &text, config::parse_message_size).unwrap(), sizes);
        }

        #[test]
        fn a_repeated_thread_count_is_always_refused(list in prop::collection::vec(THREAD_BOUNDS.0..=THREAD_BOUNDS.1, 1..6), pick in any::<prop::sample::Index>()) {
            let mut list = list;
            list.push(*pick.get(&list));
            let text = list.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(",");
            prop_assert!(parse_list("--threads", &text, config::parse_threads).is_err());
        }

        #[test]
        fn ci_percent_in_range_parses_to_its_fraction(p in 0.01f64..=50.0) {
            let text = format!("{p}%");
            prop_assert!((parse_ci(&text).unwrap() - p / 100.0).abs() < 1e-12);
        }

        #[test]
        fn times_are_accepted_exactly_when_the_slice_fits_the_visit(slice in 1u64..500, visit in 1u64..500) {
            let (slice_ms, visit_ms) = (format!("{slice}ms"), format!("{visit}ms"));
            let result = spec(&["--slice", &slice_ms, "--visit", &visit_ms]);
            prop_assert_eq!(result.is_ok(), slice <= visit);
            if let Ok(s) = result {
                prop_assert_eq!(s.slice, Duration::from_millis(slice));
                prop_assert_eq!(s.visit, Duration::from_millis(visit));
            }
        }

        #[test]
        fn list_and_ci_parsers_never_panic(text in ".{0,16}") {
            let _ = parse_list("--sizes", &text, config::parse_message_size);
            let _ = parse_ci(&text);
        }
    }
}
