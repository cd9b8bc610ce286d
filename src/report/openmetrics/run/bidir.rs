//! The `bidir` block of run records (`--bidir`) as OpenMetrics families: Gbit/s received whole
//! and bytes sent and received, per direction, and the two directions' sum.
use super::run_labels;
use crate::record::view::{BidirView, RunView};
use crate::report::openmetrics::point::labels;
use crate::report::openmetrics::{Family, Sample};

const THROUGHPUT: Family = Family {
    name: "bidir_throughput",
    unit: "gbit_per_second",
    help: "Payload received whole per second in one direction of a --bidir run (direction=sum: both), in 10^9 bits",
};
const SENT: Family = Family {
    name: "bidir_sent",
    unit: "bytes",
    help: "Payload bytes sent in one direction of a --bidir run, all phases",
};
const RECEIVED: Family = Family {
    name: "bidir_received",
    unit: "bytes",
    help: "Payload bytes received in one direction of a --bidir run, all phases",
};

/// The bidir samples of `records` (none for one-way records).
pub fn samples(records: &[RunView], extra: &[(&'static str, String)]) -> Vec<Sample> {
    type Figure = (Family, &'static str, fn(&BidirView) -> Option<f64>);
    let figures: [Figure; 7] = [
        (THROUGHPUT, "forward", |b| b.forward_gbps),
        (THROUGHPUT, "reverse", |b| b.reverse_gbps),
        (THROUGHPUT, "sum", |b| b.sum_gbps),
        (SENT, "forward", |b| b.forward_sent_bytes),
        (SENT, "reverse", |b| b.reverse_sent_bytes),
        (RECEIVED, "forward", |b| b.forward_received_bytes),
        (RECEIVED, "reverse", |b| b.reverse_received_bytes),
    ];
    let mut out = Vec::new();
    for (family, direction, figure) in figures {
        for r in records {
            let Some(value) = r.bidir.as_ref().and_then(figure) else {
                continue;
            };
            let mut pairs: Vec<(&str, String)> = extra.to_vec();
            pairs.extend(run_labels(r));
            pairs.push(("direction", direction.to_string()));
            out.push(Sample {
                family,
                labels: labels(&pairs),
                value,
            });
        }
    }
    out
}
