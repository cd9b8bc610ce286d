//! ipc's answers from synthetic point records with known outcomes.
use super::*;
use crate::analysis::load::parse;
use crate::analysis::synthetic::{record, seeded_noise, set_visits, Shape};
use crate::ipc::cost::COST;
use crate::ipc::series::{FASTEST, PEAK};
use serde_json::{json, Value};

/// Rounds of every point here: "equivalent" needs 8 (`interval::MIN_EQUIVALENCE_PAIRS`).
const ROUNDS: usize = 8;

/// A point's own relative noise in each round, drawn from `seed` within about ±`amplitude`
/// and centred (the visits' mean stays the point's figure): every point gets a seed of its
/// own, so a pair's per-round ratio varies (a constant ratio has no standard error and gets
/// no verdict).
fn noise(seed: u64, amplitude: f64) -> Vec<f64> {
    let draws = seeded_noise(seed, ROUNDS);
    let centre = draws.iter().sum::<f64>() / draws.len() as f64;
    draws.iter().map(|n| (n - centre) * amplitude).collect()
}

/// Nearly steady: ±0.5 % of its own.
fn calm(seed: u64) -> Vec<f64> {
    noise(seed, 0.005)
}

/// Wobbling: ±3 % of its own.
fn wobble(seed: u64) -> Vec<f64> {
    noise(seed, 0.03)
}

/// Noisy: ±8 % of its own, wider than a ±5 % margin can hold a 1 % difference within.
fn noisy(seed: u64) -> Vec<f64> {
    noise(seed, 0.08)
}

/// An ipc point record: `mean` round trips/s (rr) or Gbit/s (stream), one visit a round with
/// `noise` (one figure a round).
fn point(
    rr: bool,
    transport: &str,
    size: u64,
    buffer: Option<u64>,
    mean: f64,
    noise: Vec<f64>,
) -> Value {
    let shape = if rr {
        Shape::rr("send", size, 1, mean)
    } else {
        Shape::stream("send", size, 1, mean)
    };
    let mut r = record(&shape);
    r["command"] = "ipc".into();
    r["config"]["transport"] = transport.into();
    r["config"]["where_sides_run"] = "loopback on this host".into();
    if let Some(b) = buffer {
        r["config"]["channel_buffer_bytes"] = b.into();
    }
    let values: Vec<f64> = noise.iter().map(|n| mean * (1.0 + n)).collect();
    let cpu = vec![shape.sender_cpu_ns_per_byte; values.len()];
    set_visits(&mut r, &values, &cpu);
    r["sweep_point"]["key"] = format!("{transport}/{size}/{buffer:?}/{rr}").into();
    r
}

fn data(records: &[Value]) -> Dataset {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    parse(&text, "results.jsonl").unwrap()
}

fn answer<'a>(answers: &'a [Answer], question: &str) -> &'a Answer {
    answers
        .iter()
        .find(|a| a.question == question)
        .unwrap_or_else(|| panic!("no {question:?} in {answers:#?}"))
}

#[test]
fn the_fastest_transport_beats_every_other_and_an_open_first_place_names_none() {
    let d = data(&[
        point(true, "shm", 64, None, 200_000.0, calm(1)),
        point(true, "pipe", 64, None, 100_000.0, wobble(2)),
        point(true, "unix", 64, None, 199_000.0, wobble(3)),
    ]);
    let a = answers(&d);
    let fastest = answer(&a, FASTEST);
    assert_eq!(
        fastest.verdict.as_deref(),
        Some("fastest: 64 B no single (shm, unix)")
    );
    let line = &fastest.details[0];
    assert!(
        line.starts_with("64 B: no single fastest: shm, unix not separated"),
        "{line}"
    );
    assert!(
        line.contains("pipe against shm is slower: 0.50× (98.33 % CI 0.49 to 0.51)"),
        "{line}"
    );
    assert!(
        line.contains("shm against unix equivalent within ±5 % (")
            || line.contains("shm against unix equivalent within ±5 %: 1.01×"),
        "{line}"
    );
    assert!(line.contains("(3 tests, Holm at α = 0.05"), "{line}");
    assert!(fastest
        .rests_on
        .contains("placement: loopback on this host"));
    // Without unix, shm beats the only other transport: it is the fastest.
    let d = data(&[
        point(true, "shm", 64, None, 200_000.0, calm(4)),
        point(true, "pipe", 64, None, 100_000.0, wobble(5)),
    ]);
    let a = answers(&d);
    let fastest = answer(&a, FASTEST);
    assert!(
        fastest
            .finding
            .starts_with("Shm has the fastest round trip at every size"),
        "{fastest:?}"
    );
    assert!(
        fastest.details[0]
            .starts_with("64 B: shm is fastest: shm against pipe beats: 2.00× (95 % CI"),
        "{fastest:?}"
    );
}

