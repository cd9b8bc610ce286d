//! A run record from a run's spec and outcome: the effective configuration, every side's
//! metrics (counters, derived per-byte and per-message figures, latency), the errors found,
//! the transfer totals, verification and the notes a reader needs.
use super::blocks::{datagram_report, page_refs_report, zerocopy_report, ZerocopyReport};
use super::{
    receive, side_names, Metric, MetricSet, ReceiveReport, RunConfig, RunRecord, SideMetrics,
    TransferTotals, VerifyReport, SCHEMA_VERSION,
};
use crate::config::{Pattern, RunSpec};
use crate::engine::worker::{Role, ThreadSample};
use crate::engine::RunOutcome;
use crate::environment::Environment;
use crate::measure::counters::{CounterEvent, CounterSample, CounterValue, Scope};
use crate::measure::histogram::LatencyHistogram;
use crate::mechanism::receive::KEPT_MISMATCHES;
use crate::sys::usage::ThreadUsage;
use crate::transport::Transport;

pub fn build(spec: &RunSpec, outcome: &RunOutcome, env: Environment) -> RunRecord {
    let sides = direction(spec, outcome, false);
    let mut errors = run_errors(spec, outcome);
    let skipped = outcome.skipped.is_some();
    if errors.is_empty() && !outcome.interrupted && !skipped {
        errors.extend(nothing_measured(spec, &sides));
    }
    let mut transfer = transfer_totals(outcome, errors.is_empty());
    // trunc: the kernel counted the bytes and discarded them; none reached the process.
    transfer.all_delivered &= spec.recv_path.delivers_data();
    let zerocopy = zerocopy_report(spec.mechanism, outcome);
    let sink = super::sink::report(spec, outcome, sides[0].payload_bytes);
    let crr = super::crr::report(outcome, &sides, spec.transport == Transport::Tcp);
    let bidir = spec.bidir.then(|| {
        let reverse = direction(spec, outcome, true);
        super::bidir::report(outcome, &sides, reverse, errors.is_empty())
    });
    let receive = receive::report(spec, outcome);
    let mut record = RunRecord {
        schema_version: SCHEMA_VERSION,
        sweep_point: None,
        under_load_visit: None,
        visit: None,
        bytepath_version: env!("CARGO_PKG_VERSION").into(),
        command: "run".into(),
        src: None,
        dst: None,
        timestamp_unix_s: now_unix_s(),
        status: run_status(&errors, skipped, outcome.interrupted).into(),
        interrupted: outcome.interrupted,
        errors,
        config: run_config(spec, outcome),
        notes: notes(spec, &env, zerocopy.as_ref(), receive.as_ref()),
        environment: env,
        measured_s: outcome.measured.as_secs_f64(),
        statistics: crate::stats::point::point_statistics(spec, &outcome.slices),
        sides,
        zerocopy,
        page_refs: page_refs_report(outcome),
        receive,
        // On a sink nothing receives, so there is no loss to count: the sink block says
        // where every datagram went.
        datagrams: datagram_report(spec, outcome).filter(|_| sink.is_none()),
        sink,
        verify: verify_report(spec, outcome),
        transfer,
        machine_wide_cpu: outcome.machine.clone().ok(),
        machine_wide_cpu_unavailable_reason: outcome.machine.clone().err().filter(|_| !skipped),
        skipped_reason: outcome.skipped.clone(),
        profiled_visit: None,
        counter_run: None,
        copies: None,
        crr,
        bidir,
        under_load: super::under_load::report(spec, outcome),
        tcp: super::tcp::block(spec, outcome, skipped),
    };
    super::sink::restate(&mut record, spec);
    record
}

fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The sides a run has: both, or on a sink the sender alone.
fn roles(spec: &RunSpec) -> &'static [Role] {
    match spec.network.is_sink() {
        true => &[Role::Sender],
        false => &[Role::Sender, Role::Receiver],
    }
}

/// Every side's metrics of one direction (`reverse`: a bidir run's second direction): both
/// sides, or on a sink the sender alone.
fn direction(spec: &RunSpec, outcome: &RunOutcome, reverse: bool) -> Vec<SideMetrics> {
    let names = side_names(spec.pattern);
    roles(spec)
        .iter()
        .map(|&role| {
            let of = |s: &&ThreadSample| s.role == role && s.reverse == reverse;
            let samples: Vec<&ThreadSample> = outcome.samples.iter().filter(of).collect();
            let (definition, missing) = latency_definition(spec, role);
            let mut side = side_metrics(names[role as usize], &samples, definition, missing);
            side.profile = super::profile::side_profile(outcome, role, side.cpu_ns_per_byte);
            side
        })
        .collect()
}

