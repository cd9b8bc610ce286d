//! Deterministic synthetic point records in the shape a sweep writes them (a run record with
//! the sweep's `sweep_point` and a `statistics` block from visits), for the report's tests and
//! demos. Every point is visited in the same rounds; each round carries a machine regime that
//! every point shares (which sets a point's own interval, `ci_rel`) and a small noise of each
//! mechanism's own (`pair_noise`, which sets how tight a paired comparison is), as on a real
//! machine whose throughput moves for seconds at a time.
use crate::measure::counters::CounterEvent;
use crate::mechanism::MechanismKind;
use crate::record::{Metric, MetricSet};
use crate::stats::visits::{summarize_visits, VISIT_METHOD};
use serde_json::{json, Value};

/// What a synthetic point looks like; the record is derived from it.
#[derive(Debug, Clone)]
pub struct Shape {
    pub mechanism: &'static str,
    pub pattern: &'static str,
    pub size: u64,
    pub threads: u64,
    /// Receiver Gbit/s (stream) or client round trips/s (rr): the statistics metric's mean.
    pub mean: f64,
    /// Relative 95 % CI half-width of the statistics summary (from the shared regimes).
    pub ci_rel: f64,
    /// Each visit's own relative noise, not shared with other points of its round.
    pub pair_noise: f64,
    pub statistics: bool,
    pub pmu: bool,
    pub sender_cpu_ns_per_byte: f64,
    pub l1d_per_kib: f64,
    pub llc_per_kib: f64,
    pub p50_ns: f64,
    /// Fraction of zero-copy completions the kernel copied (zerocopy only).
    pub copied_fraction: f64,
    pub status: &'static str,
    /// Where the point ran: tcp over loopback (`None`), or udp over loopback or on a sink
    /// (`Some(false)`, `Some(true)`): a sink's record has the sender's side alone.
    pub udp_sink: Option<bool>,
}

impl Shape {
    pub fn stream(mechanism: &'static str, size: u64, threads: u64, gbps: f64) -> Shape {
        let (cpu, l1d, llc) = match mechanism {
            "send" => (0.30, 20.0, 2.0),
            "copy" => (0.45, 40.0, 8.0),
            "gather" => (0.35, 30.0, 3.0),
            _ => (0.40, 30.0, 2.5),
        };
        Shape {
            mechanism,
            pattern: "stream",
            size,
            threads,
            mean: gbps,
            ci_rel: 0.02,
            pair_noise: 0.005,
            statistics: true,
            pmu: false,
            sender_cpu_ns_per_byte: cpu,
            l1d_per_kib: l1d,
            llc_per_kib: llc,
            p50_ns: 1000.0 + size as f64 / 4.0,
            copied_fraction: 1.0,
            status: "completed",
            udp_sink: None,
        }
    }

    /// A udp stream point on a sink (`on_sink`) or over loopback beside it.
    pub fn udp(mechanism: &'static str, size: u64, gbps: f64, on_sink: bool) -> Shape {
        Shape {
            udp_sink: Some(on_sink),
            copied_fraction: if on_sink { 0.0 } else { 1.0 },
            ..Shape::stream(mechanism, size, 1, gbps)
        }
    }

    pub fn rr(mechanism: &'static str, size: u64, threads: u64, round_trips_per_s: f64) -> Shape {
        Shape {
            pattern: "rr",
            mean: round_trips_per_s,
            p50_ns: 1e9 / round_trips_per_s * threads as f64,
            ..Shape::stream(mechanism, size, threads, 0.0)
        }
    }
}

/// The machine's regime in each of the five rounds (shared by every point of a round).
const REGIMES: [f64; 5] = [-1.0, 1.0, -0.5, 0.5, 0.0];
/// t(4) · sd(REGIMES) / sqrt(5): the relative CI half-width per unit of regime amplitude.
const CI_PER_AMPLITUDE: f64 = 0.981_464;

/// Each mechanism's own noise over the five rounds, one pattern per mechanism name.
fn own_noise(mechanism: &str) -> [f64; 5] {
    const PATTERNS: [[f64; 5]; 4] = [
        [1.0, -1.0, 0.5, -0.5, 0.0],
        [-0.5, 0.5, 1.0, 0.0, -1.0],
        [0.0, 1.0, -1.0, -0.5, 0.5],
        [0.5, 0.0, -0.5, 1.0, -1.0],
    ];
    let hash = mechanism.bytes().fold(0usize, |h, b| h * 31 + b as usize);
    PATTERNS[hash % PATTERNS.len()]
}

