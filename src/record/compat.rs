//! The schema versions this build reads, and the one place that may read a record's JSON by
//! string key (tests/typed_records.rs counts such reads everywhere else and keeps them at 0).
//! Every other reader takes a record through its serde type: fields a later version added are
//! `#[serde(default)]` there, so an older record reads with them absent.
//!
//! Run records (results.jsonl, visits.jsonl, the markers):
//! - schema 1: a point was one contiguous stretch of slices; its statistics have no `basis`,
//!   `method`, `visits` or `counters_open` (and had `min_time_s`/`max_time_s`). `report`,
//!   `compare` and `export` read it; a sweep of schema 1 cannot be resumed.
//! - schema 2 (`SCHEMA_VERSION`): points measured in visits (`statistics.basis: visits`).
//!
//! A record of a later schema (a newer bytepath wrote it) or of none is refused with the file,
//! the line and the versions this build reads.
use super::SCHEMA_VERSION;
use serde::Deserialize;

/// The one field every record and marker states first: which schema wrote it.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Versioned {
    #[serde(default)]
    pub schema_version: Option<u64>,
}

impl Versioned {
    /// The record's schema, 0 when it states none (or states it as something else).
    pub fn of(record: &serde_json::Value) -> u64 {
        Versioned::deserialize(record)
            .ok()
            .and_then(|v| v.schema_version)
            .unwrap_or(0)
    }
}

/// Refuses a record written by a newer bytepath (or with no schema at all).
pub fn check_schema(
    path: &std::path::Path,
    line: Option<usize>,
    record: &serde_json::Value,
) -> Result<(), crate::error::ConfigError> {
    check_version(path, line, Versioned::of(record))
}

/// `check_schema` for a version already read.
pub fn check_version(
    path: &std::path::Path,
    line: Option<usize>,
    version: u64,
) -> Result<(), crate::error::ConfigError> {
    if version == 0 || version > SCHEMA_VERSION as u64 {
        let at = line.map_or(String::new(), |l| format!(":{l}"));
        return Err(crate::error::ConfigError(format!(
            "{}{at}: schema_version {version}; this bytepath reads 1 to {SCHEMA_VERSION} (a newer bytepath wrote it?)",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn schemas_one_to_the_current_are_read_and_others_refused_with_file_and_line() {
        let path = Path::new("dir/results.jsonl");
        for version in 1..=SCHEMA_VERSION {
            assert!(check_schema(path, Some(3), &json!({ "schema_version": version })).is_ok());
        }
        let newer = json!({ "schema_version": SCHEMA_VERSION + 1 });
        let e = check_schema(path, Some(3), &newer).unwrap_err().0;
        let expected = format!(
            "dir/results.jsonl:3: schema_version {};",
            SCHEMA_VERSION + 1
        );
        assert!(e.starts_with(&expected), "{e}");
        let none = check_schema(path, None, &json!({ "schema_version": "two" })).unwrap_err();
        assert!(
            none.0.starts_with("dir/results.jsonl: schema_version 0;"),
            "{}",
            none.0
        );
    }
}
