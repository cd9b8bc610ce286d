use super::*;
use crate::analysis::load::parse;
use crate::analysis::synthetic::{jsonl, Shape};
use crate::analysis::{answers as all_answers, tested_answers, Dataset};

/// The fixture's points with eight rounds (rounds 5–7 repeat 0–2): five rounds of one
/// repeated noise pattern read as strongly autocorrelated once the bias correction for so short
/// a series is applied, which widens every interval past deciding.
fn data(shapes: &[Shape]) -> Dataset {
    let mut d = parse(&jsonl(shapes), "r").unwrap();
    let again = |v: &[(usize, f64)]| -> Vec<(usize, f64)> {
        v.iter().take(3).map(|(r, x)| (r + 5, *x)).collect()
    };
    for p in &mut d.points {
        let (visits, cpu) = (again(&p.visits), again(&p.sender_cpu_visits));
        p.visits.extend(visits);
        p.sender_cpu_visits.extend(cpu);
    }
    d
}

/// A sink point with its Gbit/s and sender CPU-ns per byte.
fn at(mechanism: &'static str, size: u64, gbps: f64, cpu: f64, on_sink: bool) -> Shape {
    let mut s = Shape::udp(mechanism, size, gbps, on_sink);
    s.sender_cpu_ns_per_byte = cpu;
    // copy and zerocopy draw the same own-noise pattern: noise of a different size keeps
    // their per-round ratio from being exactly constant, a zero spread that decides nothing.
    s.pair_noise = if mechanism == "zerocopy" { 0.01 } else { 0.005 };
    s
}

/// zerocopy slower than copy at 1 KiB, then faster and cheaper from 16 KiB, on the sink; over
/// loopback beside it copy stays ahead at every size.
fn sweep(beside_loopback: bool) -> Vec<Shape> {
    let mut shapes = Vec::new();
    for (size, copy, zc) in [(1024, 3.0, 1.5), (16384, 28.0, 34.0), (65536, 30.0, 45.0)] {
        let zc_cpu = if size >= 16384 { 0.2 } else { 0.8 };
        shapes.push(at("copy", size, copy, 0.4, true));
        shapes.push(at("zerocopy", size, zc, zc_cpu, true));
        if beside_loopback {
            shapes.push(at("copy", size, copy, 0.4, false));
            shapes.push(at("zerocopy", size, copy * 0.8, 0.5, false));
        }
    }
    shapes
}

fn sink_answers(d: &Dataset) -> Vec<Answer> {
    answers(&d.completed_with_pattern("stream"), Settings::default())
}

#[test]
fn on_a_sink_zerocopy_beats_copy_from_16_kib_on_both_figures() {
    let d = data(&sweep(false));
    let a = sink_answers(&d);
    assert_eq!(a.len(), 1, "no loopback points, no loopback answer: {a:?}");
    assert_eq!(a[0].question, QUESTION);
    let verdict = a[0].verdict.as_deref().unwrap();
    assert_eq!(
        verdict,
        "zerocopy: throughput: 1 thread: beats from 16 KiB, sender CPU-ns per byte: 1 thread: beats from 16 KiB"
    );
    assert!(
        a[0].finding
            .starts_with("On throughput, at 1 thread: zerocopy beats copy from 16 KiB on (+22 %"),
        "{}",
        a[0].finding
    );
    assert!(a[0].rests_on.contains("6 tests, Holm"), "{}", a[0].rests_on);
    let copied = a[0].details.last().unwrap();
    assert!(copied.contains("copied 0.0 %: none copied"), "{copied}");
}

#[test]
fn beside_loopback_the_same_question_is_answered_where_the_kernel_copies() {
    let d = data(&sweep(true));
    let a = sink_answers(&d);
    assert_eq!(
        a.iter().map(|a| a.question).collect::<Vec<_>>(),
        [QUESTION, LOOPBACK_QUESTION]
    );
    let loopback = a[1].verdict.as_deref().unwrap();
    assert!(
        loopback.starts_with("zerocopy: throughput: 1 thread: does not beat it at any size"),
        "{loopback}"
    );
    assert!(
        a[1].details.last().unwrap().contains("copied 100.0 %"),
        "{:?}",
        a[1].details
    );
    assert!(
        a[1].rests_on.contains("over loopback UDP"),
        "{}",
        a[1].rests_on
    );
}

#[test]
fn a_sink_sweep_asks_its_own_question_instead_of_the_loopback_tcp_ones() {
    let d = data(&sweep(true));
    let questions: Vec<&str> = all_answers(&d).iter().map(|a| a.question).collect();
    assert!(questions.contains(&QUESTION), "{questions:?}");
    assert!(
        !questions.contains(&"From which message size does zerocopy beat copy?"),
        "{questions:?}"
    );
    let tested = tested_answers(&d);
    let sink: Vec<_> = tested.iter().filter(|t| t.question == QUESTION).collect();
    assert_eq!(sink.len(), 1);
    assert_eq!(sink[0].tests, 6, "3 sizes × 2 figures");
    assert_eq!(
        sink[0].family,
        "zerocopy over udp on a sink against copy over udp on a sink"
    );
}

#[test]
fn noisy_rounds_leave_the_sink_answer_undecided_rather_than_not_beating() {
    let mut shapes = Vec::new();
    for size in [1024, 16384] {
        for (m, gbps) in [("copy", 10.0), ("zerocopy", 10.3)] {
            // copy, zerocopy and uring-zc share one synthetic noise pattern, which cancels in
            // a pair: the regimes' swing differs instead, so the ratio moves from round to round.
            let mut s = at(m, size, gbps, 0.4, true);
            s.ci_rel = if m == "zerocopy" { 0.3 } else { 0.02 };
            shapes.push(s);
        }
    }
    let a = sink_answers(&data(&shapes));
    let verdict = a[0].verdict.as_deref().unwrap();
    assert!(verdict.contains("undecided"), "{verdict}");
    assert!(!verdict.contains("does not beat"), "{verdict}");
}

#[test]
fn without_copy_on_the_sink_the_answer_says_it_cannot_be_said() {
    let a = sink_answers(&data(&[at("zerocopy", 1024, 1.0, 0.5, true)]));
    assert_eq!(a[0].verdict.as_deref(), Some("cannot be said"));
    assert!(
        a[0].finding.starts_with("Cannot be said"),
        "{}",
        a[0].finding
    );
}

#[test]
fn a_sweep_without_a_sink_gets_no_sink_answer() {
    let shapes = [
        Shape::stream("copy", 1024, 1, 10.0),
        Shape::stream("zerocopy", 1024, 1, 9.0),
    ];
    assert!(sink_answers(&data(&shapes)).is_empty());
}

#[test]
fn a_sink_record_reads_as_the_senders_figures() {
    let d = data(&[at("copy", 1024, 3.0, 0.4, true)]);
    let p = &d.points[0];
    assert!(p.sink);
    assert_eq!(p.series(), "copy over udp on a sink");
    assert_eq!(p.throughput_gbps, 3.0);
    assert_eq!(
        (p.sender_cpu_ns_per_byte, p.receiver_cpu_ns_per_byte),
        (Some(0.4), None)
    );
}
