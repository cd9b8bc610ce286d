//! The crr answer from synthetic points with known outcomes.
use super::*;
use crate::analysis::point::from_value as from_record;
use crate::analysis::synthetic::{record_own, Shape};

/// Rounds of every point here: enough for an interval, and for "equivalent" (8).
const ROUNDS: usize = 8;

/// A crr point at `rate` transactions/s whose record carries a split; its visits have noise
/// of their own (seed 1), apart from its rr twin's (seed 2), so their ratio varies by round.
fn crr_point(mechanism: &'static str, rate: f64, noise: f64) -> Point {
    let mut shape = Shape::rr(mechanism, 64, 1, rate);
    shape.pattern = "crr";
    shape.pair_noise = noise;
    let mut r = record_own(&shape, ROUNDS, 1);
    r["crr"] = serde_json::json!({
        "client_transactions": 1000, "server_transactions": 1000, "server_accepts": 1000,
        "timed_transactions": 900, "connect_ns_total": 18_000_000, "first_byte_ns_total": 24_300_000,
        "response_ns_total": 24_300_000, "close_ns_total": 9_000_000, "split_definition": "s",
        "connect_us_mean": 20.0, "first_byte_us_mean": 27.0, "response_us_mean": 27.0,
        "close_us_mean": 10.0, "client_cpu_us_per_transaction": 35.0,
        "server_cpu_us_per_transaction": 25.0, "client_close": "fin", "port_choice": "connect",
        "ephemeral_port_range": [32768, 60999], "tcp_tw_reuse": 2, "time_wait_at_end": 900,
        "time_wait_unavailable_reason": null
    });
    from_record(&r, 1).unwrap()
}

fn rr_point(mechanism: &'static str, rate: f64) -> Point {
    let shape = Shape::rr(mechanism, 64, 1, rate);
    from_record(&record_own(&shape, ROUNDS, 2), 2).unwrap()
}

#[test]
fn a_connection_that_halves_the_rate_is_said_to_cost_with_its_split() {
    let crr = crr_point("send", 14_000.0, 0.005);
    assert_eq!(crr.crr.as_ref().unwrap().first_byte_us_mean, Some(27.0));
    let rr = rr_point("send", 28_000.0);
    let a = answer(&[&rr, &crr], 0.05).expect("a crr point");
    assert_eq!(a.question, QUESTION);
    assert_eq!(
        a.verdict.as_deref(),
        Some("send 64 B ×1: the connection costs")
    );
    let line = &a.details[0];
    assert!(line.contains("takes 2.00× (95 % CI"), "{line}");
    // 1e6/14000 − 1e6/28000 = 35.7 µs per flow.
    assert!(line.contains("the connection adds 35.7 µs"), "{line}");
    assert!(
        line.contains("connect 20.0 µs, first byte 27.0 µs, response 27.0 µs, close 10.0 µs"),
        "{line}"
    );
}

#[test]
fn a_difference_within_the_noise_is_undecided_and_no_twin_still_gives_the_split() {
    // ±20 % visit noise: the 2 % difference and the ±5 % margin both lie inside its interval.
    let crr = crr_point("copy", 27_500.0, 0.2);
    let rr = rr_point("copy", 28_000.0);
    let a = answer(&[&rr, &crr], 0.05).unwrap();
    assert_eq!(
        a.verdict.as_deref(),
        Some("copy 64 B ×1: undecided"),
        "{:?}",
        a.details
    );
    let alone = answer(&[&crr], 0.05).unwrap();
    assert_eq!(alone.verdict.as_deref(), Some("cannot be said"));
    assert!(
        alone.details[0].contains("no completed rr twin"),
        "{:?}",
        alone.details
    );
    assert!(alone.details[0].contains("CPU per transaction client 35.0 µs"));
    assert!(
        answer(&[&rr], 0.05).is_none(),
        "no crr point: nothing asked"
    );
}

#[test]
fn the_crr_points_are_one_family_stated_at_the_margin_given() {
    let rr = rr_point("send", 28_000.0);
    let crr = crr_point("send", 14_000.0, 0.005);
    let a = answer(&[&rr, &crr], 0.02).unwrap();
    assert!(
        a.finding.contains("one family: 1 test, Holm") && a.finding.contains("margin ±2 %"),
        "{}",
        a.finding
    );
    assert!(a.rests_on.contains("[0.98, 1.02]"), "{}", a.rests_on);
    assert!(!format!("{a:?}").contains("±5 %"), "{a:?}");
    let t = tested(&[&rr, &crr], 0.02).unwrap();
    assert_eq!((t.tests, t.margin, t.cells.len()), (1, 0.02, 1));
}
