//! `bytepath sweep`'s flags -> a validated `SweepSpec`, the placement every point runs in, and
//! the sweep itself. Single values are parsed by `spec`'s parsers; this file only adds the
//! sweep's own (the CI target, visits, seed) and the checks across flags.
use super::network::{check_sweep_sink, check_sweep_sink_sizes, placement};
use super::remote::remote_run;
use crate::cli::SweepArgs;
use crate::config::{
    check_recv_path, check_transport, mechanism_among, parse_duration, parse_list,
    parse_message_size, parse_percent, parse_queue_depth, parse_threads, Network, Pattern,
    RemoteRun, LIST_ENTRY,
};
use crate::error::{bad, ConfigError, Error, Status};
use crate::mechanism::descriptor::{in_words, names};
use crate::mechanism::receive::path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::report::folder::{self, StudyOutput};
use crate::sides::Sides;
use crate::sweep::spec::{SweepSpec, MAX_CI_PERCENT, VISIT_BOUNDS};
use crate::transport::Transport;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// `bytepath sweep`: parses the flags, opens the placement once for every point (before the
/// folder is made, so an unreachable server is one error and no empty folder; dropped, and
/// namespaces deleted, when the sweep returns) and measures the sweep.
pub fn command(args: &SweepArgs, interrupt: &AtomicBool) -> Result<Status, Error> {
    let cpus = super::allowed_cpus()?;
    let mut spec = sweep_spec(args, &cpus)?;
    args.percentiles.choose()?;
    if args.folder.resume && !spec.seed_given {
        // The order is replayed from the seed the sweep started with.
        if let Some(seed) = args
            .folder
            .folder
            .out
            .as_deref()
            .and_then(folder::saved_seed)
        {
            spec.seed = seed;
        }
    }
    let sides = Sides::open(&spec.network, spec.remote.as_ref())?;
    let stream = super::stream(&args.stream, false)?;
    let output = StudyOutput {
        out: args.folder.folder.out.clone(),
        resume: args.folder.resume,
        arguments: super::as_given(args),
        json: false,
        stream: stream.clone(),
    };
    super::streamed(
        &stream,
        crate::study::drive(
            &mut crate::sweep::Sweep::new(&spec, &sides),
            &output,
            interrupt,
        ),
    )
}

/// `--mechanisms` among the mechanisms `known` (`all` for every one that sends on the sweep's
/// transport: tcp, where sendmmsg, which sends datagrams, is not one; on a sink udp).
fn mechanisms(
    text: &str,
    known: &[MechanismKind],
    transport: Transport,
) -> Result<Vec<MechanismKind>, ConfigError> {
    match text.trim() {
        "all" => Ok(known
            .iter()
            .copied()
            .filter(|&m| check_transport(transport, m).is_ok())
            .collect()),
        text => parse_list("--mechanisms", text, |t| mechanism_among(known, t)),
    }
}

/// `--queue-depth`: kept only when an io_uring mechanism is in the sweep, refused when none is
/// (naming those among `known` it applies to).
fn queue_depth(
    args: &SweepArgs,
    mechanisms: &[MechanismKind],
    known: &[MechanismKind],
) -> Result<Option<u32>, ConfigError> {
    let uring = mechanisms.iter().any(|m| m.uses_queue_depth);
    let depth = args.queue_depth.queue_depth.as_deref();
    if depth.is_some() && !uring {
        let batched = names(known, |d| d.uses_queue_depth);
        return Err(bad(format!(
            "--queue-depth without an io_uring mechanism or sendmmsg: applies to {} only",
            in_words(&batched)
        )));
    }
    match uring {
        true => Ok(Some(parse_queue_depth(depth)?)),
        false => Ok(None),
    }
}

/// `bytepath sweep`'s flags -> the sweep's spec, every input checked.
pub fn sweep_spec(args: &SweepArgs, cpus: &[usize]) -> Result<SweepSpec, ConfigError> {
    sweep_spec_among(args, cpus, MechanismKind::ALL)
}

