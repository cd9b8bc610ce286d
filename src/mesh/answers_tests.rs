use super::*;
use crate::stats::verdict::DEFAULT_MARGIN;
use serde_json::{json, Value};

/// `super::matrices` of records given as JSON.
fn matrices(hosts: &[String], records: &[Value], margin: f64) -> Vec<PointMatrix> {
    let views: Vec<RunView> = records
        .iter()
        .map(|r| serde_json::from_value(r.clone()).unwrap())
        .collect();
    super::matrices(hosts, &views, margin)
}

fn record(src: &str, dst: &str, gbps: f64) -> Value {
    json!({
        "src": src, "dst": dst, "status": "completed",
        "config": {"mechanism": "send", "pattern": "stream", "message_size_bytes": 4096,
                   "threads": 1, "transport": "tcp"},
        "sides": [{}, {"throughput_gbps": gbps}],
    })
}

/// `hosts` hosts, `visits` visits each with its own seeded noise of `spread`; `speed`
/// gives each ordered pair's true Gbit/s.
fn mesh(
    hosts: usize,
    visits: usize,
    spread: f64,
    seed: u64,
    speed: impl Fn(usize, usize) -> f64,
) -> (Vec<String>, Vec<Value>) {
    let names: Vec<String> = (0..hosts).map(|h| format!("h{h}")).collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut records = Vec::new();
    for _ in 0..visits {
        for s in 0..hosts {
            for d in (0..hosts).filter(|d| *d != s) {
                let noise = 1.0 + spread * (rng.f64() * 2.0 - 1.0) * 1.7;
                records.push(record(&names[s], &names[d], speed(s, d) * noise));
            }
        }
    }
    (names, records)
}

fn flagged(m: &PointMatrix) -> Vec<(usize, usize)> {
    m.flags.iter().map(|f| (f.src, f.dst)).collect()
}

fn slow_hosts(m: &PointMatrix) -> Vec<usize> {
    m.hosts.iter().filter(|h| h.slow).map(|h| h.host).collect()
}

#[test]
fn one_slow_link_flags_that_pair_and_neither_host() {
    let (hosts, records) = mesh(5, 4, 0.02, 1, |s, d| match (s, d) {
        (0, 1) => 6.0,
        _ => 10.0,
    });
    let m = &matrices(&hosts, &records, DEFAULT_MARGIN)[0];
    assert_eq!(m.key, "send/stream/4096/1");
    assert_eq!(flagged(m), [(0, 1)]);
    assert_eq!(m.flags[0].cause, Cause::Link);
    assert!(slow_hosts(m).is_empty(), "{:?}", m.hosts);
    let r = &m.flags[0].against;
    assert_eq!(r.pairs, 19, "tested against the 19 other pairs' cell means");
    assert!((r.median - 10.0).abs() < 0.3, "{r:?}");
    assert!(r.ratio.high < 1.0 && r.confidence > 0.99, "{r:?}");
}

#[test]
fn a_host_whose_every_pair_is_slow_is_named() {
    let (hosts, records) = mesh(
        5,
        3,
        0.02,
        2,
        |s, d| if s == 4 || d == 4 { 2.0 } else { 10.0 },
    );
    let m = &matrices(&hosts, &records, DEFAULT_MARGIN)[0];
    assert_eq!(slow_hosts(m), [4]);
    let through: Vec<(usize, usize)> = pairs_through(5, 4).collect();
    assert_eq!(flagged(m), through);
    let f = m.flags.iter().find(|f| (f.src, f.dst) == (0, 4)).unwrap();
    assert_eq!(f.cause, Cause::Destination);
    assert_eq!((m.hosts[4].slow_pairs, m.hosts[4].tested_pairs), (8, 8));
    assert!(m.hosts[4].ratio.unwrap().0.high < 1.0);
}

#[test]
fn forty_visits_of_equal_pairs_flag_nothing() {
    // Pooling every visit made a pair a few percent below average "slow" once visits were
    // many; on cell means, with Holm across pairs, nothing is flagged.
    // Each family holds its chance of any false flag to 5 %: over 100 meshes, about 5
    // flag a pair and about 5 name a host, by chance.
    let (mut flagged_meshes, mut slow_host_meshes) = (0, 0);
    for seed in 0..100 {
        let (hosts, records) = mesh(5, 40, 0.05, 100 + seed, |_, _| 10.0);
        let m = &matrices(&hosts, &records, DEFAULT_MARGIN)[0];
        slow_host_meshes += usize::from(!slow_hosts(m).is_empty());
        flagged_meshes += usize::from(!m.flags.is_empty());
    }
    eprintln!("equal pairs: {flagged_meshes} of 100 meshes flagged a pair, {slow_host_meshes} named a host");
    assert!(
        flagged_meshes <= 9,
        "{flagged_meshes} of 100 meshes flagged a pair"
    );
    assert!(
        slow_host_meshes <= 9,
        "{slow_host_meshes} of 100 meshes named a host"
    );
}

#[test]
fn a_failed_visit_is_counted_with_its_reason_and_one_visit_has_no_interval() {
    let mut failed = record("a", "b", 1.0);
    failed["status"] = json!("failed");
    failed["errors"] = json!(["host b is down"]);
    let hosts = vec!["a".to_string(), "b".to_string()];
    let m = &matrices(&hosts, &[failed, record("b", "a", 5.0)], DEFAULT_MARGIN)[0];
    assert_eq!(
        (m.cells[0][1].failed, m.cells[0][1].reason.as_deref()),
        (1, Some("host b is down"))
    );
    assert!(m.cells[1][0].summary.is_none() && m.cells[1][0].visits == [5.0]);
    assert!(m.flags.is_empty());
}

#[test]
fn a_round_trip_is_slow_when_it_is_longer() {
    let n = 4;
    let mut cells = vec![vec![Cell::default(); n]; n];
    for (s, row) in cells.iter_mut().enumerate() {
        for (d, cell) in row.iter_mut().enumerate().filter(|(d, _)| *d != s) {
            let base = if (s, d) == (0, 1) {
                90.0
            } else {
                30.0 + (s + d) as f64 * 0.1
            };
            cell.visits = vec![base, base * 1.02, base * 0.98];
        }
    }
    let (flags, _) = judge(&cells, Figure::RoundTripP50Us, 0.05);
    assert_eq!(flags.len(), 1);
    assert_eq!(
        (flags[0].src, flags[0].dst, flags[0].cause),
        (0, 1, Cause::Link)
    );
    assert!(flags[0].against.ratio.low > 1.0);
    assert!(
        judge(&cells, Figure::Gbps, 0.05).0.is_empty(),
        "faster is never slow"
    );
}

#[test]
fn three_hosts_leave_two_pairs_without_a_host_too_few_to_call_it_slow() {
    // Host 0's four pairs take three times as long as the two pairs without it: by Welch on
    // two cell means a side that would read as slow; two pairs decide nothing.
    let n = 3;
    let mut cells = vec![vec![Cell::default(); n]; n];
    for (s, row) in cells.iter_mut().enumerate() {
        for (d, cell) in row.iter_mut().enumerate().filter(|(d, _)| *d != s) {
            let base = if s == 0 || d == 0 {
                90.0
            } else {
                30.0 + d as f64
            };
            cell.visits = vec![base, base * 1.02, base * 0.98];
        }
    }
    let (_, hosts) = judge(&cells, Figure::RoundTripP50Us, 0.05);
    let (ratio, _) = hosts[0].ratio.expect("host 0 compared");
    assert_eq!(ratio.n, 2, "{ratio:?}");
    assert!(!hosts[0].slow, "{:?}", hosts[0]);
}
