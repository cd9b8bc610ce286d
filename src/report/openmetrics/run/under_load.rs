//! `--under-load` as OpenMetrics families: the load's achieved throughput beside each loaded
//! point, and the rr client's latency p50 and p99 under the load over its twin's without it
//! (the two point records' figures, each the median over the point's visits). The paired
//! per-round interval and its verdict are the report's answer, not a gauge.
use super::point_labels;
use crate::record::view::RunView;
use crate::report::openmetrics::point::labels;
use crate::report::openmetrics::{Family, Sample};

const LOAD: Family = Family {
    name: "under_load_load_throughput",
    unit: "gbit_per_second",
    help: "Payload the --under-load flows received whole per second beside the measured rr flow, in 10^9 bits",
};
const P50_RATIO: Family = Family {
    name: "under_load_latency_p50",
    unit: "ratio",
    help: "The rr client's latency p50 beside the --under-load flows over its twin point's without them",
};
const P99_RATIO: Family = Family {
    name: "under_load_latency_p99",
    unit: "ratio",
    help: "The rr client's latency p99 beside the --under-load flows over its twin point's without them",
};

/// The point without load that `loaded` pairs with: same point and receive path, no load.
fn twin<'a>(loaded: &RunView, records: &'a [RunView]) -> Option<&'a RunView> {
    let (c, placement) = (loaded.config(), |r: &RunView| {
        r.config()
            .network
            .as_ref()
            .and_then(|n| n.placement.clone())
    });
    records.iter().find(|r| {
        r.under_load.is_none()
            && r.bidir.is_none()
            && r.config().point_key() == c.point_key()
            && r.config().recv == c.recv
            && placement(r) == placement(loaded)
    })
}

/// The client's (first side's) latency percentile of a record.
fn client(r: &RunView, p99: bool) -> Option<f64> {
    let l = r.side(0)?.latency_ns.as_ref()?;
    if p99 {
        l.p99
    } else {
        l.p50
    }
}

/// The under-load samples of `records` (none without `--under-load`).
pub fn samples(records: &[RunView], extra: &[(&'static str, String)]) -> Vec<Sample> {
    let mut out = Vec::new();
    let point = |r: &RunView| {
        let mut pairs: Vec<(&str, String)> = extra.to_vec();
        pairs.extend(point_labels(records, r));
        labels(&pairs)
    };
    for r in records {
        if let Some(load) = &r.under_load {
            out.push(Sample {
                family: LOAD,
                labels: point(r),
                value: load.gbps,
            });
        }
    }
    for (family, p99) in [(P50_RATIO, false), (P99_RATIO, true)] {
        for r in records.iter().filter(|r| r.under_load.is_some()) {
            let Some(without) = twin(r, records).and_then(|t| client(t, p99)) else {
                continue;
            };
            let Some(with) = client(r, p99).filter(|_| without > 0.0) else {
                continue;
            };
            out.push(Sample {
                family,
                labels: point(r),
                value: with / without,
            });
        }
    }
    out
}
