//! `bytepath ipc`: the seeds' IPC study on the run engine (no second engine). Latency is a
//! ping-pong of `--trials` round trips (rr); bandwidth moves `--bytes` in writes of each size
//! (stream, timed on the receiving side, so the time covers delivery, not buffering). Every
//! point is a run record, written to a results folder as it finishes.
use crate::cli::IpcArgs;
use crate::config::{
    self, parse_bytes, parse_duration, parse_pinning, ConfigError, Network, Pattern, Pinning,
    RunSpec, Stopping, MAX_MESSAGE_SIZE,
};
use crate::engine::{self, RunOutcome};
use crate::environment::Environment;
use crate::error::{Error, Status};
use crate::measure::counters::CounterSelection;
use crate::mechanism::MechanismKind;
use crate::record::{self, RunRecord, SweepPoint};
use crate::sides::Sides;
use crate::sweep::folder::{self, Saved};
use crate::sweep::spec::parse_list;
use crate::transport::Transport;
use crate::{report, sys};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub const IPC_KIND: &str = "bytepath ipc results";

/// What to measure at each (transport, size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    Latency,
    Bandwidth,
}

/// A validated `bytepath ipc` invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct IpcSpec {
    pub transports: Vec<Transport>,
    pub sizes: Vec<usize>,
    pub measures: Vec<Measure>,
    pub trials: u64,
    pub bytes: u64,
    pub max_time: Duration,
    pub warmup: Duration,
    pub pipe_size: Option<usize>,
    pub pinning: Pinning,
    pub cpus: Vec<usize>,
    pub udp_split: bool,
    /// (transport, size) pairs left out: a datagram transport that cannot carry the size, when
    /// the transports were not named (named, such a size is refused instead).
    pub skipped: Vec<(Transport, usize)>,
    /// Why, one line per transport, as printed.
    pub skip_reasons: Vec<String>,
    /// `--processes`: client and server (sender and receiver) in two processes.
    pub processes: bool,
    /// Where the sides run (`--netns`, `--mtu`, `--netem`).
    pub network: Network,
    /// `--remote`: the other side of every point on `bytepath server` there (tcp and udp).
    pub remote: Option<config::RemoteRun>,
}

/// Every transport, the default of `--transports`.
const ALL_TRANSPORTS: &str = "pipe,unix,unix-dgram,tcp,udp,shm";

fn bad(msg: String) -> ConfigError {
    ConfigError(msg)
}