/// The five visit means of a point: its mean in each round's regime, with its own noise.
pub fn visit_values(shape: &Shape) -> Vec<f64> {
    let amplitude = shape.ci_rel / CI_PER_AMPLITUDE;
    let noise = own_noise(shape.mechanism);
    REGIMES
        .iter()
        .zip(noise)
        .map(|(r, n)| shape.mean * (1.0 + amplitude * r) * (1.0 + shape.pair_noise * n))
        .collect()
}

/// The five visits' sending-side CPU-ns per byte: the point's figure, moved by each round's
/// regime (a busier machine costs every point more CPU) and the mechanism's own noise.
pub fn visit_sender_cpu(shape: &Shape) -> Vec<f64> {
    let amplitude = shape.ci_rel / CI_PER_AMPLITUDE;
    REGIMES
        .iter()
        .zip(own_noise(shape.mechanism))
        .map(|(r, n)| {
            shape.sender_cpu_ns_per_byte * (1.0 - amplitude * r) * (1.0 + shape.pair_noise * n)
        })
        .collect()
}

fn statistics(shape: &Shape) -> Value {
    let values = visit_values(shape);
    let summary = summarize_visits(&values);
    let rr = shape.pattern == "rr";
    let met = shape.ci_rel <= 0.05;
    json!({
        "basis": "visits", "method": VISIT_METHOD,
        "metric": if rr { "round_trips_per_s" } else { "throughput_gbps" },
        "side": if rr { "client" } else { "receiver" },
        "slice_s": 0.1, "slices": 15, "values": values, "summary": summary,
        "ci_target_rel": 0.05, "ci_target_met": met,
        "stop_reason": if met { "ci_target_met" } else { "budget_spent" },
        "outliers": {"low_severe": 0, "low_mild": 0, "high_mild": 0, "high_severe": 0},
        "counters_open": false,
        "visits": {"count": 5, "min_visits": 3, "visit_s": 0.3, "warmup_s": 0.1,
                   "rounds": [0, 1, 2, 3, 4],
                   "between_visit_cv": summary.map(|s| s.stddev / s.mean),
                   "within_visit_cv": 0.01, "counters_round": 3, "seed": 1,
                   "sender_cpu_ns_per_byte": visit_sender_cpu(shape)},
    })
}

/// Sets `key` in `set`, in place where it is there already.
fn set(set: &mut MetricSet, key: &str, metric: Metric) {
    match set.0.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = metric,
        None => set.0.push((key.to_string(), metric)),
    }
}

/// A side's counters and their derivations, as the record writes them (`MetricSet`).
fn counters(shape: &Shape, bytes: f64, cpu_ns: f64) -> (Value, Value) {
    let hardware: Vec<&str> = CounterEvent::ALL
        .iter()
        .filter(|e| e.is_hardware())
        .map(|e| e.key())
        .collect();
    let kib = bytes / 1024.0;
    let mut counters = MetricSet::default();
    set(&mut counters, "task_clock_ns", Metric::Value(cpu_ns));
    set(&mut counters, "context_switches", Metric::Value(100.0));
    let mut derived = MetricSet::default();
    if shape.pmu {
        let cycles = cpu_ns * 3.0;
        let values = [cycles, cycles * 1.5, kib * 100.0, kib * 10.0];
        for (key, v) in hardware.iter().zip(values) {
            set(&mut counters, key, Metric::Value(v));
        }
        let l1d = shape.l1d_per_kib * kib / 2.0;
        set(&mut counters, "l1d_load_misses", Metric::Value(l1d));
        let llc = shape.llc_per_kib * kib / 2.0;
        set(&mut counters, "llc_load_misses", Metric::Value(llc));
        set(
            &mut derived,
            "cycles_per_byte",
            Metric::Value(cycles / bytes),
        );
        set(&mut derived, "instructions_per_cycle", Metric::Value(1.5));
        let llc_per_kib = shape.llc_per_kib / 2.0;
        set(
            &mut derived,
            "llc_misses_per_kib",
            Metric::Value(llc_per_kib),
        );
    } else {
        let no_pmu = || Metric::Unavailable("no PMU".into());
        for key in hardware {
            set(&mut counters, key, no_pmu());
        }
        for key in [
            "cycles_per_byte",
            "instructions_per_cycle",
            "llc_misses_per_kib",
        ] {
            set(&mut derived, key, no_pmu());
        }
    }
    let value = |set: &MetricSet| serde_json::to_value(set).expect("metrics serialize");
    (value(&counters), value(&derived))
}

