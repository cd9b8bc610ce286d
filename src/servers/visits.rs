//! A servers study's records as its readers see them, and their folding: the records are one
//! per visit; the table and plots show one row per point. `points` folds each (model,
//! clients)'s visits into one: rates, per-request figures and latency percentiles are the mean
//! over completed visits (every visit is as long as the others), counts are summed, peaks are
//! the largest; `visits` says how many it rests on. A folder from before visits (one record per
//! point) passes through unchanged.
//!
//! `ServersView` is the record (`record::ServersRecord`) as read back: every field optional,
//! since folders from before visits, connection modes or `--profile` lack theirs, and figures
//! as `f64` (a folded point's means are fractions of the visits' counts). A figure a line shows
//! as written keeps its JSON form (`serde_json::Number`).
use super::record::LOAD_LIMITED_SHARE;
use crate::measure::profile::Profile;
use crate::record::distribution::LatencyDistribution;
use crate::record::view::{lenient, EnvironmentView, NetworkView, PlaceView};
use serde::Deserialize;
use serde_json::Number;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ServersView {
    pub status: Option<String>,
    /// Why a refused or skipped point was not measured.
    pub reason: Option<String>,
    pub errors: Option<Vec<String>>,
    pub config: Option<ServersConfig>,
    pub metrics: Option<ServersMetrics>,
    pub environment: Option<EnvironmentView>,
    pub sweep_point: Option<PlaceView>,
    #[serde(deserialize_with = "lenient")]
    pub profile: Option<Profile>,
    pub profiled_window: Option<String>,
    pub visit: Option<ServersVisitView>,
    /// A folded point's visits: how many, and how many completed (never in a record).
    #[serde(skip)]
    pub visits: Option<VisitCount>,
}

/// A point's configuration, as far as the report reads it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ServersConfig {
    pub model: Option<String>,
    pub clients: Option<u64>,
    pub clients_requested: Option<u64>,
    pub clients_capped_reason: Option<String>,
    pub size_bytes: Option<Number>,
    pub duration_s: Option<Number>,
    pub warmup_s: Option<Number>,
    pub server_threads: Option<Number>,
    pub open_file_limit: Option<Number>,
    pub rate_per_s: Option<f64>,
    pub client_threads: Option<u64>,
    /// How many client threads and why (absent in folders from before the default).
    pub client_threads_chosen: Option<String>,
    pub requests_per_connection: Option<u64>,
    /// "persistent" or "per-request"; absent in folders from before the mode was kept.
    pub connection: Option<String>,
    pub stalled_clients: Option<u64>,
    pub pin: Option<String>,
    pub server_cpus: Option<Vec<u64>>,
    pub client_cpus: Option<Vec<u64>>,
    pub where_sides_run: Option<String>,
    pub network: Option<NetworkView>,
}

/// What the load generator and the server measured.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ServersMetrics {
    pub requests: Option<f64>,
    pub requests_per_s: Option<f64>,
    pub latency_ns: Option<ServersLatency>,
    /// `--percentiles`: a visit's chosen set and histogram; a point's read from its visits'.
    #[serde(flatten)]
    pub distribution: LatencyDistribution,
    pub mismatched_requests: Option<f64>,
    pub connection_errors: Option<f64>,
    /// Clients no echo reached in a visit's window (their waits are in the latency).
    pub unserved_clients: Option<f64>,
    pub server: Option<ServerFigures>,
    pub client: Option<ClientFigures>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ServersLatency {
    pub min: Option<f64>,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub p99_9: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
}

/// What the server process alone cost, with the hardware counters the report shows.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ServerFigures {
    pub cpu_per_request_ns: Option<f64>,
    pub context_switches_per_request: Option<f64>,
    pub threads: Option<f64>,
    pub peak_rss_bytes: Option<f64>,
    pub rss_at_fork_bytes: Option<f64>,
    pub accepted_connections: Option<f64>,
    pub cycles: Option<f64>,
    pub cycles_unavailable_reason: Option<String>,
    pub instructions: Option<f64>,
    pub instructions_unavailable_reason: Option<String>,
    pub ipc: Option<f64>,
    pub ipc_unavailable_reason: Option<String>,
    pub cache_misses: Option<f64>,
    pub cache_misses_unavailable_reason: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ClientFigures {
    pub cpu_share_per_thread: Option<f64>,
    /// The load generator was the limit (a folded point: at some visit).
    pub load_limited: Option<bool>,
}