/// The sweep's spec with the mechanisms `known` (production: every one bytepath has):
/// `--mechanisms` names them and the refusals list the ones that would do.
fn sweep_spec_among(
    args: &SweepArgs,
    cpus: &[usize],
    known: &[MechanismKind],
) -> Result<SweepSpec, ConfigError> {
    let patterns = parse_list("--patterns", &args.patterns, |t| t.parse::<Pattern>())?;
    check_counters(args, &patterns)?;
    let (visit, slice) = parse_times(args)?;
    let (network, remote) = network_and_remote(args)?;
    let transport = crate::sweep::spec::transport_of(&network);
    let mechanisms = mechanisms(&args.mechanisms, known, transport)?;
    let queue_depth = queue_depth(args, &mechanisms, known)?;
    let recv_path = args.receive.path()?;
    check_paths(&mechanisms, recv_path, args.verify.verify, transport)?;
    if patterns.contains(&Pattern::Crr) {
        let (netns, is_remote) = (network.is_netns(), remote.is_some());
        crate::config::crr::check_sweep(&mechanisms, known, recv_path, netns, is_remote)?;
    }
    let beside_loopback = beside_loopback(args, &network)?;
    let (sizes, gso) = sizes_and_gso(args, &network)?;
    let udp_split = udp_split(args, &network)?;
    let spec = SweepSpec {
        mechanisms,
        patterns,
        sizes,
        threads: parse_list("--threads", &args.threads, |t| parse_threads(LIST_ENTRY, t))?,
        ci_target: parse_ci(&args.ci)?,
        min_visits: parse_min_visits(&args.min_visits)?,
        visit,
        budget: parse_duration("--budget", &args.budget, false)?,
        seed: args.seed.seed()?,
        seed_given: args.seed.given(),
        slice,
        warmup: args.warmup.or(crate::cli::WarmupArgs::SWEEP)?,
        pinning: args.pin.or_cross(cpus)?,
        pin_defaulted: args.pin.defaulted(),
        cpus: cpus.to_vec(),
        recv_size: args.receive.size()?,
        counters: args.counters.counters.clone(),
        verify: args.verify.verify,
        network,
        remote,
        queue_depth,
        recv_path,
        profile: args.profile.profile,
        count_copies: args.count_copies.count_copies,
        bidir: args.bidir.bidir,
        under_load: args.under_load.flows()?,
        beside_loopback,
        gso,
        udp_split,
        watch: super::watch::watch(&args.watch)?,
        margin: args.margin.share()?,
        socket_buffers: sweep_buffers(args, transport)?,
        tcp_info: args.tcp_info.sampled()?,
    };
    check_points(&spec, known)?;
    Ok(spec)
}

/// `--counters` as each pattern of the sweep takes it.
fn check_counters(args: &SweepArgs, patterns: &[Pattern]) -> Result<(), ConfigError> {
    for &pattern in patterns {
        args.counters.selection(pattern)?;
    }
    Ok(())
}

/// Every point as a run would check it: a sink's, --bidir's twins, --under-load's twins.
fn check_points(spec: &SweepSpec, known: &[MechanismKind]) -> Result<(), ConfigError> {
    check_sink_points(spec, known)?;
    check_bidir(spec, known)?;
    check_under_load(spec)
}

/// `--rcvbuf` / `--sndbuf` for every point, refused off tcp (a sink's udp); with `--remote`
/// the server sets them too.
fn sweep_buffers(
    args: &SweepArgs,
    transport: crate::transport::Transport,
) -> Result<crate::transport::buffers::SocketBuffers, ConfigError> {
    super::socket_buffers::socket_buffers(&args.socket_buffers, transport)
}

/// Where the points run: `--netns`, `--sink` (whose MTU `--gso` sets) or `--remote`, which
/// a sweep takes without `--reverse`.
fn network_and_remote(args: &SweepArgs) -> Result<(Network, Option<RemoteRun>), ConfigError> {
    let network = placement(&args.network, &args.sink, args.gso.given())?;
    let remote = remote_run(&args.remote, &network)?;
    if remote.as_ref().is_some_and(|r| r.reverse) {
        return Err(ConfigError(
            "--reverse with sweep: a sweep reads each visit's figures on this host, which --reverse would leave on the server; --reverse is for `run` (stream) only".into(),
        ));
    }
    Ok((network, remote))
}

/// `--sink`: the patterns and mechanisms a sink carries, the sizes a datagram holds, then
/// every point as a run would check it (nothing off a sink).
fn check_sink_points(spec: &SweepSpec, known: &[MechanismKind]) -> Result<(), ConfigError> {
    if !spec.network.is_sink() {
        return Ok(());
    }
    check_sweep_sink(&spec.patterns, &spec.mechanisms, known)?;
    if !spec.udp_split {
        check_sweep_sink_sizes(&spec.sizes)?;
    }
    for point in spec.points() {
        let run = spec.run_spec(&point, false);
        crate::config::network::check_sink(&run)?;
        super::gso::check_datagram_sends(&run)?;
    }
    Ok(())
}