impl IpcSpec {
    pub fn from_args(args: &IpcArgs, cpus: &[usize]) -> Result<IpcSpec, ConfigError> {
        let named = args.transports.as_deref();
        let transports = parse_list("--transports", named.unwrap_or(ALL_TRANSPORTS), |t| {
            t.parse::<Transport>()
        })?;
        let network = Network::from_args(&args.network)?;
        let remote = config::RemoteRun::from_args(&args.remote, &network)?;
        if let Some(remote) = &remote {
            if remote.reverse {
                return Err(bad(
                    "--reverse with ipc: ipc measures on this host; --reverse is for `run` (stream) only".into(),
                ));
            }
            if args.processes {
                return Err(bad(
                    "--processes with --remote: the server already runs the other side in its own process; drop --processes".into(),
                ));
            }
        }
        let (transports, mut skip_reasons) =
            placement_skips(transports, &network, remote.is_some(), named.is_some())?;
        let sizes = parse_list("--sizes", &args.sizes, parse_size)?;
        let (skipped, datagram_reasons) =
            datagram_skips(&transports, &sizes, args.udp_split, named.is_some())?;
        skip_reasons.extend(datagram_reasons);
        let measures = parse_list("--measure", &args.measure, |m| match m {
            "latency" => Ok(Measure::Latency),
            "bandwidth" => Ok(Measure::Bandwidth),
            _ => Err(bad(format!(
                "{m:?}: unknown measure; allowed: latency, bandwidth"
            ))),
        })?;
        let trials = match args.trials.trim().parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(bad(format!(
                    "--trials {:?}: allowed: a whole number above 0",
                    args.trials
                )))
            }
        };
        let bytes = parse_bytes(&args.bytes).filter(|&b| b > 0).ok_or_else(|| {
            bad(format!(
                "--bytes {:?}: allowed: a size such as 64M or 1GiB",
                args.bytes
            ))
        })?;
        let largest = *sizes.iter().max().expect("a parsed list is not empty");
        if measures.contains(&Measure::Bandwidth) && bytes < largest as u64 {
            return Err(bad(format!(
                "--bytes {:?} ({bytes} B) is smaller than one write of {largest} B; allowed: at least the largest size",
                args.bytes
            )));
        }
        let pin = args
            .pin
            .as_deref()
            .or(Some(if cpus.len() >= 2 { "cross" } else { "same" }));
        Ok(IpcSpec {
            transports,
            sizes,
            measures,
            trials,
            bytes,
            max_time: parse_duration("--max-time", &args.max_time, false)?,
            warmup: parse_duration("--warmup", &args.warmup, true)?,
            pipe_size: args
                .pipe_size
                .as_deref()
                .map(config::parse_pipe_size)
                .transpose()?,
            pinning: parse_pinning(pin, cpus)?,
            cpus: cpus.to_vec(),
            udp_split: args.udp_split,
            skipped,
            skip_reasons,
            processes: args.processes,
            network,
            remote,
        })
    }

    /// Every (measure, size, transport), transports interleaved within each size.
    pub fn points(&self) -> Vec<(Measure, usize, Transport)> {
        let mut out = Vec::new();
        for &m in &self.measures {
            for &size in &self.sizes {
                out.extend(
                    self.transports
                        .iter()
                        .filter(|&&t| !self.skipped.contains(&(t, size)))
                        .map(|&t| (m, size, t)),
                );
            }
        }
        out
    }

    pub fn run_spec(&self, measure: Measure, size: usize, transport: Transport) -> RunSpec {
        let (pattern, count, counters) = match measure {
            Measure::Latency => (Pattern::Rr, self.trials, CounterSelection::None),
            Measure::Bandwidth => (
                Pattern::Stream,
                self.bytes.div_ceil(size as u64),
                CounterSelection::All,
            ),
        };
        RunSpec {
            transport,
            pipe_size: self
                .pipe_size
                .filter(|_| matches!(transport, Transport::Pipe | Transport::Shm)),
            mechanism: MechanismKind::Send,
            pattern,
            message_size: size,
            threads: 1,
            duration: self.max_time,
            stopping: Stopping {
                messages_per_flow: Some(count),
                ..Stopping::fixed(self.max_time)
            },
            warmup: self.warmup,
            pinning: self.pinning.clone(),
            cpus: self.cpus.clone(),
            recv_size: None,
            spin: false,
            verify: false,
            counters,
            udp_split: self.udp_split,
            processes: self.processes,
            network: self.network.clone(),
            queue_depth: crate::config::DEFAULT_QUEUE_DEPTH,
            recv_path: Default::default(),
        }
    }
}

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
        match Sides::carries(network, remote, t) {
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

pub fn command(args: &IpcArgs, interrupt: &AtomicBool) -> Result<Status, Error> {
    let cpus = sys::affinity::allowed_cpus()
        .map_err(|e| Error::Failed(format!("reading this process's CPU affinity: {e}")))?;
    let spec = IpcSpec::from_args(args, &cpus)?;
    let points = spec.points();
    let marker = folder::marker(
        IPC_KIND,
        serde_json::json!({}),
        serde_json::json!(args_json(args)),
        points.len(),
        "per measure and size, every transport in list order",
    );
    // Set up once for every point, before the folder is made, so an unreachable server is one
    // error and no empty folder; dropped (namespaces deleted) when the command returns.
    let sides = Sides::open(&spec.network, spec.remote.as_ref())?;
    let (mut results, _) = folder::open(args.out.as_deref(), false, &marker)?;
    let env = Environment::detect(&cpus);
    if let Some(place) = sides.announce() {
        println!("ipc: sides {place}");
    }
    for reason in &spec.skip_reasons {
        println!("ipc: {reason}");
    }
    println!(
        "ipc: {} points, pin {}, results in {}",
        points.len(),
        spec.pinning.name(),
        results.dir.display()
    );
    let mut status = Status::Success;
    for (index, &(measure, size, transport)) in points.iter().enumerate() {
        if interrupt.load(Ordering::SeqCst) {
            status = Status::Interrupted;
            break;
        }
        let run = sides.place(spec.run_spec(measure, size, transport));
        let outcome = sides
            .run(&run, interrupt)
            .unwrap_or_else(|e| RunOutcome::not_run(&run, e.to_string()));
        let mut record = record::build(&run, &outcome, env.clone());
        record.command = "ipc".into();
        record.sweep_point = Some(SweepPoint {
            index,
            total: points.len(),
            key: record::point_key(&serde_json::to_value(&record.config).expect("JSON")),
        });
        println!("{}", line(measure, &record));
        results.append(&Saved::from_value(
            serde_json::to_value(&record).expect("the record serializes"),
        ))?;
        match record.status_for_exit() {
            Status::Interrupted => {
                status = Status::Interrupted;
                break;
            }
            Status::Failed => status = Status::Failed,
            Status::Success => {}
        }
    }
    match report::write_reports(&results.dir, None) {
        Ok(html) => println!("report: {}", html.display()),
        Err(e) => eprintln!(
            "bytepath: the report could not be written ({e}); the results are kept in {}",
            results.dir.display()
        ),
    }
    Ok(status)
}

/// One line per point: latency as min/p50/p99/mean round trip with the one-way estimate, or
/// bandwidth received whole.
fn line(measure: Measure, r: &RunRecord) -> String {
    let figures = figures(measure, r);
    match &r.datagrams {
        Some(d) if r.errors.is_empty() => format!("{figures}; {}", d.brief()),
        _ => figures,
    }
}

fn figures(measure: Measure, r: &RunRecord) -> String {
    let c = &r.config;
    let head = format!(
        "{:<10} {:>8} B {:<9}",
        c.transport,
        c.message_size_bytes,
        format!("{measure:?}").to_lowercase()
    );
    if !r.errors.is_empty() {
        return format!("{head} failed: {}", r.errors.join("; "));
    }
    let cut = if r.statistics.stop_reason == engine::phases::StopReason::MaxTime.name() {
        " (cut at --max-time)"
    } else {
        ""
    };
    match measure {
        Measure::Latency => match &r.sides[0].latency_ns {
            Some(l) => format!(
                "{head} round trip min {:.2} p50 {:.2} p99 {:.2} mean {:.2} µs; one way ≈ {:.2} µs (RTT/2, an estimate); {} trials{cut}",
                l.min as f64 / 1e3, l.p50 as f64 / 1e3, l.p99 as f64 / 1e3, l.mean / 1e3, l.p50 as f64 / 2e3, r.sides[0].messages
            ),
            None => format!("{head} no round trip completed"),
        },
        Measure::Bandwidth => format!(
            "{head} {:.3} Gbit/s received whole ({} B in {:.3} s){cut}",
            r.sides[1].throughput_gbps, r.sides[1].payload_bytes, r.sides[1].elapsed_s
        ),
    }
}

fn args_json(args: &IpcArgs) -> serde_json::Value {
    serde_json::json!({
        "transports": args.transports, "sizes": args.sizes, "measure": args.measure,
        "trials": args.trials, "bytes": args.bytes, "max_time": args.max_time,
        "warmup": args.warmup, "pipe_size": args.pipe_size, "pin": args.pin,
        "udp_split": args.udp_split,
        "processes": args.processes,
        "netns": args.network.netns, "mtu": args.network.mtu, "netem": args.network.netem,
        "remote": args.remote.remote,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn spec(extra: &[&str]) -> Result<IpcSpec, ConfigError> {
        let cli = crate::cli::Cli::parse_from([&["bytepath", "ipc"][..], extra].concat());
        match cli.command {
            crate::cli::Command::Ipc(args) => IpcSpec::from_args(&args, &[0, 1]),
            _ => unreachable!("parsed an ipc command"),
        }
    }

    #[test]
    fn every_measure_size_and_transport_is_one_point() {
        let s = spec(&["--transports", "pipe,shm", "--sizes", "4,1K,64K"]).unwrap();
        let points = s.points();
        assert_eq!(points.len(), 2 * 3 * 2);
        assert_eq!(points[0], (Measure::Latency, 4, Transport::Pipe));
        assert_eq!(
            points[1],
            (Measure::Latency, 4, Transport::Shm),
            "transports interleave"
        );
    }

    #[test]
    fn latency_counts_round_trips_and_bandwidth_counts_whole_writes() {
        let s = spec(&["--trials", "500", "--bytes", "1M", "--sizes", "3000"]).unwrap();
        let lat = s.run_spec(Measure::Latency, 3000, Transport::Unix);
        assert_eq!(
            (lat.pattern, lat.stopping.messages_per_flow),
            (Pattern::Rr, Some(500))
        );
        let bw = s.run_spec(Measure::Bandwidth, 3000, Transport::Unix);
        assert_eq!(bw.pattern, Pattern::Stream);
        assert_eq!(
            bw.stopping.messages_per_flow,
            Some((1u64 << 20).div_ceil(3000))
        );
        assert_eq!(s.pinning, Pinning::Cross, "cross by default on two CPUs");
    }

    #[test]
    fn the_pipe_size_goes_only_to_pipes_and_rings() {
        let s = spec(&["--pipe-size", "256K"]).unwrap();
        assert_eq!(
            s.run_spec(Measure::Latency, 64, Transport::Pipe).pipe_size,
            Some(256 << 10)
        );
        assert_eq!(
            s.run_spec(Measure::Latency, 64, Transport::Tcp).pipe_size,
            None
        );
    }
}