fn side(shape: &Shape, name: &str, cpu_ns_per_byte: f64) -> Value {
    let gbps = if shape.pattern == "rr" {
        shape.mean * shape.size as f64 * 8.0 / 1e9
    } else {
        shape.mean
    };
    let bytes = (gbps * 1e9 / 8.0).round();
    let messages_per_s = bytes / shape.size as f64;
    let cpu_ns = cpu_ns_per_byte * bytes;
    let (counters, derived) = counters(shape, bytes, cpu_ns);
    let p50 = shape.p50_ns;
    json!({
        "side": name, "threads": shape.threads, "messages": messages_per_s.round(),
        "payload_bytes": bytes, "elapsed_s": 1.0, "throughput_gbps": gbps,
        "messages_per_s": messages_per_s,
        "latency_ns": {"count": 1000, "min": p50 * 0.8, "p50": p50, "p90": p50 * 1.5,
                       "p99": p50 * 3.0, "p99_9": p50 * 6.0, "max": p50 * 20.0, "mean": p50 * 1.2},
        "cpu_user_s": cpu_ns * 0.1 / 1e9, "cpu_sys_s": cpu_ns * 0.9 / 1e9,
        "cpu_ns_per_byte": cpu_ns_per_byte,
        "voluntary_context_switches": (bytes / 65536.0).round(),
        "involuntary_context_switches": 50,
        "counters": counters, "derived": derived,
    })
}

/// One record for `shape`, in the current schema.
pub fn record(shape: &Shape) -> Value {
    record_at(shape, 0, 1)
}

/// The record of `shape` as point `index` of `total` in its sweep.
fn record_at(shape: &Shape, index: usize, total: usize) -> Value {
    let names = if shape.pattern == "rr" {
        ["client", "server"]
    } else {
        ["sender", "receiver"]
    };
    let key = format!(
        "{}/{}/{}/{}{}",
        shape.mechanism,
        shape.pattern,
        shape.size,
        shape.threads,
        if shape.udp_sink == Some(false) {
            "/loopback"
        } else {
            ""
        }
    );
    let zero_copy = MechanismKind::by_name(shape.mechanism).is_some_and(|m| m.zero_copy.is_some());
    let zerocopy = zero_copy.then(|| {
        let calls = 10_000.0;
        let copied = (calls * shape.copied_fraction).round();
        json!({"send_calls": calls, "completions": calls, "copied": copied,
               "copied_anyway_percent": copied / calls * 100.0, "pool_messages": 66,
               "summary": "synthetic"})
    });
    let mut r = json!({
        "schema_version": crate::record::SCHEMA_VERSION, "bytepath_version": "0.1.0",
        "command": "sweep",
        "sweep_point": {"index": index, "total": total, "key": key},
        "status": shape.status, "interrupted": shape.status == "interrupted", "errors": [],
        "config": config(shape),
        "environment": {"hostname": "synthetic", "kernel_release": "6.1.0-synthetic",
            "cpu_model": "Synthetic CPU @ 3.0GHz", "online_cpus": 2, "allowed_cpus": "0-1",
            "pmu_available": shape.pmu, "perf_event_paranoid": 2, "running_as_root": false,
            "optmem_max_bytes": 131072, "tcp_wmem_max_bytes": 4194304, "loopback_mtu": 65536,
            "clock": "CLOCK_MONOTONIC via vDSO, read once per round trip (rr client) or per batch of up to 64 messages, 256 KiB at most (stream sides, rr server)"},
        "measured_s": 1.0,
        "sides": sides(shape, names),
        "zerocopy": zerocopy, "machine_wide_cpu": null, "notes": [],
    });
    if let (true, Value::Object(fields)) = (shape.statistics, &mut r) {
        fields.insert("statistics".into(), statistics(shape));
    }
    r
}

/// The record's `config`: tcp, or udp (`udp_sink`), on a sink with its placement.
fn config(shape: &Shape) -> Value {
    let placement: Vec<Value> = (0..shape.threads)
        .map(|_| json!({"sender_cpu": 0, "receiver_cpu": 1}))
        .collect();
    let transport = if shape.udp_sink.is_some() {
        "udp"
    } else {
        "tcp"
    };
    let mut config = json!({"transport": transport, "mechanism": shape.mechanism,
        "pattern": shape.pattern,
        "message_size_bytes": shape.size, "field_size_bytes": shape.size / 8, "fields": 8,
        "threads": shape.threads, "duration_s": 0.3, "warmup_s": 0.1, "pin": "cross",
        "placement": placement, "recv_size_bytes": shape.size,
        "recv_mode": "whole message: recv until the message is complete", "spin": false,
        "verify": false, "counters": "none",
        "tcp_nodelay": shape.pattern == "rr",
        "where_sides_run": "loopback (127.0.0.1), both sides in one process"});
    if let (Some(true), Value::Object(fields)) = (shape.udp_sink, &mut config) {
        fields.insert("network".into(), json!({"placement": "sink", "mtu": 65535}));
    }
    config
}

