//! A results folder's marker (`sweep.json`): what makes a folder a bytepath results folder,
//! which study wrote it, when it started, with which flags and settings; what the readers of
//! any study's folder take from it (`MarkerHead`); and the check that a folder `--resume`
//! continues holds the same study.
use crate::error::{bad, Error};
use crate::record::{self, SCHEMA_VERSION};
use serde::Deserialize;
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

pub const MARKER: &str = "sweep.json";

/// What a sweep folder's marker says it is: the one study kind the report layer names, since
/// the markers it reads and checks carry it from before there were other studies. A sweep of
/// schema 1 (its points measured as one stretch each) is told by it, which `--resume` cannot
/// continue; and a folder no study claims is read as the sweep's run records. The sweep's
/// descriptor (`sweep::KIND`) takes its text from here, so it is written once; every other
/// study's kind is its own descriptor's, which this layer never sees.
pub const SWEEP_KIND: &str = "bytepath sweep results";

/// A results folder's marker (`sweep.json`): what makes a folder a bytepath results folder,
/// which study wrote it, when, with which flags and settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Marker {
    pub kind: &'static str,
    pub schema_version: u32,
    pub bytepath_version: &'static str,
    pub started_unix_s: u64,
    pub started_utc: String,
    /// Points (or runs, or transfers) the study plans.
    pub points: usize,
    /// How its visits are ordered, in words.
    pub order: &'static str,
    /// The flags as given.
    pub arguments: Value,
    /// The study's validated settings: on `--resume` they must be the same.
    pub spec: Value,
}

impl Marker {
    /// The marker of a study starting now, whose folders' markers say `kind` (its
    /// descriptor's `marker`).
    pub fn new(
        kind: &'static str,
        spec: Value,
        arguments: Value,
        points: usize,
        order: &'static str,
    ) -> Marker {
        let now = unix_now();
        Marker {
            kind,
            schema_version: SCHEMA_VERSION,
            bytepath_version: env!("CARGO_PKG_VERSION"),
            started_unix_s: now,
            started_utc: iso_utc(now),
            points,
            order,
            arguments,
            spec,
        }
    }

    /// As written: a JSON object, its keys sorted.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a marker is plain data")
    }
}

/// What a reader needs of any study's marker beyond its kind, typed: the points it planned
/// and the settings every study records alike. Folders from before a setting lack it.
#[derive(Debug, Default, serde::Deserialize)]
pub struct MarkerHead {
    #[serde(default)]
    pub points: Option<usize>,
    #[serde(default)]
    pub spec: SpecHead,
}

/// The settings in a marker's `spec` that every study keeps under the same key.
#[derive(Debug, Default, serde::Deserialize)]
pub struct SpecHead {
    /// `--seed`: what the visit or transfer order was drawn from.
    #[serde(default)]
    pub seed: Option<u64>,
    /// `--margin`: the equivalence margin the study's verdicts were judged with.
    #[serde(default)]
    pub margin: Option<f64>,
}

impl MarkerHead {
    /// `dir`'s marker, or `None` where there is none or it does not read.
    pub fn read(dir: &Path) -> Option<MarkerHead> {
        let text = fs::read_to_string(dir.join(MARKER)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The recorded margin, where one was recorded (a share above 0).
    pub fn margin(&self) -> Option<f64> {
        self.spec.margin.filter(|m| *m > 0.0)
    }
}

/// The seed a sweep in `dir` started with (from its marker), if it has one.
pub fn saved_seed(dir: &Path) -> Option<u64> {
    MarkerHead::read(dir)?.spec.seed
}

/// What `--resume` reads of a saved marker. Markers of every schema read: a setting a
/// folder lacks is absent.
#[derive(serde::Deserialize)]
struct SavedMarker {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    schema_version: Option<u64>,
    #[serde(default)]
    spec: serde_json::Map<String, Value>,
}

/// A resumed sweep must be the same sweep: same schema family, same settings.
pub(super) fn check_marker(dir: &Path, marker: &Value) -> Result<(), Error> {
    let path = dir.join(MARKER);
    let text = fs::read_to_string(&path).map_err(|source| Error::File {
        path: path.clone(),
        source,
    })?;
    let not_a_marker = |e: serde_json::Error| {
        bad::<Error>(format!("{}: not a bytepath marker ({e})", path.display()))
    };
    let value: Value = serde_json::from_str(&text).map_err(not_a_marker)?;
    record::check_schema(&path, None, &value)?;
    let saved = SavedMarker::deserialize(&value).map_err(not_a_marker)?;
    if saved.kind.as_deref() == Some(SWEEP_KIND) && saved.schema_version < Some(2) {
        return Err(bad(format!(
            "--resume: {} holds a sweep of schema 1, whose points were measured as one stretch each; this bytepath measures points in visits and cannot continue it; start a new folder (`bytepath report` and `compare` still read it)",
            dir.display()
        )));
    }
    // Round-trip the current spec through the same parser, so floats compare exactly.
    let now = SavedMarker::deserialize(
        &serde_json::from_str::<Value>(&marker.to_string()).expect("JSON"),
    )
    .map_err(not_a_marker)?
    .spec;
    same_settings(dir, &saved.spec, &now)
}

/// Every setting of the saved spec and of the current one alike, key by key.
fn same_settings(
    dir: &Path,
    then: &serde_json::Map<String, Value>,
    now: &serde_json::Map<String, Value>,
) -> Result<(), Error> {
    // Both ways: a setting only present when used (`network`, `remote`) must not be dropped
    // on resume either, or a remote sweep would be continued on loopback.
    let keys = now
        .keys()
        .chain(then.keys().filter(|k| !now.contains_key(*k)));
    for key in keys {
        let value = now.get(key).unwrap_or(&Value::Null);
        let before = then.get(key).unwrap_or(&Value::Null);
        if before != value {
            return Err(bad(format!(
                "--resume: {} was started with other settings ({key}: {before} then, {value} now); give the same flags as when it started",
                dir.display()
            )));
        }
    }
    Ok(())
}

pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// (year, month, day, hour, minute, second) in UTC, from Unix seconds (proleptic Gregorian,
/// Howard Hinnant's `civil_from_days`).
fn utc_fields(unix_s: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (unix_s / 86_400) as i64;
    let secs = (unix_s % 86_400) as u32;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, secs / 3600, secs / 60 % 60, secs % 60)
}

/// `YYYYmmdd-HHMMSS` (UTC), the default folder name.
pub fn folder_timestamp(unix_s: u64) -> String {
    let (y, mo, d, h, mi, s) = utc_fields(unix_s);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// `YYYY-mm-ddTHH:MM:SSZ`.
pub fn iso_utc(unix_s: u64) -> String {
    let (y, mo, d, h, mi, s) = utc_fields(unix_s);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_format_as_utc_calendar_dates() {
        assert_eq!(folder_timestamp(0), "19700101-000000");
        assert_eq!(iso_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(folder_timestamp(1_767_225_599), "20251231-235959");
    }
}
