//! The `crr` block of run records as OpenMetrics families: the split of a transaction, each
//! side's CPU and context switches per transaction, and the client's TIME_WAIT at the end.
use super::run_labels;
use crate::record::crr::CrrReport;
use crate::record::view::RunView;
use crate::report::openmetrics::point::labels;
use crate::report::openmetrics::{Family, Sample};

/// A figure of a crr block.
type Figure = fn(&CrrReport) -> Option<f64>;

const SPLIT: [(Family, Figure); 4] = [
    (
        Family {
            name: "crr_connect",
            unit: "seconds",
            help: "Mean time of a crr transaction until connect returned, on the client",
        },
        |c| c.connect_us_mean,
    ),
    (
        Family {
            name: "crr_first_byte",
            unit: "seconds",
            help: "Mean time of a crr transaction from connected until the first response bytes were read",
        },
        |c| c.first_byte_us_mean,
    ),
    (
        Family {
            name: "crr_response",
            unit: "seconds",
            help: "Mean time of a crr transaction from connected until the whole response was read",
        },
        |c| c.response_us_mean,
    ),
    (
        Family {
            name: "crr_close",
            unit: "seconds",
            help: "Mean time of a crr transaction's close and the bookkeeping after it",
        },
        |c| c.close_us_mean,
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
pub fn samples(records: &[RunView], extra: &[(&'static str, String)]) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut push = |r: &RunView, family, side: &str, value: Option<f64>| {
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
    let crr_records: Vec<(&RunView, &CrrReport)> = records
        .iter()
        .filter_map(|r| Some((r, r.crr.as_ref()?)))
        .collect();
    for (family, figure) in SPLIT {
        for (r, crr) in &crr_records {
            push(r, family, "client", figure(crr).map(|us| us * 1e-6));
        }
    }
    let per_side: [(Family, [Figure; 2], f64); 2] = [
        (
            CPU_PER_TRANSACTION,
            [
                |c| c.client_cpu_us_per_transaction,
                |c| c.server_cpu_us_per_transaction,
            ],
            1e-6,
        ),
        (
            SWITCHES_PER_TRANSACTION,
            [
                |c| c.client_context_switches_per_transaction,
                |c| c.server_context_switches_per_transaction,
            ],
            1.0,
        ),
    ];
    for (family, sides, scale) in per_side {
        for (r, crr) in &crr_records {
            for (side, figure) in ["client", "server"].into_iter().zip(sides) {
                push(r, family, side, figure(crr).map(|v| v * scale));
            }
        }
    }
    for (r, crr) in &crr_records {
        let time_wait = crr.time_wait_at_end.map(|n| n as f64);
        push(r, TIME_WAIT, "client", time_wait);
    }
    out
}