/// Both sides, or on a sink the sender alone.
fn sides(shape: &Shape, names: [&str; 2]) -> Value {
    let sender = side(shape, names[0], shape.sender_cpu_ns_per_byte);
    match shape.udp_sink {
        Some(true) => json!([sender]),
        _ => json!([sender, side(shape, names[1], 0.3)]),
    }
}

/// A point's own noise over `rounds` rounds, each in [-1, 1], drawn from `seed` (splitmix64):
/// the shared five-round fixture gives every point of one mechanism the same pattern, so a
/// pair of such points has a ratio that never varies (no standard error, no verdict) and no
/// more than five rounds (too few for "equivalent"); tests that need either draw their own.
pub fn seeded_noise(seed: u64, rounds: usize) -> Vec<f64> {
    let mut state = seed;
    (0..rounds)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// `record`'s visits replaced by `values`, one a round from round 0, with their summary and
/// each visit's sending-side CPU (`sender_cpu`, as long as `values`).
pub fn set_visits(record: &mut Value, values: &[f64], sender_cpu: &[f64]) {
    let summary = summarize_visits(values);
    let visits = json!({
        "statistics": {
            "values": values,
            "summary": summary,
            "visits": {
                "count": values.len(),
                "rounds": (0..values.len()).collect::<Vec<_>>(),
                "between_visit_cv": summary.map(|s| s.stddev / s.mean),
                "sender_cpu_ns_per_byte": sender_cpu,
            },
        },
    });
    merge(record, visits);
}

/// `patch`'s fields written over `into`'s, object by object (a record is written, not read,
/// here: the typed reader is `record::view`).
fn merge(into: &mut Value, patch: Value) {
    match (into, patch) {
        (Value::Object(fields), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(fields.entry(key).or_insert(Value::Null), value);
            }
        }
        (slot, value) => *slot = value,
    }
}

/// `record` visited in `rounds` rounds with noise of the point's own (`shape.pair_noise`,
/// drawn from `seed`) on its headline and on its sender CPU, and no shared regime: two such
/// points with different seeds have a ratio that varies round to round. The draws are centred
/// so that the visits' mean stays the shape's figure.
fn own_visits(record: &mut Value, shape: &Shape, rounds: usize, seed: u64) {
    let noise = seeded_noise(seed, 2 * rounds);
    let (headline, cpu) = noise.split_at(rounds);
    let moved = |base: f64, n: &[f64]| -> Vec<f64> {
        let centre = n.iter().sum::<f64>() / n.len() as f64;
        n.iter()
            .map(|n| base * (1.0 + shape.pair_noise * (n - centre)))
            .collect()
    };
    let values = moved(shape.mean, headline);
    set_visits(record, &values, &moved(shape.sender_cpu_ns_per_byte, cpu));
}

/// One record for `shape` visited in `rounds` rounds with noise of its own drawn from `seed`.
pub fn record_own(shape: &Shape, rounds: usize, seed: u64) -> Value {
    let mut r = record(shape);
    own_visits(&mut r, shape, rounds, seed);
    r
}

/// `jsonl` with every point visited in `rounds` rounds with noise of its own, seeded by its
/// position: a pair's ratio varies round to round, and `rounds` can reach "equivalent"'s 8.
pub fn jsonl_own(shapes: &[Shape], rounds: usize) -> String {
    let mut out = String::new();
    for (i, shape) in shapes.iter().enumerate() {
        let mut r = record_at(shape, i, shapes.len());
        own_visits(&mut r, shape, rounds, i as u64 + 1);
        out.push_str(&r.to_string());
        out.push('\n');
    }
    out
}

/// Records as results.jsonl text, one per line, with their sweep positions filled in.
pub fn jsonl(shapes: &[Shape]) -> String {
    let mut out = String::new();
    for (i, shape) in shapes.iter().enumerate() {
        out.push_str(&record_at(shape, i, shapes.len()).to_string());
        out.push('\n');
    }
    out
}