#[test]
fn too_few_points_say_what_is_missing() {
    let d = data(&[point(true, "pipe", 64, None, 100_000.0, calm(6))]);
    let a = answers(&d);
    assert!(answer(&a, FASTEST).finding.contains("two transports"));
    assert!(answer(&a, COST).finding.contains("two sizes or more"));
    assert!(answer(&a, PEAK).finding.contains("--measure bandwidth"));
    assert!(answer(&a, LOSS).finding.contains("no datagram transport"));
    assert!(a.iter().all(|x| x.question != BUFFER));
}

#[test]
fn bandwidth_that_falls_beyond_its_peak_says_so() {
    let d = data(&[
        point(false, "pipe", 4096, Some(65536), 10.0, calm(7)),
        point(false, "pipe", 16384, Some(65536), 20.0, wobble(8)),
        point(false, "pipe", 262144, Some(65536), 12.0, wobble(9)),
        point(false, "unix", 4096, None, 8.0, calm(10)),
        point(false, "unix", 16384, None, 9.0, calm(11)),
    ]);
    let a = answers(&d);
    let peak = answer(&a, PEAK);
    assert!(
        peak.details[0].starts_with("pipe (64 KiB buffer): 4 KiB → 16 KiB rises: 2.00× (97.5 % CI"),
        "{peak:?}"
    );
    assert_eq!(
        peak.verdict.as_deref(),
        Some(
            "pipe (64 KiB buffer): peaks at 16 KiB and falls beyond, unix: highest at the largest size measured (16 KiB)"
        )
    );
    assert!(
        peak.rests_on.contains("--pipe-sizes"),
        "one buffer: points to the flag"
    );
    assert!(
        a.iter().all(|x| x.question != BUFFER),
        "one buffer: no buffer answer"
    );
}

#[test]
fn the_buffer_answer_appears_with_two_buffers_and_compares_them_per_size() {
    let d = data(&[
        point(false, "pipe", 16384, Some(65536), 20.0, noisy(12)),
        point(false, "pipe", 16384, Some(1 << 20), 20.1, noisy(13)),
        point(false, "pipe", 262144, Some(65536), 12.0, calm(14)),
        point(false, "pipe", 262144, Some(1 << 20), 18.0, calm(15)),
    ]);
    let a = answers(&d);
    let b = answer(&a, BUFFER);
    assert_eq!(b.details.len(), 2, "{b:?}");
    assert!(
        // ±8 % noise a side: held with 256 KiB as one Holm family, its equivalence interval
        // (95 %) reaches past ±5 %, and its 1 % difference is not told apart from none.
        b.details[0].contains("16 KiB: 1 MiB buffer against 64 KiB: undecided: 1.01×"),
        "{b:?}"
    );
    assert!(
        b.details[1].contains("256 KiB: 1 MiB buffer against 64 KiB: faster: 1.50×"),
        "{b:?}"
    );
    assert_eq!(
        b.verdict.as_deref(),
        Some("pipe: the larger buffer is faster at 256 KiB")
    );
}

#[test]
fn datagram_loss_and_the_minimum_round_trip_are_given_per_size() {
    let mut udp = point(false, "udp", 1024, None, 1.0, calm(16));
    udp["datagrams"] =
        json!({"forward": {"sent": 1000, "lost": 25}, "back": {"sent": 0, "lost": 0}});
    let d = data(&[udp, point(true, "udp", 1024, None, 50_000.0, calm(17))]);
    let a = answers(&d);
    let loss = answer(&a, LOSS);
    assert_eq!(loss.details, ["udp 1 KiB: 2.50 % lost"]);
    let min = answer(&a, MINIMUM);
    // The synthetic histogram's minimum is 0.8 of its p50 (20 µs).
    assert_eq!(
        min.details,
        ["udp 1 KiB: min 16.00 µs beside p50 20.00 µs (p99 60.00 µs)"]
    );
}

