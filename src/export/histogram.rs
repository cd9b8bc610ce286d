//! `bytepath export DIR --histogram`: each point's whole latency distribution as files other
//! tools read, from the histogram its record keeps (nothing is measured again). Per point, in
//! `DIR/histograms/`, named by the point's key: `KEY.hlog`, HdrHistogram's interval log text
//! (one interval histogram per side, tagged `sender` or `receiver`, what HdrHistogram's log
//! readers and plotters take), and `KEY.csv`, its buckets (side, value_ns_low, value_ns_high,
//! count, cumulative_fraction). A point whose record kept no histogram is named, with why.
use crate::error::Error;
use crate::measure::histogram::LatencyHistogram;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The folder, under the results folder, the files go to.
pub const FOLDER: &str = "histograms";

/// What a point record gives the export: its key, when it was measured, each side's histogram.
#[derive(Deserialize)]
struct PointHistograms {
    #[serde(default)]
    sweep_point: Option<PointKey>,
    #[serde(default)]
    timestamp_unix_s: u64,
    #[serde(default)]
    measured_s: f64,
    #[serde(default)]
    sides: Vec<SideHistogram>,
}

#[derive(Deserialize)]
struct PointKey {
    key: String,
}

#[derive(Deserialize)]
struct SideHistogram {
    side: String,
    #[serde(default)]
    latency_histogram_hdr: Option<String>,
    #[serde(default)]
    latency_ns_unavailable_reason: Option<String>,
}

/// The files written, and each point that kept no histogram with why.
#[derive(Debug, Default)]
pub struct Written {
    pub files: Vec<PathBuf>,
    pub lacking: Vec<String>,
}

/// Writes every point's pair of files under `dir/histograms/`.
pub fn write(dir: &Path) -> Result<Written, Error> {
    let file = crate::record::read_results_file(dir)?;
    let out = dir.join(FOLDER);
    let mut written = Written::default();
    for (i, line) in file.lines.into_iter().enumerate() {
        let point: PointHistograms = serde_json::from_value(line.record)
            .map_err(|e| Error::Failed(format!("results.jsonl record {}: {e}", i + 1)))?;
        let key = point
            .sweep_point
            .as_ref()
            .map_or_else(|| format!("point-{i}"), |p| p.key.clone());
        let sides = histograms(&point);
        if sides.is_empty() {
            written.lacking.push(format!("{key}: {}", why_none(&point)));
            continue;
        }
        std::fs::create_dir_all(&out)
            .map_err(|e| Error::Failed(format!("{}: cannot create ({e})", out.display())))?;
        let name = file_name(&key);
        for (ext, text) in [("hlog", hlog(&key, &point, &sides)?), ("csv", csv(&sides))] {
            let path = out.join(format!("{name}.{ext}"));
            std::fs::write(&path, text)
                .map_err(|e| Error::Failed(format!("{}: cannot write ({e})", path.display())))?;
            written.files.push(path);
        }
    }
    Ok(written)
}

/// Each side that kept a histogram, read back.
fn histograms(point: &PointHistograms) -> Vec<(&str, LatencyHistogram)> {
    point
        .sides
        .iter()
        .filter_map(|s| {
            let h = LatencyHistogram::from_hdr_base64(s.latency_histogram_hdr.as_deref()?);
            Some((s.side.as_str(), h.ok()?))
        })
        .collect()
}

/// Why a point has no histogram: no side measured a latency, or its record predates them.
fn why_none(point: &PointHistograms) -> String {
    let unmeasured: Vec<String> = point
        .sides
        .iter()
        .filter_map(|s| {
            Some(format!(
                "{}: {}",
                s.side,
                s.latency_ns_unavailable_reason.as_ref()?
            ))
        })
        .collect();
    if !unmeasured.is_empty() && unmeasured.len() == point.sides.len() {
        format!("no latency measured ({})", unmeasured.join("; "))
    } else if point
        .sides
        .iter()
        .any(|s| s.latency_histogram_hdr.is_some())
    {
        "its histogram does not read back as an HdrHistogram V2 encoding".into()
    } else {
        "no histogram kept (a record written before bytepath kept them)".into()
    }
}

/// A point's key as a file name: `send/stream/256/1` → `send-stream-256-1`.
pub fn file_name(key: &str) -> String {
    key.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '-',
        })
        .collect()
}

/// HdrHistogram's interval log: a comment naming the point, StartTime, one tagged interval
/// per side covering the point's measured time.
fn hlog(
    key: &str,
    point: &PointHistograms,
    sides: &[(&str, LatencyHistogram)],
) -> Result<String, Error> {
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(point.timestamp_unix_s);
    let measured = Duration::try_from_secs_f64(point.measured_s).unwrap_or_default();
    let mut bytes = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let failed = |e: String| Error::Failed(format!("{key}: writing its histogram log: {e}"));
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment(&format!(
            "bytepath point {key}: latency in ns, each side's measured samples"
        ))
        .with_start_time(start)
        .with_base_time(start)
        .begin_log_with(&mut bytes, &mut serializer)
        .map_err(|e| failed(e.to_string()))?;
    for (side, h) in sides {
        log.write_histogram(h.hdr(), Duration::ZERO, measured, Tag::new(side))
            .map_err(|e| failed(e.to_string()))?;
    }
    drop(log);
    String::from_utf8(bytes).map_err(|e| failed(e.to_string()))
}

/// Every recorded bucket of every side, with the share of the side's samples at or below it.
fn csv(sides: &[(&str, LatencyHistogram)]) -> String {
    let mut out = String::from("side,value_ns_low,value_ns_high,count,cumulative_fraction\n");
    for (side, h) in sides {
        let total = h.len() as f64;
        let mut below = 0u64;
        for b in h.buckets() {
            below += b.count;
            let _ = writeln!(
                out,
                "{side},{},{},{},{}",
                b.low_ns,
                b.high_ns,
                b.count,
                below as f64 / total
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_plain_file_names() {
        assert_eq!(file_name("send/stream/256/1"), "send-stream-256-1");
        assert_eq!(file_name("unix dgram/rr/4K"), "unix-dgram-rr-4K");
    }

    #[test]
    fn the_csv_counts_every_sample_and_ends_at_one() {
        let mut h = LatencyHistogram::new();
        for v in [10, 10, 2_000, 3_000_000] {
            h.record(v);
        }
        let text = csv(&[("sender", h)]);
        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        let total: u64 = rows.iter().map(|r| r[3].parse::<u64>().unwrap()).sum();
        assert_eq!(total, 4);
        assert_eq!(rows[0], ["sender", "10", "10", "2", "0.5"]);
        assert_eq!(rows.last().unwrap()[4], "1");
    }
}
