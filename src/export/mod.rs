//! `bytepath export DIR --format openmetrics|csv|json`: the records of any results folder
//! (sweep, ipc, file, servers, mesh) in a format other tools read. The folder is read as
//! `bytepath report` reads it (its marker's kind, then its records through `record` and the
//! study's own loading); the figures are the ones the records hold, never recomputed, except
//! where a study's records are its visits (file repetitions, servers and mesh visits): those
//! are averaged per point as the study's report does.
mod bidir;
mod crr;
pub(crate) mod openmetrics;

use crate::error::{ConfigError, Error};
use crate::record::view::{RunView, SideView};
use crate::report::study_kind::StudyKind;
use crate::report::{csv, study};
use crate::servers::visits::ServersView;
use openmetrics::{Family, Sample};
use serde_json::Value;
use std::path::Path;

/// What `--format` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    Csv,
    Json,
}

impl std::str::FromStr for Format {
    type Err = ConfigError;
    fn from_str(text: &str) -> Result<Format, ConfigError> {
        match text {
            "openmetrics" => Ok(Format::OpenMetrics),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            other => Err(ConfigError(format!(
                "--format {other}: not a format export writes; allowed: openmetrics, csv, json"
            ))),
        }
    }
}

/// Which study wrote a folder, as its marker says; a kind this bytepath does not know is
/// read as run records, one per point, as sweep and ipc write them.
fn kind_of(dir: &Path) -> Result<StudyKind, Error> {
    let kind = study::kind(dir).ok_or_else(|| {
        ConfigError(format!(
            "{}: not a bytepath results folder (no readable {}); give a folder written by sweep, ipc, file, servers or mesh",
            dir.display(),
            crate::report::folder::MARKER
        ))
    })?;
    Ok(StudyKind::from_marker(&kind).unwrap_or(StudyKind::Sweep))
}

/// The folder's records in `format`.
pub fn export(dir: &Path, format: Format) -> Result<String, Error> {
    let kind = kind_of(dir)?;
    let file = crate::record::read_results_file(dir)?;
    // JSON and CSV pass each record through as written; OpenMetrics reads its figures.
    Ok(match format {
        Format::Json => file
            .lines
            .iter()
            .map(|l| format!("{}\n", l.record))
            .collect(),
        Format::Csv => {
            let columns = match kind {
                StudyKind::Sweep | StudyKind::Ipc => csv::columns(),
                StudyKind::File => crate::file::record::csv_columns(),
                StudyKind::Servers => crate::servers::record::csv_columns(),
                StudyKind::Mesh => crate::mesh::columns(),
            };
            let records: Vec<Value> = file.lines.into_iter().map(|l| l.record).collect();
            csv::to_csv_with(&columns, &records)
        }
        Format::OpenMetrics => openmetrics::render(&match kind {
            StudyKind::Sweep | StudyKind::Ipc => {
                let records: Vec<RunView> = typed(dir, &file)?;
                run_samples(&latest_per_point(&records), &[])
            }
            StudyKind::Mesh => mesh_samples(&typed(dir, &file)?),
            // A servers study's records are visits: folded into one per point, as its report does.
            StudyKind::Servers => {
                let visits: Vec<ServersView> = typed(dir, &file)?;
                servers_samples(&latest_per_point(&crate::servers::visits::points(&visits)))
            }
            StudyKind::File => file_samples(dir)?,
        }),
    })
}

/// The records of `file` (the folder's results.jsonl) read as `T`.
fn typed<T: serde::de::DeserializeOwned>(
    dir: &Path,
    file: &crate::record::ResultsFile,
) -> Result<Vec<T>, Error> {
    let path = dir.join(crate::report::folder::RESULTS_JSONL);
    file.lines
        .iter()
        .map(|l| l.typed(&path).map_err(Error::from))
        .collect()
}

const THROUGHPUT: Family = Family {
    name: "throughput",
    unit: "gbit_per_second",
    help: "Payload moved per second by this side, in 10^9 bits (received whole, for the receiving side)",
};
const MESSAGES: Family = Family {
    name: "messages",
    unit: "per_second",
    help: "Messages (round trips for rr) per second on this side",
};
const CPU_PER_BYTE: Family = Family {
    name: "cpu",
    unit: "nanoseconds_per_byte",
    help: "CPU time (user and system) of this side per payload byte",
};
const LATENCY_P50: Family = Family {
    name: "latency_p50",
    unit: "seconds",
    help: "Median latency on this side, as the record defines it for the pattern",
};
const LATENCY_P99: Family = Family {
    name: "latency_p99",
    unit: "seconds",
    help: "99th percentile latency on this side, as the record defines it for the pattern",
};
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
const TRANSFER_TIME: Family = Family {
    name: "transfer_time",
    unit: "seconds",
    help: "Mean time to receive the whole file, over the repetitions",
};

/// The point's labels: what varies between points of any study.
fn labels(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// A record's field as a label value: text as it is, a number as written, empty where the
/// record has none.
fn text<T: serde::Serialize>(v: &Option<T>) -> String {
    match serde_json::to_value(v).expect("a record's field serializes") {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What every kind of record says about its point, for `latest_per_point`.
trait PointRecord: Clone {
    fn completed(&self) -> bool;
    fn key(&self) -> Option<&str>;
}

impl PointRecord for RunView {
    fn completed(&self) -> bool {
        RunView::completed(self)
    }
    fn key(&self) -> Option<&str> {
        RunView::key(self)
    }
}

impl PointRecord for ServersView {
    fn completed(&self) -> bool {
        ServersView::completed(self)
    }
    fn key(&self) -> Option<&str> {
        self.sweep_point.as_ref()?.key.as_deref()
    }
}

/// The last completed record of each point (a sweep's results may hold a failed record and,
/// after `--resume`, the same point completed), in the order first seen.
fn latest_per_point<R: PointRecord>(records: &[R]) -> Vec<R> {
    let mut out: Vec<(String, R)> = Vec::new();
    for r in records.iter().filter(|r| r.completed()) {
        let key = r.key().unwrap_or_default().to_string();
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = r.clone(),
            None => out.push((key, r.clone())),
        }
    }
    out.into_iter().map(|(_, r)| r).collect()
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
fn run_samples(records: &[RunView], extra: &[(&'static str, String)]) -> Vec<Sample> {
    let mut out = Vec::new();
    for (family, figure, scale) in SIDE_FIGURES {
        for r in records {
            for side in r.sides.iter().flatten() {
                let Some(v) = figure(side) else {
                    continue;
                };
                let mut pairs: Vec<(&str, String)> = extra.to_vec();
                pairs.extend(run_labels(r));
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
    out
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

/// File records are repetitions: the study's own summary per (size, mechanism), as its report
/// shows it.
fn file_samples(dir: &Path) -> Result<Vec<Sample>, Error> {
    let config: crate::file::record::FileConfig = study::marker_spec(dir)?.map_err(|e| {
        Error::Failed(format!(
            "{}: the marker holds no file study configuration ({e})",
            dir.display()
        ))
    })?;
    let transfers: Vec<crate::file::record::TransferRecord> = study::records(dir)?;
    let summaries = crate::file::record::summarize_transfers(
        &config.sizes_bytes,
        &config.mechanisms,
        &config.caches(),
        &transfers,
    );
    let placement = text(&Some(&config.network.placement));
    let mut out = Vec::new();
    type Pick = fn(&crate::file::record::FileSummary) -> Option<f64>;
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
