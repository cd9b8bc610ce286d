//! `bytepath ipc`'s flags -> a validated `IpcSpec` (with the transports and sizes this
//! placement cannot carry left out, or refused when named), the placement, and the study.
use super::network::network;
use super::remote::remote_run;
use crate::cli::IpcArgs;
use crate::config::remote::carries;
use crate::config::{
    parse_bytes, parse_duration, parse_list, parse_pipe_size, Network, LIST_ENTRY, MAX_MESSAGE_SIZE,
};
use crate::error::{bad, ConfigError, Error, Status};
use crate::ipc::{IpcSpec, Measure};
use crate::report::folder::StudyOutput;
use crate::sides::Sides;
use crate::transport::Transport;
use std::sync::atomic::AtomicBool;

/// Every transport, the default of `--transports`.
const ALL_TRANSPORTS: &str = "pipe,unix,unix-dgram,tcp,udp,shm";

/// `bytepath ipc`: parses the flags, opens the placement once for every point (before the
/// folder is made, so an unreachable server is one error and no empty folder; dropped, and
/// namespaces deleted, when the command returns) and measures the study.
pub fn command(args: &IpcArgs, interrupt: &AtomicBool) -> Result<Status, Error> {
    let cpus = super::allowed_cpus()?;
    let spec = ipc_spec(args, &cpus)?;
    args.percentiles.choose()?;
    let sides = Sides::open(&spec.network, spec.remote.as_ref())?;
    let stream = super::stream(&args.stream, false)?;
    let output = StudyOutput {
        out: args.folder.out.clone(),
        arguments: super::as_given(args),
        stream: stream.clone(),
        ..StudyOutput::default()
    };
    let mut study = crate::ipc::Ipc::new(&spec, &sides);
    super::streamed(&stream, crate::study::drive(&mut study, &output, interrupt))
}

/// `bytepath ipc`'s flags -> the study's spec, every input checked.
pub fn ipc_spec(args: &IpcArgs, cpus: &[usize]) -> Result<IpcSpec, ConfigError> {
    let named = args.transports.as_deref();
    let transports = parse_list("--transports", named.unwrap_or(ALL_TRANSPORTS), |t| {
        t.parse::<Transport>()
    })?;
    let network = network(&args.network)?;
    let remote = remote_run(&args.remote, &network)?;
    if let Some(remote) = &remote {
        check_remote(args, remote)?;
    }
    let (transports, mut skip_reasons) =
        placement_skips(transports, &network, remote.is_some(), named.is_some())?;
    let sizes = parse_list("--sizes", &args.sizes, parse_size)?;
    let (skipped, datagram_reasons) = datagram_skips(
        &transports,
        &sizes,
        args.udp_split.udp_split,
        named.is_some(),
    )?;
    skip_reasons.extend(datagram_reasons);
    let measures = parse_list("--measure", &args.measure, parse_measure)?;
    let trials = match args.trials.trim().parse::<u64>() {
        Ok(n) if n > 0 => n,
        _ => {
            return Err(bad(format!(
                "--trials {:?}: allowed: a whole number above 0",
                args.trials
            )))
        }
    };
    let bytes = bandwidth_bytes(&args.bytes, &measures, &sizes)?;
    Ok(IpcSpec {
        transports,
        sizes,
        measures,
        trials,
        bytes,
        max_time: parse_duration("--max-time", &args.max_time, false)?,
        warmup: args.warmup.or(crate::cli::WarmupArgs::STUDY)?,
        buffers: buffers(args)?,
        visits: args.visits.count(VISIT_BOUNDS)?,
        seed: args.seed.seed()?,
        pinning: args.pin.or_cross(cpus)?,
        cpus: cpus.to_vec(),
        udp_split: args.udp_split.udp_split,
        skipped,
        skip_reasons,
        processes: args.processes.processes,
        network,
        remote,
        watch: super::watch::watch(&args.watch)?,
        margin: args.margin.share()?,
    })
}

/// What `--remote` rules out in ipc: `--reverse` and `--processes`.
fn check_remote(args: &IpcArgs, remote: &crate::config::RemoteRun) -> Result<(), ConfigError> {
    if remote.reverse {
        return Err(bad(
            "--reverse with ipc: ipc measures on this host; --reverse is for `run` (stream) only",
        ));
    }
    if args.processes.processes {
        return Err(bad(
            "--processes with --remote: the server already runs the other side in its own process; drop --processes",
        ));
    }
    Ok(())
}

/// One `--measure` value.
fn parse_measure(text: &str) -> Result<Measure, ConfigError> {
    match text {
        "latency" => Ok(Measure::Latency),
        "bandwidth" => Ok(Measure::Bandwidth),
        _ => Err(bad(format!(
            "{text:?}: unknown measure; allowed: latency, bandwidth"
        ))),
    }
}

