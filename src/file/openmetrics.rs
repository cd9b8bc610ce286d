//! A file study's folder as OpenMetrics samples: its records are repetitions, so the samples
//! are the study's own summary per (size, mechanism), as its report shows it.
use super::record::{summarize_transfers, FileConfig, FileSummary, TransferRecord};
use crate::error::Error;
use crate::record::ResultsFile;
use crate::report::openmetrics::families::{CPU_PER_BYTE, THROUGHPUT};
use crate::report::openmetrics::point::{labels, text};
use crate::report::openmetrics::{Family, Sample};
use crate::report::study;
use std::path::Path;

const TRANSFER_TIME: Family = Family {
    name: "transfer_time",
    unit: "seconds",
    help: "Mean time to receive the whole file, over the repetitions",
};

/// The samples of the file study folder `dir`, from its marker's configuration and its
/// transfers, read as its report reads them (`_file`, the records as `export` read them, is
/// not needed past their schema check).
pub fn samples(dir: &Path, _file: &ResultsFile) -> Result<Vec<Sample>, Error> {
    let config: FileConfig = study::marker_spec(dir)?.map_err(|e| {
        Error::Failed(format!(
            "{}: the marker holds no file study configuration ({e})",
            dir.display()
        ))
    })?;
    let transfers: Vec<TransferRecord> = study::records(dir)?;
    let summaries = summarize_transfers(
        &config.sizes_bytes,
        &config.mechanisms,
        &config.caches(),
        &transfers,
    );
    let placement = text(&Some(&config.network.placement));
    let mut out = Vec::new();
    type Pick = fn(&FileSummary) -> Option<f64>;
    let figures: [(Family, &str, Pick, f64); 3] = [
        (
            THROUGHPUT,
            "client",
            |s| s.throughput_gbps.map(|f| f.mean),
            1.0,
        ),
        (TRANSFER_TIME, "client", |s| s.time_ms.map(|f| f.mean), 1e-3),
        (
            CPU_PER_BYTE,
            "server",
            |s| s.server_cpu_ns_per_byte.map(|f| f.mean),
            1.0,
        ),
    ];
    for (family, side, pick, scale) in figures {
        for s in &summaries {
            let Some(v) = pick(s) else { continue };
            let mut pairs = vec![
                ("mechanism", text(&Some(s.mechanism))),
                ("transport", "tcp".to_string()),
                ("pattern", "stream".to_string()),
                ("size", s.size_bytes.to_string()),
                ("flows", "1".to_string()),
                ("placement", placement.clone()),
                ("side", side.to_string()),
            ];
            // Only a study of both caches has two points per (size, mechanism).
            if let Some(cache) = &s.cache {
                pairs.push(("cache", cache.clone()));
            }
            out.push(Sample {
                family,
                labels: labels(&pairs),
                value: v * scale,
            });
        }
    }
    Ok(out)
}