/// The error of a run whose measuring side completed no message: its figures measure nothing.
fn nothing_measured(spec: &RunSpec, sides: &[SideMetrics]) -> Option<String> {
    let measured = &sides[crate::engine::measured_side(spec) as usize];
    (measured.messages == 0).then(|| {
        format!(
            "no message completed on the {} side in the measured phase: its figures are not a measurement",
            measured.side
        )
    })
}

/// failed, skipped, interrupted or completed, in that precedence.
fn run_status(errors: &[String], skipped: bool, interrupted: bool) -> &'static str {
    if !errors.is_empty() {
        "failed"
    } else if skipped {
        "skipped"
    } else if interrupted {
        "interrupted"
    } else {
        "completed"
    }
}

fn run_config(spec: &RunSpec, outcome: &RunOutcome) -> RunConfig {
    let where_sides_run = outcome.placement.as_str();
    RunConfig {
        transport: spec.transport.name().into(),
        channel_buffer_bytes: matches!(
            spec.transport,
            crate::transport::Transport::Pipe | crate::transport::Transport::Shm
        )
        .then_some(outcome.send_buffer_bytes),
        mechanism: spec.mechanism,
        pattern: spec.pattern,
        message_size_bytes: spec.message_size,
        field_size_bytes: spec.message_size / crate::mechanism::message::FIELDS,
        fields: crate::mechanism::message::FIELDS,
        threads: spec.threads,
        duration_s: spec.duration.as_secs_f64(),
        messages_per_flow: spec.stopping.messages_per_flow,
        warmup_s: spec.warmup.as_secs_f64(),
        pin: spec.pinning.name(),
        placement: (0..spec.threads).map(|f| spec.placement(f)).collect(),
        recv_size_bytes: spec.recv_call_size(),
        recv_mode: match (spec.pattern, spec.recv_size) {
            (Pattern::Stream, Some(_)) => "chunks: every recv asks for recv_size_bytes",
            _ => "whole message: recv until the message is complete",
        }
        .into(),
        spin: spec.spin,
        verify: spec.verify,
        counters: spec.counters,
        tcp_nodelay: spec.socket_options().nodelay,
        queue_depth: spec.mechanism.uses_queue_depth.then_some(spec.queue_depth),
        gso_segment_bytes: spec.gso,
        recv: spec.recv_path,
        processes: spec.processes,
        where_sides_run: where_sides_run.to_string(),
        network: spec.network.clone(),
        socket_buffers: spec.socket_buffers,
        tcp_info: super::tcp::switch_of(spec).into(),
    }
}

fn latency_definition(spec: &RunSpec, role: Role) -> (&'static str, Option<&'static str>) {
    match (spec.pattern, role) {
        (Pattern::Stream, Role::Sender) => (
            "time per message handed to the kernel: the interval between timestamps, each \
             taken after a batch of up to 64 messages (256 KiB at most), divided evenly among \
             the batch's messages",
            None,
        ),
        (Pattern::Stream, Role::Receiver) => (
            "time to take in one whole message: the interval between timestamps at the \
             receiver, each taken after a batch of up to 64 whole messages (256 KiB at most), \
             divided evenly among the batch's messages",
            None,
        ),
        (Pattern::Rr, Role::Sender) => (
            "round trip: request handed to the kernel until the whole response is in",
            None,
        ),
        (Pattern::Rr, Role::Receiver) => ("none", Some("round trips are timed on the client")),
        (Pattern::Crr, Role::Sender) => (
            "transaction: from the previous transaction's end through socket, connect, request, \
             whole response, until close returned",
            None,
        ),
        (Pattern::Crr, Role::Receiver) => ("none", Some("transactions are timed on the client")),
    }
}

