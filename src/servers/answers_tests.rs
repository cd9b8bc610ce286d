//! The servers study's answers from synthetic visits with known outcomes.
use super::*;
use crate::servers::wobble::{wobble, ROUNDS};
use serde_json::json;

/// A point that swings ±20 % from round to round: over 8 rounds, too loose to place a ratio
/// near 1 within ±5 %, tight enough to show a 2× one.
const NOISY: f64 = 0.2;
/// A point that moves ±2 % from round to round: over 8 rounds, close enough to place a ratio
/// near 1 within ±5 %, too loose to tell 3000 from 3010.
const QUIET: f64 = 0.02;
/// A steady point still moves a little (±0.2 %), each its own way, as measured ones do.
const STEADY: f64 = 0.002;

/// `ROUNDS` visits of `model` at `clients`: `rps` requests/s, `p99` ns, `cpu` ns per request,
/// each moved per round by a factor e^(`swing` · the point's own wobble), so that the paired
/// ratios' geometric means stay the figures given.
fn visits(model: &str, clients: u64, rps: f64, p99: f64, cpu: f64, swing: f64) -> Vec<ServersView> {
    let wobble = wobble(&format!("{model} at {clients}"));
    (0..ROUNDS)
        .map(|round| {
            let n = (swing * wobble[round]).exp();
            let record = json!({
                "config": {"model": model, "clients": clients, "where_sides_run": "loopback"},
                "status": "completed", "errors": [], "visit": {"round": round},
                "metrics": {"requests_per_s": rps * n, "latency_ns": {"p99": p99 * n},
                            "server": {"cpu_per_request_ns": cpu * n, "threads": clients + 1,
                                       "context_switches_per_request": 2.0,
                                       "peak_rss_bytes": 1_000_000 + clients * 10_240,
                                       "rss_at_fork_bytes": 1_000_000}},
            });
            serde_json::from_value(record).unwrap()
        })
        .collect()
}

fn answer<'a>(a: &'a [Answer], q: &str) -> &'a Answer {
    a.iter().find(|x| x.question == q).unwrap()
}

#[test]
fn a_leader_beats_every_other_model_and_an_open_first_place_names_no_leader() {
    let mut r = visits("epoll", 5, 20_000.0, 1e5, 3000.0, STEADY);
    r.extend(visits("select", 5, 10_000.0, 1e5, 3010.0, NOISY));
    let a = answers(&r, 0.05);
    let line = &answer(&a, BEST).details[0];
    assert!(
        line.starts_with("most requests/s: epoll leads at 5 clients; 1 of 1 pairs decided, Holm over 1, margin ±5 %; "),
        "{line}"
    );
    assert!(
        line.contains("least server CPU per request: no single leader at 5 clients: epoll, select not separated; 0 of 1 pairs decided"),
        "±20 % visits over 8 rounds separate neither way: {line}"
    );
    let l = leaders(&r, 0.05);
    assert_eq!(l.len(), 2, "requests/s and CPU per request at 5 clients");
    let rps = &l[0].rows()[0];
    assert_eq!(
        (&rps[..3], rps[4].as_str()),
        (
            &["epoll".to_string(), "select".into(), "2.00×".into()][..],
            "beats"
        )
    );
    assert_eq!(
        l[1].rows()[0],
        [
            "epoll",
            "select",
            "1.00×",
            "95 % CI 0.88 to 1.14",
            "undecided"
        ]
    );
    // The same pair with quiet visits is shown tied.
    let mut r = visits("epoll", 5, 20_000.0, 1e5, 3000.0, STEADY);
    r.extend(visits("select", 5, 10_000.0, 1e5, 3010.0, QUIET));
    let l = leaders(&r, 0.05);
    assert_eq!(l[1].rows()[0][4], "equivalent within ±5 %");
    assert!(
        l[1].rows()[0][3].starts_with("90 % CI"),
        "{:?}",
        l[1].rows()
    );
    assert!(answer(&answers(&r, 0.05), BEST)
        .rests_on
        .contains("placement: loopback"));
}

/// Marks every visit limited by the load generator at client CPU `share` per thread.
fn limited(mut visits: Vec<ServersView>, share: f64) -> Vec<ServersView> {
    for v in &mut visits {
        v.metrics.as_mut().unwrap().client = Some(crate::servers::visits::ClientFigures {
            cpu_share_per_thread: Some(share),
            load_limited: Some(true),
        });
    }
    visits
}

#[test]
fn a_point_the_load_generator_limited_is_never_a_leader_and_the_answer_says_why() {
    let mut r = visits("epoll", 1000, 20_000.0, 1e5, 3000.0, STEADY);
    r.extend(visits("select", 1000, 10_000.0, 1e5, 3000.0, NOISY));
    r.extend(limited(
        visits("threaded", 1000, 60_000.0, 1e5, 1000.0, QUIET),
        0.97,
    ));
    let a = answers(&r, 0.05);
    let line = &answer(&a, BEST).details[0];
    let why = "at 1000 clients threaded was limited by the load generator (client CPU 97 % per thread): not ranked";
    assert!(
        line.starts_with("most requests/s: epoll leads at 1000 clients; 1 of 1 pairs decided"),
        "threaded's 3× is the clients' limit, not a lead: {line}"
    );
    assert_eq!(
        line.matches(why).count(),
        2,
        "said for both figures: {line}"
    );
    let l = leaders(&r, 0.05);
    assert!(l
        .iter()
        .all(|l| l.ranked.iter().all(|(m, _)| m != "threaded")));
    assert!(l.iter().all(|l| l
        .rows()
        .iter()
        .all(|row| !row.contains(&"threaded".to_string()))));
    assert!(answer(&a, BEST)
        .rests_on
        .contains("never a leader, never a knee"));
}

