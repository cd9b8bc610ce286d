//! A servers folder as OpenMetrics samples: its records are visits, folded into one per point
//! as its report does (`visits::points`); requests/s and latency on the client (load
//! generator) side, CPU per request on the server side.
use super::visits::{points, ServersView};
use crate::error::Error;
use crate::record::ResultsFile;
use crate::report::openmetrics::families::{LATENCY_P50, LATENCY_P99};
use crate::report::openmetrics::point::{labels, latest_per_point, text, typed, PointRecord};
use crate::report::openmetrics::{Family, Sample};
use std::path::Path;

const REQUESTS: Family = Family {
    name: "requests",
    unit: "per_second",
    help: "Requests echoed per second, as the load generator counted them",
};
const CPU_PER_REQUEST: Family = Family {
    name: "cpu_per_request",
    unit: "seconds",
    help: "CPU time of the server process per request",
};

impl PointRecord for ServersView {
    fn completed(&self) -> bool {
        ServersView::completed(self)
    }
    fn key(&self) -> Option<&str> {
        self.sweep_point.as_ref()?.key.as_deref()
    }
}

/// The samples of the servers folder `dir`, whose records (visits) `file` holds.
pub fn samples(dir: &Path, file: &ResultsFile) -> Result<Vec<Sample>, Error> {
    let visits: Vec<ServersView> = typed(dir, file)?;
    Ok(servers_samples(&latest_per_point(&points(&visits))))
}

/// A figure of a servers point: the side it is measured on, and where it sits.
type ServersFigure = (Family, &'static str, fn(&ServersView) -> Option<f64>, f64);

/// Servers records: requests/s and latency on the client (load generator) side, CPU per
/// request on the server side.
fn servers_samples(records: &[ServersView]) -> Vec<Sample> {
    let figures: [ServersFigure; 4] = [
        (
            REQUESTS,
            "client",
            |r| r.metrics.as_ref()?.requests_per_s,
            1.0,
        ),
        (
            LATENCY_P50,
            "client",
            |r| r.metrics.as_ref()?.latency_ns?.p50,
            1e-9,
        ),
        (
            LATENCY_P99,
            "client",
            |r| r.metrics.as_ref()?.latency_ns?.p99,
            1e-9,
        ),
        (
            CPU_PER_REQUEST,
            "server",
            |r| r.server()?.cpu_per_request_ns,
            1e-9,
        ),
    ];
    let mut out = Vec::new();
    for (family, side, figure, scale) in figures {
        for r in records {
            let Some(v) = figure(r) else {
                continue;
            };
            let c = r.config();
            let pairs = [
                ("mechanism", text(&c.model)),
                ("transport", "tcp".to_string()),
                ("pattern", "rr".to_string()),
                ("size", text(&c.size_bytes)),
                ("flows", text(&c.clients)),
                (
                    "placement",
                    text(&c.network.as_ref().and_then(|n| n.placement.clone())),
                ),
                ("side", side.to_string()),
            ];
            out.push(Sample {
                family,
                labels: labels(&pairs),
                value: v * scale,
            });
        }
    }
    out
}
