//! The serialization answer on synthetic points whose per-visit sender CPU is known: each
//! verdict state, the family it is judged in, and records that did not keep the figure.
use super::*;
use crate::analysis::load::parse;
use crate::analysis::synthetic::{jsonl, jsonl_own, Shape};
use crate::analysis::Dataset;
use crate::stats::verdict::DEFAULT_MARGIN;

fn data(shapes: &[Shape]) -> Dataset {
    parse(&jsonl(shapes), "r").unwrap()
}

/// Points visited in 8 rounds ("equivalent" needs 8), each with sender-CPU noise of its own,
/// so a pair's per-round CPU ratio varies.
fn data_8_rounds(shapes: &[Shape]) -> Dataset {
    parse(&jsonl_own(shapes, 8), "r").unwrap()
}

fn with_cpu(mechanism: &'static str, size: u64, gbps: f64, cpu: f64) -> Shape {
    let mut shape = Shape::stream(mechanism, size, 1, gbps);
    shape.sender_cpu_ns_per_byte = cpu;
    shape
}

#[test]
fn copy_costing_half_again_the_cpu_reads_more_with_its_paired_interval() {
    let d = data(&[
        with_cpu("send", 4096, 12.0, 0.30),
        with_cpu("copy", 4096, 10.0, 0.45),
    ]);
    let (a, t) = judged(&d.completed(), DEFAULT_MARGIN);
    assert!(
        a.finding
            .contains("CPU per byte against send: more at 4 KiB."),
        "{}",
        a.finding
    );
    assert!(
        a.finding.contains("median extra is +0.150 CPU-ns per byte"),
        "{}",
        a.finding
    );
    assert!(
        a.finding
            .contains("Throughput of copy against send: lower at 4 KiB."),
        "{}",
        a.finding
    );
    assert!(
        a.details[0].contains("CPU per byte +50 % (more; paired 95 % CI"),
        "{}",
        a.details[0]
    );
    let t = t.expect("a family");
    assert_eq!((t.tests, t.count(Verdict::Beats)), (1, 1));
    assert_eq!(t.cells[0].cell, "4 KiB at 1 thread");
}

#[test]
fn sizes_on_both_sides_are_each_stated_never_summed_into_one_cost() {
    let d = data(&[
        with_cpu("send", 4096, 10.0, 0.50),
        with_cpu("copy", 4096, 10.0, 0.40),
        with_cpu("send", 65536, 10.0, 0.30),
        with_cpu("copy", 65536, 10.0, 0.36),
    ]);
    let (a, t) = judged(&d.completed(), DEFAULT_MARGIN);
    assert!(
        a.verdict.as_deref() == Some("sender CPU per byte: more at 64 KiB; less at 4 KiB"),
        "{:?}",
        a.verdict
    );
    let t = t.unwrap();
    assert_eq!(t.tests, 2);
    assert!(a.finding.contains("CPU: 2 tests, Holm"), "{}", a.finding);
}

#[test]
fn equal_cpu_is_equivalent_within_the_margin_and_a_noisy_tie_undecided() {
    let d = data_8_rounds(&[
        with_cpu("send", 4096, 10.0, 0.30),
        with_cpu("copy", 4096, 10.0, 0.30),
    ]);
    let (a, _) = judged(&d.completed(), DEFAULT_MARGIN);
    assert_eq!(
        a.verdict.as_deref(),
        Some("sender CPU per byte: within ±5 % at 4 KiB")
    );
    let mut noisy = [
        with_cpu("send", 4096, 10.0, 0.30),
        with_cpu("copy", 4096, 10.0, 0.31),
    ];
    // ±15 % visit noise: the 3 % difference's interval holds both 1 and the ±5 % margin.
    noisy.iter_mut().for_each(|s| s.pair_noise = 0.15);
    let (a, t) = judged(&data_8_rounds(&noisy).completed(), DEFAULT_MARGIN);
    assert_eq!(
        a.verdict.as_deref(),
        Some("sender CPU per byte: undecided at 4 KiB"),
        "{:?}",
        a.details
    );
    assert_eq!(t.unwrap().count(Verdict::Undecided), 1);
    // A margin wide enough holds the noisy tie as equivalent: the margin is what decides it.
    let (wide, _) = judged(&data_8_rounds(&noisy).completed(), 0.40);
    assert_eq!(
        wide.verdict.as_deref(),
        Some("sender CPU per byte: within ±40 % at 4 KiB")
    );
}

#[test]
fn records_without_per_visit_cpu_cannot_say_and_say_why() {
    let jsonl = jsonl(&[
        with_cpu("send", 4096, 12.0, 0.30),
        with_cpu("copy", 4096, 10.0, 0.45),
    ])
    .lines()
    .map(|l| {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        v["statistics"]["visits"]
            .as_object_mut()
            .unwrap()
            .remove("sender_cpu_ns_per_byte");
        v.to_string()
    })
    .collect::<Vec<_>>()
    .join("\n");
    let d = parse(&jsonl, "r").unwrap();
    let (a, t) = judged(&d.completed(), DEFAULT_MARGIN);
    assert!(
        a.finding
            .starts_with("Cannot be said at 1 thread: no size has per-visit sender CPU"),
        "{}",
        a.finding
    );
    assert!(t.is_none());
    assert!(
        a.details[0].contains("CPU per byte: not compared"),
        "{}",
        a.details[0]
    );
}

#[test]
fn serialization_without_send_cannot_be_said() {
    let d = data(&[Shape::stream("copy", 4096, 1, 10.0)]);
    assert!(answer(&d.completed(), DEFAULT_MARGIN)
        .finding
        .starts_with("Cannot be said"));
}
