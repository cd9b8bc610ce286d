//! The `crr` block of run records as OpenMetrics families: the split of a transaction, each
//! side's CPU and context switches per transaction, and the client's TIME_WAIT at the end.
use super::openmetrics::{Family, Sample};
use super::{labels, run_labels};
use serde_json::Value;

const SPLIT: [(Family, &str); 4] = [
    (
        Family {
            name: "crr_connect",
            unit: "seconds",
            help: "Mean time of a crr transaction until connect returned, on the client",
        },
        "/crr/connect_us_mean",
    ),
    (
        Family {
            name: "crr_first_byte",
            unit: "seconds",
            help: "Mean time of a crr transaction from connected until the first response bytes were read",
        },
        "/crr/first_byte_us_mean",
    ),
    (
        Family {
            name: "crr_response",
            unit: "seconds",
            help: "Mean time of a crr transaction from connected until the whole response was read",
        },
        "/crr/response_us_mean",
    ),
    (
        Family {
            name: "crr_close",
            unit: "seconds",
            help: "Mean time of a crr transaction's close and the bookkeeping after it",
        },
        "/crr/close_us_mean",
    ),
];
const CPU_PER_TRANSACTION: Family = Family {
    name: "cpu_per_transaction",
    unit: "seconds",
    help: "CPU time (user and system) of this side per crr transaction",
};
const SWITCHES_PER_TRANSACTION: Family = Family {
    name: "context_switches_per_transaction",
    unit: "ratio",
    help: "Context switches (voluntary and involuntary) of this side per crr transaction",
};
const TIME_WAIT: Family = Family {
    name: "time_wait_at_end",
    unit: "sockets",
    help: "Client sockets left in TIME_WAIT towards the crr listeners when the run ended",
};

/// The crr samples of `records` (none for records without a crr block).
pub fn samples(records: &[Value], extra: &[(&'static str, String)]) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut push = |r: &Value, family, side: &str, value: Option<f64>| {
        if let Some(value) = value {
            let mut pairs: Vec<(&str, String)> = extra.to_vec();
            pairs.extend(run_labels(r));
            pairs.push(("side", side.to_string()));
            out.push(Sample {
                family,
                labels: labels(&pairs),
                value,
            });
        }
    };
    let crr_records: Vec<&Value> = records.iter().filter(|r| r["crr"].is_object()).collect();
    let f = |r: &Value, pointer: &str| r.pointer(pointer).and_then(Value::as_f64);
    for (family, pointer) in SPLIT {
        for r in &crr_records {
            push(r, family, "client", f(r, pointer).map(|us| us * 1e-6));
        }
    }
    for (family, what, scale) in [
        (CPU_PER_TRANSACTION, "cpu_us_per_transaction", 1e-6),
        (
            SWITCHES_PER_TRANSACTION,
            "context_switches_per_transaction",
            1.0,
        ),
    ] {
        for r in &crr_records {
            for side in ["client", "server"] {
                let v = f(r, &format!("/crr/{side}_{what}")).map(|v| v * scale);
                push(r, family, side, v);
            }
        }
    }
    for r in &crr_records {
        push(r, TIME_WAIT, "client", f(r, "/crr/time_wait_at_end"));
    }
    out
}
