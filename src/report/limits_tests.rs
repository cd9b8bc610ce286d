use super::*;
use crate::analysis::load::parse;
use crate::analysis::synthetic::{jsonl, Shape};
use serde_json::{json, Value};

fn with_probe(shapes: &[Shape], probe: Option<Value>) -> Dataset {
    let mut data = parse(&jsonl(shapes), "r").unwrap();
    data.probe = probe.map(|p| serde_json::from_value(p).unwrap());
    data
}

fn one_copy(probe: Option<Value>) -> Dataset {
    with_probe(&[Shape::stream("copy", 4096, 1, 16.0)], probe)
}

/// A probe from before the curve: one thread's DRAM figure.
fn old_probe() -> Value {
    json!({
        "memcpy_roofline": {"points": [
            {"level": "dram", "buffer_bytes": 25165824, "bandwidth": {"best_gb_per_s": 10.0}},
            {"level": "l2", "bandwidth": {"best_gb_per_s": 50.0}}
        ]},
        "syscalls": {"getpid": {"min_ns": 100.0}},
        "clocks": {"clocks": [{"clock": "CLOCK_MONOTONIC", "read_cost": {"min_ns": 23.0}}]}
    })
}

/// The curve the issue measured on a 16-core Xeon (1, 2, 4, 8, 16 threads).
fn probe_with_curve() -> Value {
    let mut probe = old_probe();
    let points: Vec<Value> = [(1, 8.4), (2, 18.8), (4, 32.2), (8, 48.9), (16, 62.2)]
        .iter()
        .map(|(n, v)| json!({"threads": n, "aggregate": {"best_gb_per_s": v}}))
        .collect();
    probe["memcpy_roofline"]["llc_bytes"] = json!(32 << 20);
    probe["memcpy_roofline"]["by_threads"] = json!({"allowed_cpus": 16, "points": points});
    probe
}

fn limits_of(probe: Value) -> Limits {
    limits(&one_copy(Some(probe))).unwrap()
}

#[test]
fn throughput_is_set_against_one_threads_dram_memcpy_without_a_curve() {
    let data = one_copy(Some(old_probe()));
    let l = limits(&data).unwrap();
    assert_eq!((l.memcpy_gb_per_s, l.syscall_ns), (10.0, 100.0));
    assert!(l.curve.is_empty());
    let c = ceiling(&l, 2);
    assert_eq!(
        c,
        Ceiling {
            threads: 1,
            gb_per_s: 10.0,
            from_curve: false
        }
    );
    let share = roofline_share(&data.points[0], &c).unwrap();
    assert!(
        (share - 0.2).abs() < 0.01,
        "16 Gbit/s = 2 GB/s of 10: {share}"
    );
    assert_eq!(
        roofline_cell(&data, &data.points[0], &l).unwrap(),
        "20 % (1 thread: the probe has no curve)"
    );
}

#[test]
fn the_ceiling_is_the_curve_at_a_measured_count_and_a_line_between_two() {
    let l = limits_of(probe_with_curve());
    let at = |n| ceiling(&l, n).gb_per_s;
    assert_eq!((at(1), at(2), at(8), at(16)), (8.4, 18.8, 48.9, 62.2));
    assert!((at(3) - 25.5).abs() < 1e-9, "halfway from 18.8 to 32.2");
    assert!((at(12) - 55.55).abs() < 1e-9, "halfway from 48.9 to 62.2");
    assert_eq!(at(64), 62.2, "beyond the curve: its largest count's");
    assert_eq!(ceiling(&l, 0).threads, 1);
    assert!(ceiling(&l, 5).from_curve);
}

#[test]
fn a_curve_without_its_smallest_counts_holds_fewer_threads_to_its_first() {
    let mut probe = probe_with_curve();
    probe["memcpy_roofline"]["by_threads"]["points"][0]["aggregate"] = Value::Null;
    let l = limits_of(probe);
    assert_eq!(l.curve[0], (2, 18.8));
    assert_eq!(ceiling(&l, 1).gb_per_s, 18.8);
}

#[test]
fn a_dip_in_the_curve_never_lowers_the_ceiling_of_more_threads() {
    let mut probe = probe_with_curve();
    // Two threads measured below one (a busy machine).
    probe["memcpy_roofline"]["by_threads"]["points"][1]["aggregate"]["best_gb_per_s"] = json!(4.0);
    let l = limits_of(probe);
    assert_eq!(&l.curve[..3], [(1, 8.4), (2, 8.4), (4, 32.2)]);
    assert_eq!(ceiling(&l, 2).gb_per_s, 8.4);
    assert!((ceiling(&l, 3).gb_per_s - 20.3).abs() < 1e-9);
}