/// `--sizes`, and `--gso` checked against them for the sweep's transport: tcp, which --gso
/// refuses, or on a sink udp (`SweepSpec::transport`).
fn sizes_and_gso(
    args: &SweepArgs,
    network: &crate::config::Network,
) -> Result<(Vec<usize>, Option<usize>), ConfigError> {
    let sizes = parse_list("--sizes", &args.sizes, |t| {
        parse_message_size(LIST_ENTRY, t)
    })?;
    let transport = crate::sweep::spec::transport_of(network);
    let split = args.udp_split.udp_split;
    let gso = super::gso::gso(&args.gso, transport, network, &sizes, split)?;
    Ok((sizes, gso))
}

/// Every point's mechanism and receive path on the sweep's transport (tcp; on a sink udp).
fn check_paths(
    mechanisms: &[MechanismKind],
    recv_path: RecvPath,
    verify: bool,
    transport: Transport,
) -> Result<(), ConfigError> {
    for &m in mechanisms {
        check_transport(transport, m)?;
    }
    check_recv_path(recv_path, transport, verify)
}

/// `--udp-split`: a sweep's points are udp on a sink alone.
fn udp_split(args: &SweepArgs, network: &Network) -> Result<bool, ConfigError> {
    match (args.udp_split.udp_split, network.is_sink()) {
        (true, false) => Err(bad(
            "--udp-split without --sink: a sweep's points are tcp, which has no datagrams to split; add --sink, or leave it out",
        )),
        (given, _) => Ok(given),
    }
}

/// `--beside-loopback`: loopback twins of a sink's points; nothing to stand beside without one.
fn beside_loopback(args: &SweepArgs, network: &Network) -> Result<bool, ConfigError> {
    match (args.beside_loopback, network.is_sink()) {
        (true, false) => Err(bad(
            "--beside-loopback without --sink: it visits a sink's points over loopback UDP too; add --sink, or leave it out",
        )),
        (given, _) => Ok(given),
    }
}

/// `sweep --bidir`: what `run --bidir` refuses, refused for the whole sweep in one line (the
/// first bidir point's mechanism, pattern or setting it cannot carry).
fn check_bidir(spec: &SweepSpec, known: &[MechanismKind]) -> Result<(), ConfigError> {
    if spec.bidir && spec.remote.is_some() {
        return Err(bad(crate::config::bidir::REMOTE_REFUSAL));
    }
    for point in spec.points().iter().filter(|p| p.bidir) {
        crate::config::bidir::check(&spec.run_spec(point, false), known)?;
    }
    Ok(())
}

/// `sweep --under-load`: rr points alone carry a load (one line naming the first other
/// pattern), then every loaded point as `run --under-load` would check it.
fn check_under_load(spec: &SweepSpec) -> Result<(), ConfigError> {
    if spec.under_load.is_none() {
        return Ok(());
    }
    if spec.remote.is_some() {
        return Err(bad(crate::config::under_load::REMOTE_REFUSAL));
    }
    if let Some(p) = spec.patterns.iter().find(|p| **p != Pattern::Rr) {
        return Err(bad(format!(
            "--under-load with --patterns {}: allowed only with rr (the latency measured beside the load is the rr flow's round trip)",
            p.name()
        )));
    }
    for point in spec.points().iter().filter(|p| p.under_load) {
        crate::config::under_load::check(&spec.run_spec(point, false))?;
    }
    Ok(())
}

/// `2%` or `2` (both percent) -> 0.02; refuses 0, negative, and above 50 %.
pub fn parse_ci(text: &str) -> Result<f64, ConfigError> {
    parse_percent("--ci", text, MAX_CI_PERCENT)
}

/// `--visit` and `--slice`, both above zero, a slice no longer than a visit.
fn parse_times(args: &SweepArgs) -> Result<(Duration, Duration), ConfigError> {
    let visit = parse_duration("--visit", &args.visit, false)?;
    let slice = parse_duration("--slice", &args.slice, false)?;
    if slice > visit {
        return Err(bad(format!(
            "--slice {} is longer than --visit {}; allowed: slice ≤ visit (a visit is cut into slices)",
            args.slice, args.visit
        )));
    }
    Ok((visit, slice))
}