fn side_metrics(
    name: &'static str,
    samples: &[&ThreadSample],
    latency_definition: &'static str,
    latency_missing: Option<&str>,
) -> SideMetrics {
    let windows: Vec<_> = samples.iter().filter_map(|s| s.window.as_ref()).collect();
    let messages: u64 = windows.iter().map(|w| w.messages).sum();
    let bytes: u64 = windows.iter().map(|w| w.bytes).sum();
    // fold from +0.0: an empty f64 sum is -0.0
    let rate = |f: &dyn Fn(&crate::engine::window::WindowResult) -> f64| -> f64 {
        windows
            .iter()
            .filter(|w| !w.elapsed.is_zero())
            .map(|w| f(w) / w.elapsed.as_secs_f64())
            .fold(0.0, |a, b| a + b)
    };
    let (histogram, usage, counters) = merged(&windows);
    let cpu_s = usage.user.as_secs_f64() + usage.system.as_secs_f64();
    let latency_ns = if latency_missing.is_some() {
        None
    } else {
        histogram.summary()
    };
    let latency_reason = match (latency_missing, latency_ns) {
        (Some(r), _) => Some(r.to_string()),
        (None, None) => Some("no message completed in the measured phase".to_string()),
        _ => None,
    };
    let (counter_set, scope, multiplexed) = counter_metrics(counters.as_ref());
    SideMetrics {
        side: name.into(),
        threads: samples.len(),
        pid: samples.first().map(|s| s.pid),
        messages,
        payload_bytes: bytes,
        elapsed_s: windows
            .iter()
            .map(|w| w.elapsed.as_secs_f64())
            .fold(0.0, f64::max),
        throughput_gbps: rate(&|w| w.bytes as f64 * 8.0) / 1e9,
        messages_per_s: rate(&|w| w.messages as f64),
        latency_definition: latency_definition.into(),
        latency_ns,
        latency_ns_unavailable_reason: latency_reason,
        distribution: super::distribution::of_side(&histogram, latency_ns.is_some()),
        cpu_user_s: usage.user.as_secs_f64(),
        cpu_sys_s: usage.system.as_secs_f64(),
        cpu_ns_per_byte: (bytes > 0).then(|| cpu_s * 1e9 / bytes as f64),
        voluntary_context_switches: usage.voluntary_switches,
        involuntary_context_switches: usage.involuntary_switches,
        derived: derived_metrics(&counter_set, bytes),
        counters: counter_set,
        counter_scope: scope,
        counters_multiplexed: multiplexed,
        profile: None,
    }
}

/// The threads' windows merged: one latency histogram, their usage summed, their counters.
fn merged(
    windows: &[&crate::engine::window::WindowResult],
) -> (LatencyHistogram, ThreadUsage, Option<CounterSample>) {
    let mut histogram = LatencyHistogram::new();
    let mut usage = ThreadUsage::default();
    let mut counters: Option<CounterSample> = None;
    for w in windows {
        histogram.merge(&w.histogram);
        usage.add(&w.usage);
        counters = Some(match counters {
            Some(c) => c.merge(&w.counters),
            None => w.counters.clone(),
        });
    }
    (histogram, usage, counters)
}

fn counter_metrics(sample: Option<&CounterSample>) -> (MetricSet, Option<Scope>, bool) {
    let mut set = MetricSet::default();
    let mut scope = None;
    let mut multiplexed = false;
    for event in CounterEvent::ALL {
        let metric = match sample.map(|s| s.get(event)) {
            None => Metric::Unavailable("the measured phase never started".into()),
            Some(CounterValue::Unavailable(reason)) => Metric::Unavailable(reason.clone()),
            Some(CounterValue::Counted {
                value,
                scope: s,
                multiplexed: m,
            }) => {
                scope = Some(scope.map_or(*s, |old| if old == *s { old } else { Scope::UserOnly }));
                multiplexed |= *m;
                Metric::Value(*value)
            }
        };
        set.0.push((event.key().into(), metric));
    }
    (set, scope, multiplexed)
}

/// Per-byte and per-cycle figures, derived only from counters that were really counted.
fn derived_metrics(counters: &MetricSet, bytes: u64) -> MetricSet {
    let get = |key| {
        counters
            .get(key)
            .cloned()
            .unwrap_or(Metric::Unavailable("missing".into()))
    };
    let ratio = |num: Metric, den: Result<f64, String>, scale: f64| match (num, den) {
        (Metric::Unavailable(r), _) => Metric::Unavailable(r),
        (_, Err(r)) => Metric::Unavailable(r),
        (Metric::Value(n), Ok(d)) if d > 0.0 => Metric::Value(n * scale / d),
        (Metric::Value(_), Ok(_)) => Metric::Unavailable("denominator is zero".into()),
    };
    let bytes = if bytes > 0 {
        Ok(bytes as f64)
    } else {
        Err("no bytes measured".to_string())
    };
    let cycles = match get("cycles") {
        Metric::Value(v) => Ok(v),
        Metric::Unavailable(r) => Err(r),
    };
    MetricSet(vec![
        (
            "cycles_per_byte".into(),
            ratio(get("cycles"), bytes.clone(), 1.0),
        ),
        (
            "instructions_per_cycle".into(),
            ratio(get("instructions"), cycles, 1.0),
        ),
        (
            "llc_misses_per_kib".into(),
            ratio(get("llc_load_misses"), bytes, 1024.0),
        ),
    ])
}