#[test]
fn a_point_is_held_to_its_senders_and_receivers_capped_at_its_cpus() {
    let data = with_probe(
        &[
            Shape::stream("copy", 4096, 1, 16.0),
            Shape::stream("copy", 4096, 4, 16.0),
        ],
        Some(probe_with_curve()),
    );
    let (one, four) = (&data.points[0], &data.points[1]);
    let record = |p: &Point| record_of(&data, p);
    assert_eq!(copying_threads(one, record(one), Some(16)), 2);
    // Synthetic flows all run on CPUs 0 and 1: eight threads share two CPUs.
    assert_eq!(copying_threads(four, record(four), Some(16)), 2);
    // Unpinned (no record to say where): the CPUs the probe was allowed cap them.
    assert_eq!(copying_threads(four, None, Some(16)), 8);
    assert_eq!(copying_threads(four, None, Some(4)), 4);
    let mut both_ways = four.clone();
    both_ways.bidir = true;
    assert_eq!(copying_threads(&both_ways, None, None), 16);
    let mut sink = four.clone();
    sink.sink = true;
    assert_eq!(copying_threads(&sink, None, None), 4, "the sender alone");
}

#[test]
fn the_cell_names_the_threads_its_share_is_held_against() {
    let data = one_copy(Some(probe_with_curve()));
    let l = limits(&data).unwrap();
    // 2 GB/s against two threads' 18.8 GB/s.
    assert_eq!(
        roofline_cell(&data, &data.points[0], &l).unwrap(),
        "11 % (2 threads)"
    );
}

#[test]
fn above_its_ceiling_a_point_says_why_beside_the_figure() {
    // 200 Gbit/s = 25 GB/s against two threads' 18.8 GB/s: 133 %.
    let data = with_probe(
        &[
            Shape::stream("copy", 4096, 1, 200.0),
            Shape::stream("zerocopy", 4096, 1, 200.0),
            Shape::stream("splice", 4096, 1, 200.0),
        ],
        Some(probe_with_curve()),
    );
    let l = limits(&data).unwrap();
    let cell = |mechanism: &str| {
        let p = data
            .points
            .iter()
            .find(|p| p.mechanism == mechanism)
            .unwrap();
        roofline_cell(&data, p, &l).unwrap()
    };
    let zerocopy = cell("zerocopy");
    assert!(
        zerocopy.starts_with(
            "133 % (2 threads): zerocopy lends its pages to the kernel (MSG_ZEROCOPY)"
        ),
        "{zerocopy}"
    );
    assert!(cell("splice").contains("references to whole pages"));
    let copy = cell("copy");
    assert!(
        copy.contains("copy copies every byte, so its copies ran from the 32.00 MiB last-level"),
        "{copy}"
    );
    assert!(copy.contains("`bytepath probe`"), "{copy}");
    let mut zc_recv = data.points[0].clone();
    zc_recv.recv = Some("zc-recv".into());
    assert!(beyond_ceiling(&zc_recv, &l).contains("map the received pages"));
}

#[test]
fn round_trips_and_transactions_are_no_share_of_a_copy_ceiling() {
    let l = limits_of(probe_with_curve());
    let mut p = one_copy(None).points[0].clone();
    for metric in ["round_trips_per_s", "transactions_per_s"] {
        p.headline_metric = metric.into();
        assert_eq!(roofline_share(&p, &ceiling(&l, 2)), None);
    }
}

#[test]
fn the_block_states_the_curve_and_the_rule_or_one_threads_figure_and_why() {
    let rows = machine_limits(&one_copy(Some(probe_with_curve())));
    let roofline = &rows[0].1;
    assert!(
        roofline.contains("1 → 8.40, 2 → 18.80, 4 → 32.20, 8 → 48.90, 16 → 62.20"),
        "{roofline}"
    );
    assert!(
        roofline.contains("straight line between them"),
        "{roofline}"
    );
    let old = machine_limits(&one_copy(Some(old_probe())));
    assert!(
        old[0]
            .1
            .starts_with("10.00 GB/s = 80.0 Gbit/s (one thread, 24.00 MiB, best trial)"),
        "{:?}",
        old
    );
    assert!(old[0].1.contains("predates the per-thread-count curve"));
    assert!(old[1].1.contains("getpid 100.0 ns"));
    assert!(old[2].1.contains("23.0 ns"));
    let none = machine_limits(&one_copy(None));
    assert!(none[0].1.starts_with("not recorded"));
    assert!(limits(&one_copy(None)).is_none());
}
