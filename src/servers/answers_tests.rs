//! The servers study's answers from synthetic visits with known outcomes.
use super::*;
use serde_json::json;

const NOISE: [f64; 3] = [0.03, -0.03, 0.0];
const OTHER: [f64; 3] = [-0.03, 0.0, 0.03];
const QUIET: [f64; 3] = [0.005, -0.005, 0.0];
const QUIET_OTHER: [f64; 3] = [-0.005, 0.0, 0.005];

/// Three visits of `model` at `clients`: `rps` requests/s, `p99` ns, `cpu` ns per request.
fn visits(
    model: &str,
    clients: u64,
    rps: f64,
    p99: f64,
    cpu: f64,
    noise: [f64; 3],
) -> Vec<ServersView> {
    (0..3)
        .map(|round| {
            let n = 1.0 + noise[round];
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
    let mut r = visits("epoll", 5, 20_000.0, 1e5, 3000.0, [0.0; 3]);
    r.extend(visits("select", 5, 10_000.0, 1e5, 3010.0, NOISE));
    let a = answers(&r, 0.05);
    let line = &answer(&a, BEST).details[0];
    assert!(
        line.contains("most requests/s: epoll leads: epoll against select beats: 2.00× (95 % CI"),
        "{line}"
    );
    assert!(
        line.contains("least server CPU per request: no single leader: epoll, select not separated (epoll against select undecided: 1.00× (95 % CI 0.93 to 1.08)) (1 test, Holm"),
        "3 % noise over 3 visits separates neither way: {line}"
    );
    // The same pair with quiet visits is shown tied.
    let mut r = visits("epoll", 5, 20_000.0, 1e5, 3000.0, [0.0; 3]);
    r.extend(visits("select", 5, 10_000.0, 1e5, 3010.0, QUIET));
    let a = answers(&r, 0.05);
    let line = &answer(&a, BEST).details[0];
    assert!(
        line.contains(
            "least server CPU per request: no single leader: epoll, select not separated (epoll against select equivalent within ±5 %"
        ),
        "{line}"
    );
    assert!(answer(&a, BEST).rests_on.contains("placement: loopback"));
}

#[test]
fn the_knee_is_where_requests_stop_growing_while_p99_rises() {
    let mut r = visits("threaded", 5, 10_000.0, 1e5, 3000.0, [0.0; 3]);
    r.extend(visits("threaded", 15, 20_000.0, 2e5, 3000.0, QUIET));
    r.extend(visits("threaded", 100, 20_100.0, 9e5, 3000.0, QUIET_OTHER));
    let a = answers(&r, 0.05);
    let k = &answer(&a, KNEE).details[0];
    assert!(k.starts_with("threaded: knee at 15 clients"), "{k}");
    // With ±3 % visits the flat step is not shown flat (undecided): no knee is claimed.
    let mut noisy = visits("threaded", 5, 10_000.0, 1e5, 3000.0, [0.0; 3]);
    noisy.extend(visits("threaded", 15, 20_000.0, 2e5, 3000.0, NOISE));
    noisy.extend(visits("threaded", 100, 20_100.0, 9e5, 3000.0, OTHER));
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
    let a = answers(&visits("epoll", 5, 1000.0, 1e5, 3000.0, [0.0; 3]), 0.05);
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
        r.extend(visits("iterative", c, 5000.0, 1e5, 3000.0, [0.0; 3]));
        r.extend(visits("threaded", c, 10_000.0, 1e5, 3000.0, [0.0; 3]));
        r.extend(visits("select", c, 15_000.0, 1e5, 3000.0, [0.0; 3]));
    }
    let a = answers(&r, 0.05);
    let s = answer(&a, SEEDS);
    assert!(s.details[1].starts_with("15 clients: iterative 5000 req/s, threaded 10000 req/s, select 15000 req/s; threaded over iterative 2.00×"), "{s:?}");
}

#[test]
fn the_studys_margin_judges_equivalence_and_is_stated() {
    let mut r = visits("epoll", 5, 20_000.0, 1e5, 3000.0, [0.0; 3]);
    r.extend(visits("select", 5, 10_000.0, 1e5, 3010.0, NOISE));
    let a = answers(&r, 0.2);
    let best = answer(&a, BEST);
    assert!(
        best.details[0].contains("epoll against select equivalent within ±20 %"),
        "3 % noise is well inside ±20 %: {best:?}"
    );
    assert!(best.rests_on.contains("\"equivalent within ±20 %\""));
    assert!(answer(&a, KNEE).rests_on.contains("[0.800, 1.200]"));
}
