//! A mesh folder as OpenMetrics samples: its records are visits, so per (src, dst, point) each
//! side's figures are averaged over the completed visits, as one run record, and given the
//! run-record samples with the pair's labels first.
use crate::error::Error;
use crate::record::view::{RunView, SideView};
use crate::record::ResultsFile;
use crate::report::openmetrics::point::{text, typed};
use crate::report::openmetrics::run::run_samples;
use crate::report::openmetrics::Sample;
use std::path::Path;

/// The samples of the mesh folder `dir`, whose records `file` holds.
pub fn samples(dir: &Path, file: &ResultsFile) -> Result<Vec<Sample>, Error> {
    Ok(mesh_samples(&typed(dir, file)?))
}

/// Mesh records are visits: per (src, dst, point), each side's figures averaged over the
/// completed visits, as one record.
fn mesh_samples(records: &[RunView]) -> Vec<Sample> {
    // (src, dst, the pair and point's key) and its visits. A mesh record's key starts with
    // its visit (`v2/a>b/send/stream/65536/1`): what follows names the pair and point.
    type Visits<'a> = ((String, String, String), Vec<&'a RunView>);
    let mut groups: Vec<Visits> = Vec::new();
    for r in records.iter().filter(|r| r.completed()) {
        let key = r.key().unwrap_or_default();
        let point = key.split_once('/').map_or(key, |(_, rest)| rest);
        let key = (text(&r.src), text(&r.dst), point.to_string());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, visits)) => visits.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    let mut out = Vec::new();
    for ((src, dst, _), visits) in groups {
        let mean = mean_of_visits(&visits);
        out.extend(run_samples(&[mean], &[("src", src), ("dst", dst)]));
    }
    // Family by family, as render lists them.
    out.sort_by_key(|s| s.family.name);
    out
}

/// Where a side's figure sits (`None` where its block is absent).
type SideSlot = fn(&mut SideView) -> Option<&mut Option<f64>>;

/// The first visit with each side's figures replaced by their mean over `visits`.
fn mean_of_visits(visits: &[&RunView]) -> RunView {
    let mut mean = visits[0].clone();
    let slots: [SideSlot; 5] = [
        |s| Some(&mut s.throughput_gbps),
        |s| Some(&mut s.messages_per_s),
        |s| Some(&mut s.cpu_ns_per_byte),
        |s| Some(&mut s.latency_ns.as_mut()?.p50),
        |s| Some(&mut s.latency_ns.as_mut()?.p99),
    ];
    for (i, side) in mean.sides.iter_mut().flatten().enumerate() {
        for slot in slots {
            let values: Vec<f64> = visits
                .iter()
                .filter_map(|v| {
                    let mut other = v.side(i)?.clone();
                    *slot(&mut other)?
                })
                .collect();
            if let Some(figure) = slot(side) {
                *figure =
                    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
            }
        }
    }
    mean
}