/// `--bytes`: what one bandwidth trial moves, at least one write of the largest size.
fn bandwidth_bytes(text: &str, measures: &[Measure], sizes: &[usize]) -> Result<u64, ConfigError> {
    let bytes = parse_bytes(text).filter(|&b| b > 0).ok_or_else(|| {
        bad(format!(
            "--bytes {text:?}: allowed: a size such as 64M or 1GiB"
        ))
    })?;
    let largest = *sizes.iter().max().expect("a parsed list is not empty");
    if measures.contains(&Measure::Bandwidth) && bytes < largest as u64 {
        return Err(bad(format!(
            "--bytes {text:?} ({bytes} B) is smaller than one write of {largest} B; allowed: at least the largest size"
        )));
    }
    Ok(bytes)
}

/// `--pipe-sizes` (or the one `--pipe-size`): the buffers pipe and shm points are measured
/// with; `[None]` for the kernel's default.
fn buffers(args: &IpcArgs) -> Result<Vec<Option<usize>>, ConfigError> {
    match (&args.pipe_size.pipe_size, &args.pipe_sizes) {
        (Some(_), Some(_)) => Err(bad(
            "--pipe-size with --pipe-sizes: give one; allowed: --pipe-sizes 64K,1M alone",
        )),
        (Some(one), None) => Ok(vec![Some(parse_pipe_size("--pipe-size", one)?)]),
        (None, Some(list)) => {
            let sizes = parse_list("--pipe-sizes", list, |t| parse_pipe_size(LIST_ENTRY, t))?;
            Ok(sizes.into_iter().map(Some).collect())
        }
        (None, None) => Ok(vec![None]),
    }
}

/// `--visits`: at least 2, so every point has an interval and every pair a paired ratio.
const VISIT_BOUNDS: (usize, usize) = (2, 1000);

/// The transports that cannot run in this placement (only tcp and udp cross namespaces or
/// reach a server): refused when named, otherwise left out with one line each saying why.
fn placement_skips(
    transports: Vec<Transport>,
    network: &Network,
    remote: bool,
    named: bool,
) -> Result<(Vec<Transport>, Vec<String>), ConfigError> {
    let flag = if remote { "--remote" } else { "--netns" };
    let mut kept = Vec::new();
    let mut reasons = Vec::new();
    for t in transports {
        match carries(network, remote, t) {
            Ok(()) => kept.push(t),
            Err(why) if named && remote => {
                return Err(bad(format!(
                    "--transports {} with --remote: {why}; allowed with --remote: tcp, udp",
                    t.name()
                )))
            }
            Err(_) if named => return Err(network.check_transport(t).unwrap_err()),
            Err(why) => reasons.push(format!(
                "{} left out with {flag}: {why} (name --transports to have it refused)",
                t.name()
            )),
        }
    }
    Ok((kept, reasons))
}

/// The sizes each datagram transport cannot carry: refused when the transports were named,
/// otherwise left out with one line each saying why.
#[allow(clippy::type_complexity)]
fn datagram_skips(
    transports: &[Transport],
    sizes: &[usize],
    split: bool,
    named: bool,
) -> Result<(Vec<(Transport, usize)>, Vec<String>), ConfigError> {
    let mut skipped = Vec::new();
    let mut reasons = Vec::new();
    for &t in transports.iter().filter(|t| t.is_datagram()) {
        let refused: Vec<(usize, String)> = sizes
            .iter()
            .filter_map(|&size| {
                let e = crate::transport::datagram::Framing::for_transport(t, size, split).err()?;
                Some((size, e))
            })
            .collect();
        let Some((_, first)) = refused.first() else {
            continue;
        };
        if named {
            return Err(bad(format!("--sizes {first}")));
        }
        let list: Vec<String> = refused.iter().map(|(s, _)| format!("{s} B")).collect();
        reasons.push(format!(
            "{} skips {}: {first} (name --transports to have such sizes refused)",
            t.name(),
            list.join(", ")
        ));
        skipped.extend(refused.iter().map(|&(s, _)| (t, s)));
    }
    Ok((skipped, reasons))
}

