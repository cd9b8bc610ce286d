//! The `under_load` block of a run record (`--under-load N`): what load ran beside the
//! measured rr flow, and what it achieved, so a reader knows the load was real. For a visited
//! point the block sums its headline visits (`combine`).
use crate::config::under_load::placement_words;
use crate::config::{FlowPlacement, RunSpec};
use crate::engine::RunOutcome;
use serde::{Deserialize, Serialize};

/// What the achieved throughput is over, stated in the block.
const OVER: &str = "payload received whole by the load's receivers over the load's whole run \
     (started before the rr flow connected, stopped after its sides were joined); for a point \
     measured in visits, bytes and seconds are summed and Gbit/s is the mean over visits";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnderLoadReport {
    /// Load flows (`--under-load N`), each a tcp stream with a sending and a receiving thread.
    pub flows: usize,
    /// The load's send mechanism: the measured rr flow's own.
    pub mechanism: String,
    pub pattern: String,
    pub message_size_bytes: usize,
    /// Where the load threads ran, in words, and per load flow its two threads' CPUs.
    pub placement: String,
    pub flow_placement: Vec<FlowPlacement>,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    pub load_s: f64,
    /// The load's achieved throughput (`gbps_definition`).
    pub gbps: f64,
    pub gbps_definition: String,
    /// `run --under-load`: the rr latency without and with the load in the same run, visit by
    /// visit, and their paired ratios; absent from a sweep's points (the sweep pairs its
    /// points instead) and from records older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedRun>,
}

/// The block of a run with `--under-load`; `None` without.
pub fn report(spec: &RunSpec, outcome: &RunOutcome) -> Option<UnderLoadReport> {
    let load = outcome.load.as_ref()?;
    let secs = load.elapsed.as_secs_f64();
    Some(UnderLoadReport {
        flows: load.flows,
        mechanism: spec.mechanism.name().into(),
        pattern: "stream".into(),
        message_size_bytes: load.message_size,
        placement: placement_words(spec),
        flow_placement: load.placement.clone(),
        sent_bytes: load.sent_bytes,
        received_bytes: load.received_bytes,
        load_s: secs,
        gbps: match secs > 0.0 {
            true => load.received_bytes as f64 * 8.0 / secs / 1e9,
            false => 0.0,
        },
        gbps_definition: OVER.into(),
        paired: None,
    })
}

/// The run's errors from its load: a load thread's failure, or a load that moved nothing (the
/// rr figure would then not be one under load).
pub fn errors(outcome: &RunOutcome) -> Vec<String> {
    let Some(load) = &outcome.load else {
        return Vec::new();
    };
    let mut errors = load.errors.clone();
    if load.received_bytes == 0 && outcome.not_run.is_none() && !outcome.interrupted {
        errors.push(format!(
            "--under-load {}: the load flows moved no bytes, so the rr figures are not under load",
            load.flows
        ));
    }
    errors
}

/// A visited point's block from its headline visits' blocks: bytes and seconds summed, Gbit/s
/// the mean of the visits' (as the point's rates are); `None` when no visit had a load.
pub fn combine(visits: &[&super::RunRecord]) -> Option<UnderLoadReport> {
    let blocks: Vec<&UnderLoadReport> = visits
        .iter()
        .filter_map(|r| r.under_load.as_ref())
        .collect();
    let first = (*blocks.first()?).clone();
    let n = blocks.len() as f64;
    Some(UnderLoadReport {
        sent_bytes: blocks.iter().map(|b| b.sent_bytes).sum(),
        received_bytes: blocks.iter().map(|b| b.received_bytes).sum(),
        load_s: blocks.iter().map(|b| b.load_s).sum(),
        gbps: blocks.iter().map(|b| b.gbps).sum::<f64>() / n,
        ..first
    })
}