#[test]
fn a_point_the_load_generator_limited_is_never_a_knee() {
    let mut r = visits("threaded", 5, 10_000.0, 1e5, 3000.0, STEADY);
    r.extend(visits("threaded", 15, 20_000.0, 2e5, 3000.0, QUIET));
    r.extend(limited(
        visits("threaded", 100, 20_000.0, 9e5, 3000.0, QUIET),
        0.95,
    ));
    let a = answers(&r, 0.05);
    let k = &answer(&a, KNEE).details[0];
    assert!(
        k.starts_with("threaded: no knee shown within 100 clients")
            && k.ends_with("not judged (no step to or from such a count is a knee): at 100 clients threaded was limited by the load generator (client CPU 95 % per thread)"),
        "unlimited, the same figures put a knee at 15 clients: {k}"
    );
}

#[test]
fn the_seeds_comparison_does_not_compare_a_limited_point() {
    let mut r = Vec::new();
    for c in [5, 15] {
        r.extend(visits("iterative", c, 5000.0, 1e5, 3000.0, STEADY));
        r.extend(limited(
            visits("threaded", c, 10_000.0, 1e5, 3000.0, STEADY),
            1.0,
        ));
        r.extend(visits("select", c, 15_000.0, 1e5, 3000.0, STEADY));
    }
    let a = answers(&r, 0.05);
    let s = &answer(&a, SEEDS).details[0];
    assert!(s.contains("threaded over iterative not compared: at 5 clients threaded was limited by the load generator (client CPU 100 % per thread)"), "{s}");
    assert!(s.contains("select over iterative 3.00×"), "{s}");
}

#[test]
fn the_knee_is_where_requests_stop_growing_while_p99_rises() {
    let mut r = visits("threaded", 5, 10_000.0, 1e5, 3000.0, STEADY);
    r.extend(visits("threaded", 15, 20_000.0, 2e5, 3000.0, QUIET));
    r.extend(visits("threaded", 100, 20_000.0, 9e5, 3000.0, QUIET));
    let a = answers(&r, 0.05);
    let k = &answer(&a, KNEE).details[0];
    assert!(k.starts_with("threaded: knee at 15 clients"), "{k}");
    // With ±20 % visits the flat step is not shown flat (undecided): no knee is claimed.
    let mut noisy = visits("threaded", 5, 10_000.0, 1e5, 3000.0, STEADY);
    noisy.extend(visits("threaded", 15, 20_000.0, 2e5, 3000.0, NOISY));
    noisy.extend(visits("threaded", 100, 20_000.0, 9e5, 3000.0, NOISY));
    let a = answers(&noisy, 0.05);
    let k = &answer(&a, KNEE).details[0];
    assert!(
        k.starts_with("threaded: no knee shown within 100 clients"),
        "{k}"
    );
    let c = &answer(&a, COSTS).details[0];
    assert!(
        c.contains("memory per connection at 100 clients: 10.0 KiB"),
        "{c}"
    );
}

#[test]
fn too_few_points_say_what_is_missing() {
    let a = answers(&visits("epoll", 5, 1000.0, 1e5, 3000.0, STEADY), 0.05);
    assert!(answer(&a, KNEE).finding.contains("two client counts"));
    let s = &answer(&a, SEEDS).finding;
    assert!(
        s.contains("iterative (--models)") && s.contains("15 clients (--clients)"),
        "{s}"
    );
}

#[test]
fn the_seeds_comparison_in_their_terms() {
    let mut r = Vec::new();
    for c in [5, 15] {
        r.extend(visits("iterative", c, 5000.0, 1e5, 3000.0, STEADY));
        r.extend(visits("threaded", c, 10_000.0, 1e5, 3000.0, STEADY));
        r.extend(visits("select", c, 15_000.0, 1e5, 3000.0, STEADY));
    }
    let a = answers(&r, 0.05);
    let s = answer(&a, SEEDS);
    assert!(s.details[1].starts_with("15 clients: iterative 5000 req/s, threaded 10000 req/s, select 15000 req/s; threaded over iterative 2.00×"), "{s:?}");
}

#[test]
fn the_studys_margin_judges_equivalence_and_is_stated() {
    let mut r = visits("epoll", 5, 20_000.0, 1e5, 3000.0, STEADY);
    r.extend(visits("select", 5, 10_000.0, 1e5, 3010.0, NOISY));
    let a = answers(&r, 0.2);
    let best = answer(&a, BEST);
    let cpu = &leaders(&r, 0.2)[1].rows()[0];
    assert_eq!(
        cpu[4], "equivalent within ±20 %",
        "±20 % visits over 8 rounds put the ratio well inside ±20 %: {cpu:?}"
    );
    assert!(best.details[0].contains("margin ±20 %"), "{best:?}");
    assert!(best.rests_on.contains("\"equivalent within ±20 %\""));
    assert!(answer(&a, KNEE).rests_on.contains("[0.800, 1.200]"));
}
