//! The `bidir` block of run records (`--bidir`) as OpenMetrics families: Gbit/s received whole
//! and bytes sent and received, per direction, and the two directions' sum.
use super::openmetrics::{Family, Sample};
use super::{labels, run_labels};
use serde_json::Value;

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
pub fn samples(records: &[Value], extra: &[(&'static str, String)]) -> Vec<Sample> {
    let figures: [(Family, &str, &str); 7] = [
        (THROUGHPUT, "forward", "forward_gbps"),
        (THROUGHPUT, "reverse", "reverse_gbps"),
        (THROUGHPUT, "sum", "sum_gbps"),
        (SENT, "forward", "forward_sent_bytes"),
        (SENT, "reverse", "reverse_sent_bytes"),
        (RECEIVED, "forward", "forward_received_bytes"),
        (RECEIVED, "reverse", "reverse_received_bytes"),
    ];
    let mut out = Vec::new();
    for (family, direction, key) in figures {
        for r in records.iter().filter(|r| r["bidir"].is_object()) {
            let Some(value) = r["bidir"][key].as_f64() else {
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