/// `run --under-load`: rounds of one visit without the load and one with it, back to back,
/// and the rr client's latency with the load over without, paired by round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedRun {
    /// Rounds, each a visit without the load and a visit with it (`run` has no --rounds).
    pub rounds: usize,
    /// How the run was laid out in visits: their order and how the duration was split.
    pub design: String,
    /// Each visit's measured phase and the warm-up before it (s).
    pub visit_s: f64,
    pub warmup_s: f64,
    /// Every round's two visits, in round order.
    pub pairs: Vec<RoundPair>,
    /// The median over visits of each visit's p50 and p99, without and with the load.
    pub unloaded: LatencyOverVisits,
    pub loaded: LatencyOverVisits,
    /// The loaded visits' p50 and p99 over the unloaded visits', paired by round.
    pub ratios: Vec<LatencyRatio>,
    /// The equivalence margin of the verdicts (a share).
    pub margin: f64,
    /// What the ratios and verdicts rest on.
    pub basis: String,
}

/// One round: its visit without the load and its visit with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundPair {
    pub round: usize,
    /// The visit that ran first in this round: "unloaded" or "loaded".
    pub first: String,
    pub unloaded: PairedVisit,
    pub loaded: PairedVisit,
}

/// One visit of a paired run: the rr client's latency in it and, with the load, what the
/// load moved meanwhile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedVisit {
    /// "completed", "failed", "interrupted", or "not run" (the run stopped before it).
    pub status: String,
    /// The rr client's p50 and p99 in this visit; null where it measured none (reason beside).
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    /// The chosen percentiles (`--percentiles`) of this visit's rr client latency.
    #[serde(default)]
    pub latency_percentiles_ns: Vec<crate::measure::percentiles::PercentileValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_unavailable_reason: Option<String>,
    /// What the load moved during this visit; null for the visit without the load.
    pub load: Option<VisitLoad>,
}

/// What the load flows moved during one visit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VisitLoad {
    pub sent_bytes: u64,
    pub received_bytes: u64,
    pub load_s: f64,
    pub gbps: f64,
}

impl VisitLoad {
    /// The visit's load from its record's block.
    pub fn of(block: &UnderLoadReport) -> VisitLoad {
        VisitLoad {
            sent_bytes: block.sent_bytes,
            received_bytes: block.received_bytes,
            load_s: block.load_s,
            gbps: block.gbps,
        }
    }
}

/// The median over a paired run's completed visits of one kind, of each visit's percentile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyOverVisits {
    pub visits: usize,
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
}

/// One paired ratio of a run: the loaded over the unloaded visits' percentile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRatio {
    /// "p50" or "p99".
    pub percentile: String,
    /// The ratio and its interval at `confidence` (the level its test used); null where there
    /// is none (`unavailable_reason`).
    pub ratio: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub confidence: Option<f64>,
    /// Rounds paired (both visits with a figure).
    pub pairs: usize,
    /// "raises", "lowers", "equivalent within ±M" or "undecided".
    pub verdict: String,
    /// The ratio, its interval and its state in words.
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(bytes: u64, secs: f64) -> UnderLoadReport {
        UnderLoadReport {
            flows: 2,
            mechanism: "send".into(),
            pattern: "stream".into(),
            message_size_bytes: 65536,
            placement: "unpinned".into(),
            flow_placement: Vec::new(),
            sent_bytes: bytes,
            received_bytes: bytes,
            load_s: secs,
            gbps: bytes as f64 * 8.0 / secs / 1e9,
            gbps_definition: OVER.into(),
            paired: None,
        }
    }

    /// `combine` over visits that carry `blocks`.
    fn of(blocks: &[UnderLoadReport]) -> Option<UnderLoadReport> {
        let visits: Vec<super::super::RunRecord> = blocks
            .iter()
            .map(|b| {
                let spec = RunSpec::plain(64, std::time::Duration::from_millis(300));
                let outcome = RunOutcome::not_run(&spec, String::new());
                let env = crate::environment::Environment::detect(&[0]);
                let mut r = crate::record::build(&spec, &outcome, env);
                r.under_load = Some(b.clone());
                r
            })
            .collect();
        combine(&visits.iter().collect::<Vec<_>>())
    }

    #[test]
    fn a_points_load_sums_its_visits_and_averages_their_rates() {
        let (a, b) = (block(1_000_000_000, 1.0), block(3_000_000_000, 1.0));
        let c = of(&[a, b]).unwrap();
        assert_eq!((c.received_bytes, c.load_s), (4_000_000_000, 2.0));
        assert!((c.gbps - 16.0).abs() < 1e-9);
        assert_eq!(of(&[]), None);
    }
}