/// Where a visit sits in the study's order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ServersVisitView {
    pub round: Option<u64>,
    pub seed: Option<u64>,
    pub interference: Option<Disturbance>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Disturbance {
    pub disturbed: Option<bool>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VisitCount {
    pub count: usize,
    pub completed: usize,
}

impl ServersView {
    pub fn config(&self) -> &ServersConfig {
        static NONE: ServersConfig = ServersConfig::EMPTY;
        self.config.as_ref().unwrap_or(&NONE)
    }

    pub fn status(&self) -> &str {
        self.status.as_deref().unwrap_or("?")
    }

    pub fn completed(&self) -> bool {
        self.status.as_deref() == Some("completed")
    }

    pub fn errors(&self) -> &[String] {
        self.errors.as_deref().unwrap_or_default()
    }

    /// The server process's figures, where the point has them.
    pub fn server(&self) -> Option<&ServerFigures> {
        self.metrics.as_ref()?.server.as_ref()
    }

    /// The client CPU per thread of a visit (or folded point) the load generator limited:
    /// its mark, or in a record from before the mark that share at `LOAD_LIMITED_SHARE` or
    /// more; `None` where it was not the limit.
    pub fn load_limited(&self) -> Option<f64> {
        let c = self.metrics.as_ref()?.client?;
        let share = c.cpu_share_per_thread?;
        let limited = c.load_limited.unwrap_or(share >= LOAD_LIMITED_SHARE);
        limited.then_some(share)
    }

    fn disturbed(&self) -> bool {
        self.visit
            .and_then(|v| v.interference?.disturbed)
            .unwrap_or(false)
    }
}

impl ServersConfig {
    const EMPTY: ServersConfig = ServersConfig {
        model: None,
        clients: None,
        clients_requested: None,
        clients_capped_reason: None,
        size_bytes: None,
        duration_s: None,
        warmup_s: None,
        server_threads: None,
        open_file_limit: None,
        rate_per_s: None,
        client_threads: None,
        client_threads_chosen: None,
        requests_per_connection: None,
        connection: None,
        stalled_clients: None,
        pin: None,
        server_cpus: None,
        client_cpus: None,
        where_sides_run: None,
        network: None,
    };
}

/// (model, clients) of a record.
pub fn point_of(r: &ServersView) -> (String, u64) {
    let c = r.config();
    (
        c.model.clone().unwrap_or_else(|| "?".into()),
        c.clients.unwrap_or(0),
    )
}

/// The connection mode of a record ("persistent" for a record from before the mode was kept).
pub fn connection_of(r: &ServersView) -> &str {
    r.config().connection.as_deref().unwrap_or("persistent")
}

/// The round a visit was made in (0 for a record from before visits).
pub fn round(r: &ServersView) -> usize {
    r.visit.and_then(|v| v.round).unwrap_or(0) as usize
}

/// One record per point, in the matrix's order.
pub fn points(records: &[ServersView]) -> Vec<ServersView> {
    // ((model, clients), connection mode), and the point's index in the matrix.
    type Key<'a> = ((String, u64), &'a str);
    let mut keys: Vec<(Key, u64)> = Vec::new();
    for r in records {
        let key = (point_of(r), connection_of(r));
        if !keys.iter().any(|(k, _)| *k == key) {
            let index = r.sweep_point.as_ref().and_then(|p| p.index);
            keys.push((key, index.unwrap_or(keys.len() as u64)));
        }
    }
    keys.sort_by_key(|(_, index)| *index);
    keys.into_iter()
        .map(|(key, _)| {
            let visits: Vec<&ServersView> = records
                .iter()
                .filter(|r| (point_of(r), connection_of(r)) == key)
                .collect();
            fold(&counted(&visits))
        })
        .collect()
}

/// The visits a point's figures rest on: a disturbed visit made again later in its round
/// gives way to the redo (both stay in results.jsonl).
fn counted<'a>(visits: &[&'a ServersView]) -> Vec<&'a ServersView> {
    visits
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            !(r.disturbed() && visits[i + 1..].iter().any(|later| round(later) == round(r)))
        })
        .map(|(_, r)| *r)
        .collect()
}