fn parse_size(text: &str) -> Result<usize, ConfigError> {
    match parse_bytes(text) {
        Some(n) if n >= 1 && n <= MAX_MESSAGE_SIZE as u64 => Ok(n as usize),
        _ => Err(bad(format!("{text:?}: allowed: a size from 1 B to 64 MiB"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Pattern, Pinning};
    use crate::ipc::Measure;
    use clap::Parser;

    fn spec(extra: &[&str]) -> Result<IpcSpec, ConfigError> {
        let cli = crate::cli::Cli::parse_from([&["bytepath", "ipc"][..], extra].concat());
        match cli.command {
            crate::cli::Command::Ipc(args) => ipc_spec(&args, &[0, 1]),
            _ => unreachable!("parsed an ipc command"),
        }
    }

    #[test]
    fn the_margin_is_recorded_in_the_spec_and_a_bad_one_names_the_flag() {
        assert_eq!(spec(&[]).unwrap().margin, 0.05, "--margin's default");
        let json = serde_json::to_value(spec(&["--margin", "2%"]).unwrap()).unwrap();
        assert_eq!(json["margin"], 0.02);
        let err = spec(&["--margin", "70%"]).unwrap_err().to_string();
        assert!(
            err.contains("--margin \"70%\"") && err.contains("at most 50"),
            "{err}"
        );
    }

    /// The marker's spec block is the whole configuration, `seed` and `visits` where they
    /// always were.
    #[test]
    fn the_marker_spec_holds_the_whole_configuration() {
        let s = spec(&[
            "--seed",
            "3",
            "--visits",
            "4",
            "--transports",
            "pipe,tcp",
            "--sizes",
            "64,4K",
        ]);
        let json = serde_json::to_value(s.unwrap()).unwrap();
        assert_eq!((&json["seed"], &json["visits"]), (&3.into(), &4.into()));
        assert_eq!(json["transports"], serde_json::json!(["pipe", "tcp"]));
        assert_eq!(json["sizes_bytes"], serde_json::json!([64, 4096]));
        assert_eq!(
            (&json["pin"], &json["warmup_s"]),
            (&"cross".into(), &0.2.into())
        );
        assert!(json.get("cpus").is_none() && json.get("skip_reasons").is_none());
    }

    #[test]
    fn every_measure_size_and_transport_is_one_point() {
        let s = spec(&["--transports", "pipe,shm", "--sizes", "4,1K,64K"]).unwrap();
        let points = s.points();
        assert_eq!(points.len(), 2 * 3 * 2);
        let at = |p: &crate::ipc::Point| (p.measure, p.size, p.transport, p.buffer);
        assert_eq!(at(&points[0]), (Measure::Latency, 4, Transport::Pipe, None));
        assert_eq!(
            at(&points[1]),
            (Measure::Latency, 4, Transport::Shm, None),
            "transports interleave"
        );
    }

    #[test]
    fn latency_counts_round_trips_and_bandwidth_counts_whole_writes() {
        let s = spec(&[
            "--trials", "500", "--bytes", "1M", "--sizes", "3000", "--visits", "2",
        ])
        .unwrap();
        let at = |measure| crate::ipc::Point {
            measure,
            size: 3000,
            transport: Transport::Unix,
            buffer: None,
        };
        let lat = s.run_spec(&at(Measure::Latency));
        assert_eq!(
            (lat.pattern, lat.stopping.messages_per_flow),
            (Pattern::Rr, Some(250)),
            "the trials split over two visits"
        );
        let bw = s.run_spec(&at(Measure::Bandwidth));
        assert_eq!(bw.pattern, Pattern::Stream);
        assert_eq!(
            bw.stopping.messages_per_flow,
            Some((1u64 << 19).div_ceil(3000))
        );
        assert_eq!(s.pinning, Pinning::Cross, "cross by default on two CPUs");
    }

    #[test]
    fn the_pipe_size_goes_only_to_pipes_and_rings() {
        let s = spec(&["--pipe-size", "256K"]).unwrap();
        let at = |transport, buffer| crate::ipc::Point {
            measure: Measure::Latency,
            size: 64,
            transport,
            buffer,
        };
        assert_eq!(
            s.run_spec(&at(Transport::Pipe, Some(256 << 10))).pipe_size,
            Some(256 << 10)
        );
        assert_eq!(
            s.run_spec(&at(Transport::Tcp, Some(256 << 10))).pipe_size,
            None
        );
    }

    #[test]
    fn pipe_sizes_make_the_buffer_a_dimension_of_pipe_and_shm_only() {
        let s = spec(&[
            "--transports",
            "pipe,unix,shm",
            "--sizes",
            "64",
            "--measure",
            "bandwidth",
            "--pipe-sizes",
            "64K,1M",
        ])
        .unwrap();
        let points = s.points();
        let buffers = |t| -> Vec<Option<usize>> {
            points
                .iter()
                .filter(|p| p.transport == t)
                .map(|p| p.buffer)
                .collect()
        };
        assert_eq!(buffers(Transport::Pipe), [Some(64 << 10), Some(1 << 20)]);
        assert_eq!(buffers(Transport::Shm), [Some(64 << 10), Some(1 << 20)]);
        assert_eq!(buffers(Transport::Unix), [None]);
    }

    #[test]
    fn bad_pipe_sizes_and_visits_are_one_line_naming_the_value() {
        for (args, needle) in [
            (
                vec!["--pipe-sizes", "64K,lots"],
                "--pipe-sizes: \"lots\": allowed: 4 KiB to",
            ),
            (
                vec!["--pipe-sizes", "1K"],
                "--pipe-sizes: \"1K\": allowed: 4 KiB to",
            ),
            (
                vec!["--pipe-sizes", "64K,,1M"],
                "--pipe-sizes \"64K,,1M\": entry 2 is empty",
            ),
            (vec!["--pipe-size", "64K", "--pipe-sizes", "1M"], "give one"),
            (
                vec!["--visits", "1"],
                "--visits \"1\": allowed: a whole number from 2",
            ),
        ] {
            let e = spec(&args).unwrap_err().0;
            assert!(e.contains(needle) && !e.contains('\n'), "{args:?}: {e}");
        }
    }
}

#[cfg(test)]
#[path = "ipc_study_tests.rs"]
mod study_tests;