#[test]
fn the_studys_margin_judges_equivalence_and_is_stated() {
    let records = [
        point(false, "pipe", 16384, Some(65536), 20.0, noisy(18)),
        point(false, "pipe", 16384, Some(1 << 20), 20.1, noisy(19)),
    ];
    let mut d = data(&records);
    d.margin = Some(0.2);
    let a = answers(&d);
    let b = answer(&a, BUFFER);
    assert!(
        b.details[0].contains("equivalent within ±20 %: 1.01×"),
        "{b:?}"
    );
    assert!(
        b.rests_on.contains("inside [0.800, 1.200]"),
        "{}",
        b.rests_on
    );
    // A margin tighter than the pair's spread leaves it undecided, never "no difference".
    d.margin = Some(0.001);
    let a = answers(&d);
    assert!(
        answer(&a, BUFFER).details[0].contains("undecided: 1.01×"),
        "{a:?}"
    );
}

#[test]
fn answers_json_carries_each_fastest_and_peak_family_cell_by_cell() {
    let d = data(&[
        point(true, "shm", 64, None, 200_000.0, calm(20)),
        point(true, "pipe", 64, None, 100_000.0, wobble(21)),
        point(false, "pipe", 4096, None, 10.0, calm(22)),
        point(false, "pipe", 65536, None, 20.0, wobble(23)),
    ]);
    let t = tested(&d);
    let fastest = t.iter().find(|f| f.question == FASTEST).unwrap();
    assert_eq!((fastest.family.as_str(), fastest.tests), ("at 64 B", 1));
    assert_eq!(fastest.cells[0].cell, "pipe over shm");
    assert_eq!(fastest.count(Verdict::Slower), 1, "pipe is slower than shm");
    let peak = t.iter().find(|f| f.question == PEAK).unwrap();
    assert_eq!(peak.family, "pipe");
    assert_eq!(peak.cells[0].cell, "4 KiB → 64 KiB");
    assert_eq!(peak.count(Verdict::Beats), 1, "the step rises");
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(json[0]["cells"][0]["state"], "slower", "{json}");
    assert_eq!(json[0]["family"], "at 64 B", "{json}");
}

#[test]
fn the_fastest_answer_is_a_table_per_size_under_its_summary_in_the_report() {
    let d = data(&[
        point(true, "shm", 64, None, 200_000.0, calm(24)),
        point(true, "pipe", 64, None, 100_000.0, wobble(25)),
        point(true, "unix", 64, None, 150_000.0, wobble(26)),
        point(true, "shm", 4096, None, 100_000.0, calm(27)),
        point(true, "pipe", 4096, None, 100_500.0, wobble(28)),
    ]);
    let t = tables(&d);
    assert_eq!(t.len(), 2, "one table per size: {t:#?}");
    assert!(
        t[0].summary.starts_with("64 B: shm is fastest; "),
        "{}",
        t[0].summary
    );
    assert!(t[0].summary.contains("3 tests, Holm"), "{}", t[0].summary);
    assert_eq!(t[0].rows.len(), 3, "every pair of three transports");
    assert!(
        t[0].rows
            .iter()
            .filter(|r| r.first == "shm")
            .all(|r| r.state == "beats"),
        "{:?}",
        t[0].rows
    );
    assert_eq!(t[1].rows.len(), 1);
    assert!(
        t[1].summary.starts_with("4 KiB: no single fastest: "),
        "{}",
        t[1].summary
    );

    let md = crate::report::study::answers_markdown_with(&answers(&d), &t);
    let section = md.split("### ").find(|s| s.starts_with(FASTEST)).unwrap();
    assert!(
        section.contains("| transport | against | round trips/s ratio | interval | state |"),
        "{section}"
    );
    assert_eq!(
        section.matches("\n| shm | ").count(),
        2,
        "the leader first: {section}"
    );
    assert!(
        !section.contains("\n- "),
        "the table replaces the detail lines: {section}"
    );
    let html = crate::report::study::answers_html_with(&answers(&d), &t);
    assert_eq!(html.matches("<p class=\"pairs\">").count(), 2, "{html}");
}

#[test]
fn the_fastest_table_from_two_rounds_prints_no_bounds() {
    let two = |t: &str, mean: f64, noise: [f64; 2]| point(true, t, 64, None, mean, noise.to_vec());
    let d = data(&[
        two("shm", 200_000.0, [0.01, -0.01]),
        two("pipe", 100_000.0, [-0.01, 0.02]),
    ]);
    let t = tables(&d);
    let row = &t[0].rows[0];
    assert_eq!(
        row.interval, "too few rounds for an interval (2 pairs)",
        "{row:?}"
    );
    assert_eq!(row.state, "undecided", "{row:?}");
    let all = answers(&d);
    let line = &answer(&all, FASTEST).details[0];
    assert!(
        line.contains("too few rounds for an interval (2 pairs)"),
        "{line}"
    );
    assert!(!line.contains(" CI "), "{line}");
}