fn fold(visits: &[&ServersView]) -> ServersView {
    let done: Vec<&ServersView> = visits.iter().filter(|r| r.completed()).copied().collect();
    let mut out = (*done.first().or(visits.first()).expect("a visit")).clone();
    if visits.len() == 1 && visits[0].visit.is_none() {
        return out;
    }
    // `--profile` samples one visit of the point (its last round's): the point carries it.
    if let Some(p) = visits.iter().find(|r| r.profile.is_some()) {
        out.profile = p.profile.clone();
        out.profiled_window = p.profiled_window.clone();
    }
    let worst = ["failed", "interrupted"]
        .into_iter()
        .find(|s| visits.iter().any(|r| r.status.as_deref() == Some(s)));
    if let Some(s) = worst {
        out.status = Some(s.into());
    }
    let errors = visits.iter().flat_map(|r| {
        let round = round(r);
        r.errors()
            .iter()
            .map(move |e| format!("round {round}: {e}"))
    });
    out.errors = Some(errors.collect());
    out.visits = Some(VisitCount {
        count: visits.len(),
        completed: done.len(),
    });
    if let (false, Some(metrics)) = (done.is_empty(), out.metrics.as_mut()) {
        fold_metrics(metrics, &done);
        let measured: Vec<&LatencyDistribution> = done
            .iter()
            .filter_map(|r| r.metrics.as_ref())
            .filter(|m| m.latency_ns.is_some())
            .map(|m| &m.distribution)
            .collect();
        metrics.distribution = super::percentiles::pool(&measured);
    }
    out
}

/// Where a figure sits in a point's metrics (`None` where its block is absent).
type Slot = fn(&mut ServersMetrics) -> Option<&mut Option<f64>>;

/// The figures averaged over visits: rates and per-request figures.
const MEANS: [Slot; 9] = [
    |m| Some(&mut m.requests_per_s),
    |m| Some(&mut m.latency_ns.as_mut()?.p50),
    |m| Some(&mut m.latency_ns.as_mut()?.p99),
    |m| Some(&mut m.latency_ns.as_mut()?.p99_9),
    |m| Some(&mut m.latency_ns.as_mut()?.mean),
    |m| Some(&mut m.server.as_mut()?.cpu_per_request_ns),
    |m| Some(&mut m.server.as_mut()?.context_switches_per_request),
    |m| Some(&mut m.client.as_mut()?.cpu_share_per_thread),
    |m| Some(&mut m.unserved_clients),
];
/// The counts, summed over visits.
const SUMS: [Slot; 3] = [
    |m| Some(&mut m.requests),
    |m| Some(&mut m.mismatched_requests),
    |m| Some(&mut m.connection_errors),
];
/// The peaks, the largest of any visit.
const PEAKS: [Slot; 3] = [
    |m| Some(&mut m.latency_ns.as_mut()?.max),
    |m| Some(&mut m.server.as_mut()?.threads),
    |m| Some(&mut m.server.as_mut()?.peak_rss_bytes),
];
const MIN_LATENCY: Slot = |m| Some(&mut m.latency_ns.as_mut()?.min);

/// A point's metrics from its completed visits: rates and per-request figures averaged,
/// counts summed, peaks the largest, the minimum latency the smallest.
fn fold_metrics(m: &mut ServersMetrics, done: &[&ServersView]) {
    for slot in MEANS {
        let v = values(done, slot);
        set(
            m,
            slot,
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64),
        );
    }
    for slot in SUMS {
        set(m, slot, Some(values(done, slot).iter().sum()));
    }
    for slot in PEAKS {
        set(m, slot, values(done, slot).into_iter().reduce(f64::max));
    }
    let min = values(done, MIN_LATENCY).into_iter().reduce(f64::min);
    set(m, MIN_LATENCY, min);
    // Limited by the load generator at any visit: the point's figures may be the clients'.
    if let Some(client) = m.client.as_mut() {
        client.load_limited = Some(done.iter().any(|r| r.load_limited().is_some()));
    }
}

fn values(done: &[&ServersView], slot: Slot) -> Vec<f64> {
    done.iter()
        .filter_map(|r| {
            let mut metrics = r.metrics.clone()?;
            *slot(&mut metrics)?
        })
        .collect()
}

