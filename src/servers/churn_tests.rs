//! The churn answer from synthetic visits with known outcomes.
use super::*;
use crate::servers::wobble::{wobble, ROUNDS};
use serde_json::json;

/// A steady point still moves a little (±0.2 %), each its own way, as measured ones do.
const STEADY: f64 = 0.002;

/// `ROUNDS` rounds of `model` at 8 clients in `mode`: `rps` requests/s, moved per round by a
/// factor e^(`swing` · the point's own wobble), so that the paired ratios' geometric means stay
/// the figures given.
fn visits(model: &str, mode: &str, rps: f64, swing: f64) -> Vec<ServersView> {
    let wobble = wobble(&format!("{model} {mode}"));
    (0..ROUNDS)
        .map(|round| {
            let record = json!({
                "config": {"model": model, "clients": 8, "connection": mode},
                "status": "completed", "visit": {"round": round},
                "metrics": {"requests_per_s": rps * (swing * wobble[round]).exp(),
                            "server": {"cpu_per_request_ns": 1000.0}},
            });
            serde_json::from_value(record).unwrap()
        })
        .collect()
}

/// epoll keeps half its persistent rate per-request (±1 %), threaded `threaded_kept` of it
/// (±`swing`).
fn study(threaded_kept: f64, swing: f64) -> Vec<ServersView> {
    let mut r = visits("epoll", "persistent", 20_000.0, STEADY);
    r.extend(visits("epoll", "per-request", 10_000.0, 0.01));
    r.extend(visits("threaded", "persistent", 10_000.0, STEADY));
    r.extend(visits(
        "threaded",
        "per-request",
        10_000.0 * threaded_kept,
        swing,
    ));
    r
}

#[test]
fn the_model_keeping_a_shown_smaller_share_suffers_most() {
    let a = answer(&study(0.2, 0.02), 0.05).expect("both modes measured");
    let text = a.details.join("\n");
    assert!(
        text.contains("8 clients, epoll: per-request over persistent requests/s 0.50×"),
        "{text}"
    );
    assert!(
        text.contains("8 clients: threaded suffers most: threaded against epoll keeps less: 2.50×"),
        "{text}"
    );
    assert_eq!(
        a.verdict.as_deref(),
        Some("8 clients: threaded suffers most")
    );
}

#[test]
fn a_model_the_load_generator_limited_is_not_compared() {
    let mut r = study(0.2, 0.02);
    for v in r.iter_mut().filter(|v| point_of(v).0 == "threaded") {
        v.metrics.as_mut().unwrap().client = Some(crate::servers::visits::ClientFigures {
            cpu_share_per_thread: Some(0.96),
            load_limited: Some(true),
        });
    }
    let a = answer(&r, 0.05).unwrap();
    let text = a.details.join("\n");
    assert!(
        text.contains("8 clients, threaded: not compared: at 8 clients threaded was limited by the load generator (client CPU 96 % per thread)"),
        "{text}"
    );
    assert_eq!(
        a.verdict.as_deref(),
        Some("8 clients: epoll alone"),
        "threaded's kept share is not ranked: {text}"
    );
}

#[test]
fn shares_the_rounds_cannot_separate_are_undecided_never_a_winner() {
    // threaded keeps 0.48 of its rate but swings ±30 % per round: not shown below epoll's 0.5.
    let a = answer(&study(0.48, 0.3), 0.05).unwrap();
    assert_eq!(a.verdict.as_deref(), Some("8 clients: undecided"));
    let text = a.details.join("\n");
    assert!(
        text.contains("no single model suffering most: threaded, epoll not separated"),
        "{text}"
    );
    assert!(text.contains("95 % CI"), "{text}");
}

#[test]
fn one_mode_measured_gives_no_churn_answer_and_leaves_the_others_on_all_visits() {
    let one: Vec<ServersView> = study(0.2, STEADY)
        .into_iter()
        .filter(|r| connection_of(r) == "persistent")
        .collect();
    assert!(answer(&one, 0.05).is_none());
    let all = super::super::answers::answers(&study(0.2, 0.02), 0.05);
    assert_eq!(all.last().unwrap().question, CHURN);
    let best = &all[0];
    assert!(
        best.rests_on.contains("persistent-connection visits"),
        "{}",
        best.rests_on
    );
    // epoll's persistent 20 000 against threaded's 10 000: per-request visits left out.
    assert!(
        best.details[0].starts_with("most requests/s: epoll leads at 8 clients"),
        "{:?}",
        best.details
    );
    let leaders = super::super::answers::leaders(&study(0.2, 0.02), 0.05);
    let row = &leaders[0].rows()[0];
    assert_eq!(
        (&row[..3], row[4].as_str()),
        (
            &["epoll".to_string(), "threaded".into(), "2.00×".into()][..],
            "beats"
        )
    );
}
