//! `bytepath ipc`: the seeds' IPC study on the run engine (no second engine). Latency is a
//! ping-pong of `--trials` round trips (rr); bandwidth moves `--bytes` in writes of each size
//! (stream, timed on the receiving side, so the time covers delivery, not buffering). Every
//! point is a run record, written to a results folder as it finishes.
use crate::engine::{self, PointRunner, RunOutcome};
use crate::environment::Environment;
use crate::error::{Error, Status};
use crate::measure::counters::CounterSelection;
use crate::mechanism::MechanismKind;
use crate::record::{self, RunRecord, SweepPoint};
use crate::report;
use crate::report::folder::{self, Saved, StudyOutput};
use crate::spec::{self, Network, Pattern, Pinning, RunSpec, Stopping};
use crate::transport::Transport;
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
    pub remote: Option<spec::RemoteRun>,
}

impl IpcSpec {
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
            queue_depth: crate::spec::DEFAULT_QUEUE_DEPTH,
            recv_path: Default::default(),
            profile: false,
        }
    }
}

/// Measures every point of `spec` through `sides` into a new results folder, one run record
/// per point, and renders the report.
pub fn run(
    spec: &IpcSpec,
    output: &StudyOutput,
    sides: &dyn PointRunner,
    interrupt: &AtomicBool,
) -> Result<Status, Error> {
    let points = spec.points();
    let marker = folder::marker(
        IPC_KIND,
        serde_json::json!({}),
        output.arguments.clone(),
        points.len(),
        "per measure and size, every transport in list order",
    );
    let (mut results, _) = folder::open(output.out.as_deref(), false, &marker)?;
    results.stream_to(output, "ipc", &marker, folder::StreamAs::Points);
    let env = Environment::detect(&spec.cpus);
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
