//! Run records as OpenMetrics samples: a sample per point, side and figure, with the crr
//! (`crr`), `--bidir` (`bidir`), TCP_INFO (`tcp`, per flow and side) and `--under-load`
//! (`under_load`) blocks where a record has them. A sweep's and an ipc
//! study's folders hold one record per point (`samples`); a mesh's records are visits, which
//! it averages per pair and point before handing them to `run_samples` with its labels.
mod bidir;
mod crr;
mod tcp;
mod under_load;

use super::families::{CPU_PER_BYTE, LATENCY_P50, LATENCY_P99, THROUGHPUT};
use super::point::{labels, latest_per_point, text, typed, PointRecord};
use super::{Family, Sample};
use crate::error::Error;
use crate::record::view::{RunView, SideView};
use crate::record::ResultsFile;
use std::path::Path;

const MESSAGES: Family = Family {
    name: "messages",
    unit: "per_second",
    help: "Messages (round trips for rr) per second on this side",
};

impl PointRecord for RunView {
    fn completed(&self) -> bool {
        RunView::completed(self)
    }
    fn key(&self) -> Option<&str> {
        RunView::key(self)
    }
}

/// The samples of a folder of run records, one per point (a sweep's, an ipc study's): each
/// point's last completed record.
pub fn samples(dir: &Path, file: &ResultsFile) -> Result<Vec<Sample>, Error> {
    let records: Vec<RunView> = typed(dir, file)?;
    Ok(run_samples(&latest_per_point(&records), &[]))
}

/// The run labels of a run record's configuration.
fn run_labels(record: &RunView) -> Vec<(&'static str, String)> {
    let c = record.config();
    let mut out = vec![
        ("mechanism", text(&c.mechanism)),
        ("transport", text(&c.transport)),
        ("pattern", text(&c.pattern)),
        ("size", text(&c.message_size_bytes)),
        ("flows", text(&c.threads)),
        (
            "placement",
            text(&c.network.as_ref().and_then(|n| n.placement.clone())),
        ),
    ];
    // A --bidir point beside its one-way twin in one sweep: the label keeps their series apart.
    if record.bidir.is_some() {
        out.push(("bidir", "true".to_string()));
    }
    out
}

/// `run_labels`, and where any of `records` ran beside `--under-load`'s flows, how many (0 for
/// a twin without them): every sample of a family then has the same label names, and a loaded
/// point's series stay apart from its twin's.
fn point_labels(records: &[RunView], record: &RunView) -> Vec<(&'static str, String)> {
    let mut out = run_labels(record);
    if records.iter().any(|r| r.under_load.is_some()) {
        let flows = record.under_load.as_ref().map_or(0, |l| l.flows);
        out.push(("under_load_flows", flows.to_string()));
    }
    out
}

/// A side's figure, and the scale that makes it the family's unit.
type SideFigure = (Family, fn(&SideView) -> Option<f64>, f64);

/// The per-side figures every run record has.
const SIDE_FIGURES: [SideFigure; 5] = [
    (THROUGHPUT, |s| s.throughput_gbps, 1.0),
    (MESSAGES, |s| s.messages_per_s, 1.0),
    (CPU_PER_BYTE, |s| s.cpu_ns_per_byte, 1.0),
    (LATENCY_P50, |s| s.latency_ns?.p50, 1e-9),
    (LATENCY_P99, |s| s.latency_ns?.p99, 1e-9),
];

/// Run records (one per point): a sample per side and figure. `extra` labels go first (the
/// mesh's src and dst).
pub fn run_samples(records: &[RunView], extra: &[(&'static str, String)]) -> Vec<Sample> {
    let mut out = Vec::new();
    for (family, figure, scale) in SIDE_FIGURES {
        for r in records {
            for side in r.sides.iter().flatten() {
                let Some(v) = figure(side) else {
                    continue;
                };
                let mut pairs: Vec<(&str, String)> = extra.to_vec();
                pairs.extend(point_labels(records, r));
                pairs.push(("side", text(&side.side)));
                out.push(Sample {
                    family,
                    labels: labels(&pairs),
                    value: v * scale,
                });
            }
        }
    }
    out.extend(crr::samples(records, extra));
    out.extend(bidir::samples(records, extra));
    out.extend(tcp::samples(records, extra));
    out.extend(under_load::samples(records, extra));
    out
}