/// `--min-visits`: a whole number from 2 to 1000.
pub fn parse_min_visits(text: &str) -> Result<usize, ConfigError> {
    let (lo, hi) = VISIT_BOUNDS;
    match text.trim().parse::<usize>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "--min-visits {text:?}: allowed: a whole number from {lo} to {hi} (an interval needs two visit means)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{parse_list, parse_message_size, Pinning, LIST_ENTRY};
    use crate::measure::counters::CounterSelection;
    use crate::mechanism::MechanismKind;
    use crate::sweep::spec::Point;
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
        sweep_spec(&args(extra), &[0, 1])
    }

    #[test]
    fn the_default_matrix_is_four_mechanisms_six_sizes_four_thread_counts_streamed() {
        let s = spec(&[]).unwrap();
        assert_eq!(s.total(), 4 * 6 * 4);
        assert_eq!(s.patterns, vec![Pattern::Stream]);
        assert_eq!(s.sizes, vec![256, 1024, 4096, 16384, 65536, 512 * 1024]);
        assert_eq!(s.ci_target, 0.02);
    }

    /// The marker's `spec` block, derived from the spec, holds exactly the keys the hand-built
    /// one of schema 2 held, so older folders still resume (`--resume` compares key by key).
    #[test]
    fn the_marker_spec_keeps_the_schema_2_keys() {
        let plain = spec(&[
            "--seed",
            "7",
            "--sizes",
            "4K",
            "--threads",
            "1",
            "--pin",
            "same",
        ]);
        let json = serde_json::to_value(plain.unwrap()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "mechanisms": ["send", "copy", "gather", "zerocopy"],
                "patterns": ["stream"],
                "sizes_bytes": [4096],
                "threads": [1],
                "ci_target_rel": 0.02,
                "min_visits": 4,
                "visit_s": 0.1,
                "budget_per_point_s": 2.2,
                "seed": 7,
                "slice_s": 0.025,
                "warmup_s": 0.025,
                "pin": "same",
                "recv_size_bytes": null,
                "counters": "auto",
                "verify": false,
            })
        );
        // Settings present only when used, with the values the old builder wrote.
        let used = spec(&[
            "--mechanisms",
            "uring",
            "--queue-depth",
            "8",
            "--recv",
            "uring-recv",
            "--profile",
        ]);
        let json = serde_json::to_value(used.unwrap()).unwrap();
        assert_eq!(json["mechanisms"], serde_json::json!(["uring"]));
        assert_eq!(
            (&json["queue_depth"], &json["recv"], &json["profile"]),
            (&8.into(), &"uring-recv".into(), &true.into())
        );
        assert!(json.get("network").is_none() && json.get("remote").is_none());
        let remote = serde_json::to_value(spec(&["--remote", "10.0.0.9"]).unwrap()).unwrap();
        assert!(
            remote["remote"].as_str().unwrap().starts_with("10.0.0.9"),
            "{remote}"
        );
    }

    #[test]
    fn default_pin_is_cross_with_two_cpus_and_same_with_one() {
        let s = spec(&[]).unwrap();
        assert_eq!((s.pinning, s.pin_defaulted), (Pinning::Cross, true));
        let one = sweep_spec(&args(&[]), &[0]).unwrap();
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
            (vec!["--patterns", "stream,crq"], "unknown pattern"),
            (
                vec!["--mechanisms", "send,splice", "--patterns", "stream,crr"],
                "with --patterns crr",
            ),
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
                mechanism: MechanismKind::SEND,
                pattern,
                message_size: 64,
                threads: 1,
                bidir: false,
                loopback_twin: false,
                under_load: false,
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
        assert_eq!(spec(&["--min-visits", "5"]).unwrap().min_visits, 5);
        let default = spec(&[]).unwrap().min_visits;
        assert!(
            default >= 4 && default % 2 == 0,
            "an even default, so each order pairs with its reversal: {default}"
        );
        assert_eq!(
            spec(&["--visits", "4"]).unwrap().min_visits,
            4,
            "the old spelling"
        );
        for bad in ["1", "0", "1001", "x", "2.5"] {
            let err = spec(&["--min-visits", bad]).unwrap_err().0;
            assert!(
                err.starts_with("--min-visits") && err.contains("2 to 1000"),
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
            let _ = parse_list("--sizes", &text, |t| parse_message_size(LIST_ENTRY, t));
            let _ = parse_ci(&text);
        }
    }
}

#[cfg(test)]
#[path = "sweep_added_mechanism_tests.rs"]
mod added_mechanism_tests;

#[cfg(test)]
#[path = "sweep_study_tests.rs"]
mod study_tests;