fn run_errors(spec: &RunSpec, outcome: &RunOutcome) -> Vec<String> {
    let names = side_names(spec.pattern);
    let mut errors: Vec<String> = outcome
        .samples
        .iter()
        .filter_map(|s| {
            let e = s.error.as_ref()?;
            Some(format!("flow {} {}: {e}", s.flow, names[s.role as usize]))
        })
        .collect();
    if let Some(reason) = &outcome.not_run {
        errors.push(format!("the point did not run: {reason}"));
        return errors;
    }
    if outcome.skipped.is_some() {
        return errors;
    }
    let expected = roles(spec).len() * spec.threads;
    if outcome.samples.len() < expected {
        errors.push(format!(
            "{} worker threads panicked",
            expected - outcome.samples.len()
        ));
    }
    if outcome.watchdog_fired {
        errors.push(
            "a side did not finish within 10 s of the stop; its sockets were shut down".into(),
        );
    }
    errors.extend(super::under_load::errors(outcome));
    if let Some(z) = outcome
        .samples
        .iter()
        .filter_map(|s| s.zerocopy)
        .find(|z| z.bad_ranges > 0)
    {
        errors.push(format!(
            "{} zero-copy completion ranges were unknown or duplicated",
            z.bad_ranges
        ));
    }
    errors
}

fn transfer_totals(outcome: &RunOutcome, no_errors: bool) -> TransferTotals {
    let sum = |role: Role, f: fn(&ThreadSample) -> u64| -> u64 {
        outcome
            .samples
            .iter()
            .filter(|s| s.role == role)
            .map(f)
            .sum()
    };
    let mut t = TransferTotals {
        sender_sent_bytes: sum(Role::Sender, |s| s.sent_bytes),
        receiver_received_bytes: sum(Role::Receiver, |s| s.received_bytes),
        receiver_sent_bytes: sum(Role::Receiver, |s| s.sent_bytes),
        sender_received_bytes: sum(Role::Sender, |s| s.received_bytes),
        all_delivered: false,
    };
    t.all_delivered = no_errors
        && t.sender_sent_bytes == t.receiver_received_bytes
        && t.receiver_sent_bytes == t.sender_received_bytes;
    t
}

fn verify_report(spec: &RunSpec, outcome: &RunOutcome) -> VerifyReport {
    let mut report = VerifyReport {
        enabled: spec.verify,
        ..Default::default()
    };
    for v in outcome.samples.iter().filter_map(|s| s.verifier.as_ref()) {
        report.checked_bytes += v.checked_bytes;
        report.mismatched_bytes += v.wrong_bytes;
        for m in &v.first {
            if report.first_mismatches.len() < KEPT_MISMATCHES {
                report.first_mismatches.push(*m);
            }
        }
    }
    report
}

/// What a sink record's figures are, said in every one.
const SINK_NOTE: &str = "--sink: the sending side alone, its datagrams dropped past a veth pair in a peer namespace where nothing receives; its figures are what the kernel accepted from the sending threads (and, for zero copy, completed) and what handing bytes to a device cost them, with no receiver, no wire and no NIC DMA; the sink block says where every byte went";

pub(crate) fn notes(
    spec: &RunSpec,
    env: &Environment,
    zerocopy: Option<&ZerocopyReport>,
    receive: Option<&ReceiveReport>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if !env.pmu_available {
        notes.push(
            "hardware counters (cycles, instructions, cache and LLC misses) are unavailable: this \
             machine exposes no PMU; CPU cost is given as CPU-ns per byte from getrusage instead"
                .into(),
        );
    }
    if spec.pinning == crate::config::Pinning::Unpinned {
        notes.push("threads were not pinned: the scheduler placed them, and figures on a small VM can vary up to 2x between runs; use --pin cross or --pin same".into());
    }
    if spec.counters != crate::measure::counters::CounterSelection::None {
        notes.push(format!(
            "perf counters ({}) follow each thread across context switches, which adds about 2 µs \
             per switch on small VMs; --counters none gives the figures without that cost",
            spec.counters.name()
        ));
    } else if spec.pattern == Pattern::Rr {
        notes.push("perf counters are off for rr by default: they would add a perf context switch to every round trip (--counters all to count them); CPU time and context switches still come from getrusage".into());
    }
    if spec.verify {
        notes.push("--verify: the sender writes each message's pattern and the receiver checks every byte; both costs are inside the figures".into());
    }
    if spec.spin {
        notes.push("--spin: receiving sides busy-poll (MSG_DONTWAIT); this mode is not comparable with blocking runs".into());
    }
    if let Some(z) = zerocopy {
        notes.push(z.summary.clone());
    }
    if let Some(r) = receive {
        notes.push(r.summary.clone());
    }
    if spec.network.is_sink() {
        notes.push(SINK_NOTE.into());
    } else if spec.transport.is_datagram() {
        notes.push(format!(
            "{}: every datagram's first {} bytes carry its sequence number (inside the message size, as sockperf's header is); throughput counts only whole messages received, and loss is reported beside it",
            spec.transport.name(),
            crate::transport::datagram::SEQ_BYTES
        ));
    }
    notes.push("machine_wide_cpu covers every CPU over the measured phase, including softirq work that getrusage does not charge to a thread".into());
    notes
}
