//! The cost answer from synthetic latency records with a known line, spread and placement.
use super::*;
use crate::analysis::load::parse;
use crate::analysis::synthetic::{record, Shape};
use serde_json::{json, Value};

/// Each visit's relative noise over five rounds (sd ≈ 2.6 %).
const WOBBLE: [f64; 5] = [0.03, -0.03, 0.02, -0.02, 0.0];

/// A pipe latency point whose visits' round trips average `rtt_ns`, sides on `cpus`.
fn point(transport: &str, size: u64, rtt_ns: f64, cpus: Option<(u64, u64)>, noise: f64) -> Value {
    let mut r = record(&Shape::rr("send", size, 1, 1e9 / rtt_ns));
    r["command"] = "ipc".into();
    r["config"]["transport"] = transport.into();
    r["config"]["placement"] = match cpus {
        Some((a, b)) => json!([{"sender_cpu": a, "receiver_cpu": b}]),
        None => json!([{"sender_cpu": null, "receiver_cpu": null}]),
    };
    // Visits' round trips rtt·(1 + noise·w); their rates are what the record holds.
    let rates: Vec<f64> = WOBBLE
        .iter()
        .map(|w| 1e9 / (rtt_ns * (1.0 + noise * w / 0.03)))
        .collect();
    r["statistics"]["values"] = json!(rates);
    r["sweep_point"]["key"] = format!("latency/{transport}/{size}").into();
    r
}

fn data(records: &[Value], probe: Option<Value>) -> Dataset {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    let mut d = parse(&text, "results.jsonl").unwrap();
    d.probe = probe.map(|p| serde_json::from_value(p).unwrap());
    d
}

fn probe() -> Value {
    json!({
        "memcpy_roofline": {"points": [{"level": "dram", "bandwidth": {"best_gb_per_s": 10.0}}]},
        "syscalls": {"getpid": {"min_ns": 100.0}},
        "wakeups": {"same_cpu_wakeup_ns": 1500.0, "cross_cpu_wakeup_ns": 4000.0},
    })
}

fn answer(d: &Dataset) -> Answer {
    let rr = d.completed_with_pattern("rr");
    cost(d, &rr, |p| p.transport.clone().unwrap_or_default())
}

fn line(
    transport: &str,
    sizes: &[u64],
    rtt: impl Fn(f64) -> f64,
    cpus: Option<(u64, u64)>,
) -> Vec<Value> {
    sizes
        .iter()
        .map(|&s| point(transport, s, rtt(s as f64), cpus, 0.01))
        .collect()
}

#[test]
fn a_small_pipe_round_trip_across_two_cpus_is_mostly_two_wakeups_not_66_system_calls() {
    // Fixed 9,000 ns + 0.5 ns/B; getpid 100 ns, a cross-CPU wake-up 4,000 ns: 4 calls
    // (400 ns) and 2 wake-ups (8,000 ns) leave 600 ns. The old text read "fixed ≈ 90 calls".
    let d = data(
        &line(
            "pipe",
            &[64, 1024, 4096],
            |s| 9000.0 + 0.5 * s,
            Some((0, 1)),
        ),
        Some(probe()),
    );
    let a = answer(&d);
    let text = &a.details[0];
    assert!(text.starts_with("pipe: fixed 9.00 µs (95 % CI "), "{text}");
    assert!(text.contains("+ 0.500 ns per byte"), "{text}");
    assert!(
        text.contains("weighted over 3 sizes 64 B to 4 KiB"),
        "{text}"
    );
    assert!(
        text.contains(
            "fixed ≈ 4 system calls (4 × 100 ns = 400 ns) + 2 cross-CPU wake-ups (2 × 4.00 µs = 8.00 µs), 600 ns left"
        ),
        "{text}"
    );
    assert!(text.contains("per byte ≈ 5.0 memcpy's worth"), "{text}");
    assert_eq!(a.verdict.as_deref(), Some("pipe: mostly fixed cost"));
    assert!(
        a.rests_on.contains("weighted least squares"),
        "{}",
        a.rests_on
    );
}

#[test]
fn sides_on_one_cpu_are_put_in_wakeups_on_one_cpu_and_unpinned_sides_in_calls_alone() {
    let rtt = |s: f64| 3500.0 + 0.5 * s;
    let same = data(
        &line("unix", &[64, 1024, 4096], rtt, Some((0, 0))),
        Some(probe()),
    );
    let text = &answer(&same).details[0];
    assert!(
        text.contains("+ 2 wake-ups on one CPU (2 × 1.50 µs = 3.00 µs)"),
        "{text}"
    );
    let free = data(&line("unix", &[64, 1024, 4096], rtt, None), Some(probe()));
    let text = &answer(&free).details[0];
    assert!(text.contains("not pinned to known CPUs"), "{text}");
    assert!(!text.contains("wake-ups ("), "{text}");
}

#[test]
fn a_fixed_share_whose_interval_straddles_half_is_undecided_and_a_clear_one_per_byte() {
    // At 64 B: fixed 32 ns of 64 ns (50 %) with a 1 % spread per visit.
    let half = data(
        &line("tcp", &[64, 1024, 4096], |s| 32.0 + 0.5 * s, Some((0, 1))),
        None,
    );
    let a = answer(&half);
    assert_eq!(a.verdict.as_deref(), Some("tcp: undecided"), "{a:?}");
    // Fixed 100 ns, 64 B at 0.5 ns/B = 3,200 ns per byte part: 3 % fixed.
    let bytes = data(
        &line(
            "tcp",
            &[6400, 16384, 65536],
            |s| 100.0 + 0.5 * s,
            Some((0, 1)),
        ),
        None,
    );
    let a = answer(&bytes);
    assert_eq!(a.verdict.as_deref(), Some("tcp: mostly per-byte"), "{a:?}");
    assert!(a.rests_on.contains("no probe.json in this folder"));
    assert!(a.finding.contains("mostly per-byte on 1"), "{}", a.finding);
}

#[test]
fn a_size_off_the_line_is_left_out_and_named() {
    let rtt = |s: f64| {
        if s > 16384.0 {
            3.0 * (9000.0 + 0.5 * s)
        } else {
            9000.0 + 0.5 * s
        }
    };
    let d = data(
        &line("pipe", &[64, 1024, 16384, 262144], rtt, Some((0, 1))),
        Some(probe()),
    );
    let text = &answer(&d).details[0];
    assert!(
        text.contains("weighted over 3 sizes 64 B to 16 KiB (256 KiB is 3.00× the line"),
        "{text}"
    );
}

#[test]
fn shm_is_not_put_in_system_calls_it_does_not_make() {
    let d = data(
        &line("shm", &[64, 1024, 4096], |s| 300.0 + 0.1 * s, Some((0, 1))),
        Some(probe()),
    );
    let text = &answer(&d).details[0];
    assert!(
        text.contains("no system call while the other side spins"),
        "{text}"
    );
    assert!(!text.contains("fixed ≈"), "{text}");
}