/// A plausible loopback sweep: four mechanisms, 64 B to 1 MiB, 1 and 2 threads, and round
/// trips at 1, 2 and 4 threads; gather overtakes copy from 16 KiB, zerocopy never does.
pub fn demo_sweep(pmu: bool) -> Vec<Shape> {
    let peaks = [
        ("send", 40.0),
        ("copy", 26.0),
        ("gather", 34.0),
        ("zerocopy", 24.0),
    ];
    let mut shapes = Vec::new();
    for threads in [1, 2] {
        for (mechanism, peak) in peaks {
            for size in (6..=20).step_by(2).map(|p| 1u64 << p) {
                let half = if mechanism == "zerocopy" {
                    16384.0
                } else {
                    4096.0
                };
                let scale = if threads == 2 { 1.6 } else { 1.0 };
                let gbps = peak * scale * size as f64 / (size as f64 + half);
                let copy_like = if mechanism == "gather" && size < 16384 {
                    26.0 * scale * size as f64 / (size as f64 + 4096.0)
                } else {
                    gbps
                };
                let mut shape = Shape::stream(mechanism, size, threads, copy_like);
                shape.pmu = pmu;
                // Per-message overhead spread over fewer bytes; small messages are noisier.
                shape.sender_cpu_ns_per_byte += 60.0 / size as f64;
                if size <= 256 {
                    shape.ci_rel = 0.07;
                }
                if mechanism == "copy" && size == 65536 && threads == 1 {
                    shape.mean *= 0.6; // a dip for the "surprising point" answer
                }
                shapes.push(shape);
            }
        }
    }
    for threads in [1, 2, 4] {
        for mechanism in ["copy", "gather"] {
            for size in [64, 4096] {
                let faster = if mechanism == "gather" { 1.08 } else { 1.0 };
                let rate =
                    faster * 60_000.0 * threads.min(2) as f64 / (1.0 + size as f64 / 65536.0);
                shapes.push(Shape::rr(mechanism, size, threads, rate));
            }
        }
    }
    shapes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_have_the_requested_relative_ci() {
        let mut shape = Shape::stream("copy", 4096, 1, 10.0);
        shape.ci_rel = 0.03;
        shape.pair_noise = 0.0;
        let s = summarize_visits(&visit_values(&shape)).unwrap();
        assert!((s.ci95_rel - 0.03).abs() < 1e-4, "{}", s.ci95_rel);
    }

    #[test]
    fn two_points_of_a_round_share_its_regime_and_differ_by_their_own_noise() {
        let (a, b) = (
            Shape::stream("copy", 4096, 1, 10.0),
            Shape::stream("gather", 4096, 1, 12.0),
        );
        let pairs: Vec<(f64, f64)> = visit_values(&b).into_iter().zip(visit_values(&a)).collect();
        let r = crate::stats::visits::paired_ratio(&pairs).unwrap();
        assert!((r.ratio - 1.2).abs() < 0.01, "{r:?}");
        assert!(r.high / r.low < 1.03, "tight: {r:?}");
    }

    #[test]
    fn points_with_their_own_seeds_have_a_ratio_that_varies_over_the_rounds_asked() {
        let noise = seeded_noise(7, 8);
        assert_eq!(noise, seeded_noise(7, 8), "a seed gives the same draws");
        assert_ne!(noise, seeded_noise(8, 8), "another seed, other draws");
        assert!(noise.iter().all(|n| (-1.0..=1.0).contains(n)), "{noise:?}");
        let shape = Shape::stream("copy", 4096, 1, 10.0);
        let visits = |seed| {
            let r = record_own(&shape, 8, seed);
            assert_eq!(
                r["statistics"]["visits"]["rounds"],
                json!([0, 1, 2, 3, 4, 5, 6, 7])
            );
            let values: Vec<f64> =
                serde_json::from_value(r["statistics"]["values"].clone()).unwrap();
            let mean = r["statistics"]["summary"]["mean"].as_f64().unwrap();
            assert!((mean - 10.0).abs() < 1e-9, "centred: {mean}");
            values
        };
        let (a, b) = (visits(1), visits(2));
        let ratios: Vec<f64> = a.iter().zip(&b).map(|(a, b)| a / b).collect();
        assert_eq!(ratios.len(), 8);
        assert!(
            ratios.iter().any(|r| (r - ratios[0]).abs() > 1e-6),
            "{ratios:?}"
        );
        let pairs: Vec<(f64, f64)> = a.into_iter().zip(b).collect();
        let r = crate::stats::visits::paired_ratio(&pairs).unwrap();
        assert!(r.high > r.low, "a standard error above zero: {r:?}");
    }

    #[test]
    fn jsonl_writes_one_parsable_record_per_line() {
        let text = jsonl(&demo_sweep(false));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), demo_sweep(false).len());
        for line in lines {
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["schema_version"], crate::record::SCHEMA_VERSION);
        }
    }
}