/// Sets the figure at `slot` (whose block must be there) to `v`.
fn set(m: &mut ServersMetrics, slot: Slot, v: Option<f64>) {
    if let (Some(figure), Some(v)) = (slot(m), v) {
        *figure = Some(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn view(record: Value) -> ServersView {
        serde_json::from_value(record).unwrap()
    }

    fn visit(model: &str, clients: u64, round: usize, rps: f64, status: &str) -> ServersView {
        view(json!({
            "config": {"model": model, "clients": clients},
            "status": status, "errors": [],
            "sweep_point": {"index": if model == "epoll" { 0 } else { 1 }},
            "visit": {"round": round},
            "metrics": {"requests": 10, "requests_per_s": rps,
                        "latency_ns": {"min": 100 + round, "p99": rps / 10.0, "max": 1000 * round},
                        "server": {"threads": round + 1, "cpu_per_request_ns": rps}},
        }))
    }

    fn metrics(p: &ServersView) -> &ServersMetrics {
        p.metrics.as_ref().unwrap()
    }

    #[test]
    fn visits_fold_into_one_record_per_point_in_the_matrix_order() {
        let records = [
            visit("select", 5, 0, 100.0, "completed"),
            visit("epoll", 5, 0, 300.0, "completed"),
            visit("epoll", 5, 1, 500.0, "completed"),
            visit("select", 5, 1, 200.0, "failed"),
        ];
        let p = points(&records);
        assert_eq!(p.len(), 2);
        assert_eq!(point_of(&p[0]).0, "epoll", "index 0 first");
        let m = metrics(&p[0]);
        assert_eq!(m.requests_per_s, Some(400.0));
        assert_eq!(m.requests, Some(20.0));
        let latency = m.latency_ns.unwrap();
        assert_eq!((latency.min, latency.max), (Some(100.0), Some(1000.0)));
        assert_eq!(m.server.as_ref().unwrap().threads, Some(2.0));
        assert_eq!(p[0].visits.unwrap().count, 2);
        assert_eq!(p[1].status(), "failed", "a failed visit marks its point");
        assert_eq!(
            metrics(&p[1]).requests_per_s,
            Some(100.0),
            "from the completed visit"
        );
    }

    #[test]
    fn a_disturbed_visit_made_again_gives_way_to_its_redo() {
        let disturb = |mut r: ServersView| {
            r.visit.as_mut().unwrap().interference = Some(Disturbance {
                disturbed: Some(true),
            });
            r
        };
        let disturbed = disturb(visit("epoll", 5, 0, 900.0, "completed"));
        let last_round = disturb(visit("epoll", 5, 1, 700.0, "completed"));
        let records = [
            disturbed,
            visit("epoll", 5, 0, 300.0, "completed"),
            visit("epoll", 5, 1, 500.0, "completed"),
            last_round,
        ];
        let p = points(&records);
        // Round 0's disturbed 900 gives way to its redo (300); round 1's disturbed redo has
        // no later visit in its round, so the earlier quiet 500 stays beside it.
        assert_eq!(p[0].visits.unwrap().count, 3);
        assert_eq!(metrics(&p[0]).requests_per_s, Some(500.0));
    }

    #[test]
    fn the_profiled_visit_gives_its_point_the_profile() {
        let mut last = visit("epoll", 5, 1, 500.0, "completed");
        last.profile = Some(Profile::Unavailable {
            reason: "sampled elsewhere".into(),
        });
        last.profiled_window = Some("after the last round's visit".into());
        let p = points(&[visit("epoll", 5, 0, 300.0, "completed"), last.clone()]);
        assert_eq!(p[0].profile, last.profile);
        assert_eq!(
            p[0].profiled_window.as_deref(),
            Some("after the last round's visit")
        );
        let unprofiled = points(&[visit("epoll", 5, 0, 300.0, "completed")]);
        assert!(unprofiled[0].profile.is_none());
    }

    #[test]
    fn a_point_is_load_limited_when_any_visit_was() {
        let busy = |share: f64, mark: Option<bool>| {
            let mut r = visit("epoll", 5, 0, 300.0, "completed");
            r.metrics.as_mut().unwrap().client = Some(ClientFigures {
                cpu_share_per_thread: Some(share),
                load_limited: mark,
            });
            r
        };
        assert_eq!(busy(0.97, Some(true)).load_limited(), Some(0.97));
        assert_eq!(busy(0.5, Some(false)).load_limited(), None);
        assert_eq!(
            busy(0.95, None).load_limited(),
            Some(0.95),
            "a record from before the mark: its share decides"
        );
        let mut second = busy(0.97, Some(true));
        second.visit.as_mut().unwrap().round = Some(1);
        let p = points(&[busy(0.5, Some(false)), second]);
        let client = metrics(&p[0]).client.unwrap();
        assert_eq!(client.load_limited, Some(true));
        let share = p[0].load_limited().expect("marked");
        assert!((share - 0.735).abs() < 1e-9, "the mean share: {share}");
    }

    #[test]
    fn a_record_from_before_visits_passes_through() {
        let mut old = visit("epoll", 5, 0, 300.0, "completed");
        old.visit = None;
        assert_eq!(points(std::slice::from_ref(&old)), vec![old]);
    }
}
