//! What every study's samples are built from, whatever its records: a point's labels, a
//! record's field as a label value, the last completed record of each point, and the folder's
//! records read as the study's type.
use crate::error::Error;
use crate::record::ResultsFile;
use serde_json::Value;
use std::path::Path;

/// The point's labels: what varies between points of any study.
pub fn labels(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// A record's field as a label value: text as it is, a number as written, empty where the
/// record has none.
pub fn text<T: serde::Serialize>(v: &Option<T>) -> String {
    match serde_json::to_value(v).expect("a record's field serializes") {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What every kind of record says about its point, for `latest_per_point`.
pub trait PointRecord: Clone {
    fn completed(&self) -> bool;
    fn key(&self) -> Option<&str>;
}

/// The last completed record of each point (a sweep's results may hold a failed record and,
/// after `--resume`, the same point completed), in the order first seen.
pub fn latest_per_point<R: PointRecord>(records: &[R]) -> Vec<R> {
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

/// The records of `file` (the folder's results.jsonl) read as `T`.
pub fn typed<T: serde::de::DeserializeOwned>(
    dir: &Path,
    file: &ResultsFile,
) -> Result<Vec<T>, Error> {
    let path = dir.join(crate::report::folder::RESULTS_JSONL);
    file.lines
        .iter()
        .map(|l| l.typed(&path).map_err(Error::from))
        .collect()
}
