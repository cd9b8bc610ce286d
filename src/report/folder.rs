//! A study's results folder: `sweep.json` (the marker that makes it a bytepath results folder,
//! with the study's settings; `marker`), `results.jsonl` (one record per line) and
//! `results.csv` (the same records flattened). Both result files are appended, flushed and
//! `fdatasync(2)`ed after every point, so a crash or Ctrl-C loses nothing already measured;
//! `--resume` reloads them. Every study's folder is opened through here (`open_with`, or
//! `visit_folder::open`), by the study driver.
use super::csv;
use super::stream::JsonStream;
use crate::error::{bad, Error};
use crate::record;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::marker::{check_marker, folder_timestamp, unix_now};
pub use super::marker::{saved_seed, Marker, MarkerHead, MARKER};
pub const RESULTS_JSONL: &str = "results.jsonl";
pub const RESULTS_CSV: &str = "results.csv";
/// Where sweeps go when `--out` is not given: `./bytepath-results/<YYYYmmdd-HHMMSS>/` (UTC).
pub const DEFAULT_PARENT: &str = "bytepath-results";
/// The probe of the machine a sweep ran on (see `bytepath probe`).
pub const PROBE_JSON: &str = "probe.json";

/// What the command line says about a study's output: the results folder (`--out`; a new one
/// under `DEFAULT_PARENT` when `None`), whether `--resume` continues it, the flags as given
/// (which the marker keeps), and whether stdout gets JSON (`--json`) instead of text lines.
#[derive(Debug, Clone, Default)]
pub struct StudyOutput {
    pub out: Option<PathBuf>,
    pub resume: bool,
    pub arguments: Value,
    pub json: bool,
    /// `--json-stream`: where start, visit, point and end lines go (off by default).
    pub stream: JsonStream,
}

/// What a results folder's records are to a `--json-stream` reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamAs {
    /// Each record is a finished point (`ipc`, `servers`).
    Points,
    /// Each record is one visit of a point (`mesh`) or one repetition (`file`).
    Visits,
}

pub fn file_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::File {
        path: path.to_path_buf(),
        source,
    }
}

/// What the folder already held when a sweep was resumed.
#[derive(Debug, Default)]
pub struct Prior {
    /// An existing sweep was continued (`--resume` on a folder with a marker).
    pub resumed: bool,
    /// Records kept: one completed record per key, in the order they were measured, each with
    /// its line as saved (so resuming rewrites it byte for byte).
    pub records: Vec<Saved>,
    /// Keys of the kept records: the points `--resume` skips.
    pub done: HashSet<String>,
    /// Records dropped because their point was failed or interrupted (measured again now).
    pub remeasured: usize,
    /// A last line cut short (a crash while writing it), dropped.
    pub truncated_line: bool,
}

/// One record: its JSON line as written, and the parsed value.
#[derive(Debug, Clone)]
pub struct Saved {
    pub line: String,
    pub value: Value,
}

impl Saved {
    /// A record given as a value (its line is the value's compact JSON).
    pub fn from_value(value: Value) -> Saved {
        Saved {
            line: value.to_string(),
            value,
        }
    }
}

/// An open results folder that takes one record per finished point.
pub struct ResultsFolder {
    pub dir: PathBuf,
    jsonl: File,
    csv: File,
    /// What results.csv holds of each record.
    columns: Vec<csv::Column>,
    stream: (JsonStream, StreamAs),
}

/// Opens (or creates) the results folder of run records. `marker` is the content of
/// `sweep.json` for a new sweep; on `--resume` its `spec` must equal the one saved in the
/// folder. Only this file's tests take run records' own columns: the studies open through
/// `open_with` or `visit_folder::open`.
#[cfg(test)]
fn open(out: Option<&Path>, resume: bool, marker: &Value) -> Result<(ResultsFolder, Prior), Error> {
    open_with(out, resume, marker, csv::columns())
}

/// As `open`, for records whose CSV has other `columns`.
pub fn open_with(
    out: Option<&Path>,
    resume: bool,
    marker: &Value,
    columns: Vec<csv::Column>,
) -> Result<(ResultsFolder, Prior), Error> {
    let (dir, resumed) = prepare(out, resume, marker)?;
    if resumed {
        let prior = Prior {
            resumed: true,
            ..load_prior(&dir)?
        };
        let folder = rewrite(&dir, &prior.records, columns)?;
        return Ok((folder, prior));
    }
    Ok((rewrite(&dir, &[], columns)?, Prior::default()))
}

/// Chooses the folder and makes it a results folder: a new one gets `marker`; with `--resume`
/// an existing one must hold the same study. Returns the folder and whether it was resumed.
pub fn prepare(out: Option<&Path>, resume: bool, marker: &Value) -> Result<(PathBuf, bool), Error> {
    let dir = match out {
        None if resume => {
            return Err(bad(
                "--resume: needs --out DIR, the results folder of the sweep to continue",
            ))
        }
        None => create_default_dir()?,
        Some(dir) => dir.to_path_buf(),
    };
    if dir.join(MARKER).is_file() {
        if !resume {
            return Err(bad(format!(
                "--out {}: already holds a bytepath sweep; add --resume to continue it, or choose a new folder",
                dir.display()
            )));
        }
        check_marker(&dir, marker)?;
        return Ok((dir, true));
    }
    claim_dir(&dir)?;
    // The first write into the folder is its marker: a folder that cannot take it is refused
    // here, before anything is measured, like one that cannot be made.
    write_atomically(
        &dir.join(MARKER),
        &(serde_json::to_string_pretty(marker).expect("JSON") + "\n"),
    )
    .map_err(|e| match e {
        Error::File { source, .. } => unusable(&dir, "cannot be written", &source),
        other => other,
    })?;
    Ok((dir, false))
}

/// `--out DIR` refused: one line that names the folder, says why once (the OS's words, without
/// its error number) and what to do.
fn unusable(dir: &Path, what: &str, source: &std::io::Error) -> Error {
    bad(format!(
        "--out {}: {what} ({}); choose a folder you can create and write, such as ./bytepath-results/run1",
        dir.display(),
        os_reason(source)
    ))
}

/// The OS's reason in words: "Permission denied", not "Permission denied (os error 13)".
fn os_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Accepts a folder that does not exist yet or is empty; refuses anything else untouched.
fn claim_dir(dir: &Path) -> Result<(), Error> {
    if dir.exists() {
        if !dir.is_dir() {
            return Err(bad(format!(
                "--out {}: exists and is not a folder; choose a new or empty folder",
                dir.display()
            )));
        }
        let mut entries = fs::read_dir(dir).map_err(|e| unusable(dir, "cannot be read", &e))?;
        if entries.next().is_some() {
            return Err(bad(format!(
                "--out {}: not empty and not a bytepath results folder (no {MARKER}); nothing was written; choose a new or empty folder",
                dir.display()
            )));
        }
        return Ok(());
    }
    fs::create_dir_all(dir).map_err(|e| unusable(dir, "cannot be created", &e))
}

/// `./bytepath-results/<timestamp>`, with `-2`, `-3`… if a sweep started in the same second.
fn create_default_dir() -> Result<PathBuf, Error> {
    let parent = Path::new(DEFAULT_PARENT);
    fs::create_dir_all(parent).map_err(|e| unusable(parent, "cannot be created", &e))?;
    let stamp = folder_timestamp(unix_now());
    for n in 1.. {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = parent.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(unusable(&dir, "cannot be created", &e)),
        }
    }
    unreachable!("the loop returns")
}

/// What `--resume` reads of a saved record: its point's key and how it ended.
#[derive(serde::Deserialize)]
struct SavedRecord {
    #[serde(default)]
    sweep_point: Option<SavedPoint>,
    #[serde(default)]
    status: Option<String>,
}

#[derive(serde::Deserialize)]
struct SavedPoint {
    key: String,
}

/// Reads results.jsonl: keeps the completed record of each key; drops failed and interrupted
/// records (their points are measured again) and a last line cut short by a crash.
fn load_prior(dir: &Path) -> Result<Prior, Error> {
    if !dir.join(RESULTS_JSONL).exists() {
        return Ok(Prior::default());
    }
    let file = record::read_results_file(dir)?;
    let mut prior = Prior {
        truncated_line: file.truncated_tail,
        ..Prior::default()
    };
    for line in file.lines {
        let saved = SavedRecord::deserialize(&line.record).ok();
        let (key, status) = match saved {
            Some(SavedRecord {
                sweep_point: Some(point),
                status,
            }) => (point.key, status),
            _ => {
                return Err(bad(format!(
                    "{}:{}: a record without sweep_point.key",
                    dir.join(RESULTS_JSONL).display(),
                    line.line_number
                )))
            }
        };
        // A skipped point is not measured again: the kernel still lacks what it needs.
        if !matches!(status.as_deref(), Some("completed" | "skipped")) {
            prior.remeasured += 1;
        } else if prior.done.insert(key) {
            prior.records.push(Saved {
                line: line.text,
                value: line.record,
            });
        }
    }
    Ok(prior)
}

/// Writes the result files afresh with `records` (via a temporary file and a rename, so a
/// crash leaves the old or the new file), then opens both for appending.
fn rewrite(
    dir: &Path,
    records: &[Saved],
    columns: Vec<csv::Column>,
) -> Result<ResultsFolder, Error> {
    let jsonl: String = records.iter().map(|r| format!("{}\n", r.line)).collect();
    write_atomically(&dir.join(RESULTS_JSONL), &jsonl)?;
    let values: Vec<Value> = records.iter().map(|r| r.value.clone()).collect();
    write_atomically(&dir.join(RESULTS_CSV), csv::to_csv_with(&columns, &values))?;
    let append = |name: &str| {
        let path = dir.join(name);
        OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(file_error(&path))
    };
    Ok(ResultsFolder {
        dir: dir.to_path_buf(),
        jsonl: append(RESULTS_JSONL)?,
        csv: append(RESULTS_CSV)?,
        columns,
        stream: (JsonStream::default(), StreamAs::Points),
    })
}

/// Writes `bytes` whole or not at all: to a sibling temporary file, synced, then renamed.
pub fn write_atomically(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), Error> {
    let tmp = path.with_extension("tmp");
    let mut file = File::create(&tmp).map_err(file_error(&tmp))?;
    file.write_all(bytes.as_ref())
        .and_then(|()| file.sync_data())
        .map_err(file_error(&tmp))?;
    fs::rename(&tmp, path).map_err(file_error(path))
}

impl ResultsFolder {
    /// From now on every record appended also goes to `stream` as a point or visit line
    /// (after it is on disk).
    pub fn stream_as(&mut self, stream: &JsonStream, kind: StreamAs) {
        self.stream = (stream.clone(), kind);
    }

    /// Appends one record to both files and forces it to disk before returning.
    pub fn append(&mut self, record: &Saved) -> Result<(), Error> {
        self.write(record)?;
        match self.stream {
            (ref stream, StreamAs::Points) => stream.point(&record.value),
            (ref stream, StreamAs::Visits) => stream.visit(&record.value),
        }
        Ok(())
    }

    fn write(&mut self, record: &Saved) -> Result<(), Error> {
        let jsonl_path = self.dir.join(RESULTS_JSONL);
        let line = format!("{}\n", record.line);
        self.jsonl
            .write_all(line.as_bytes())
            .and_then(|()| self.jsonl.sync_data())
            .map_err(file_error(&jsonl_path))?;
        let csv_path = self.dir.join(RESULTS_CSV);
        csv::write_line(&mut self.csv, &csv::row_of(&self.columns, &record.value))
            .and_then(|()| self.csv.sync_data())
            .map_err(file_error(&csv_path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("bytepath-folder-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn marker_for(spec: Value) -> Value {
        let sweep = crate::report::marker::SWEEP_KIND;
        Marker::new(sweep, spec, json!({}), 2, "test").to_value()
    }

    fn record(key: &str, status: &str) -> Saved {
        Saved::from_value(
            json!({"schema_version": 1, "sweep_point": {"key": key}, "status": status}),
        )
    }

    #[test]
    fn a_new_folder_gets_the_marker_and_a_csv_header() {
        let dir = temp_dir("new");
        let (mut folder, prior) = open(Some(&dir), false, &marker_for(json!({"a": 1}))).unwrap();
        assert!(prior.records.is_empty());
        folder
            .append(&record("send/stream/8/1", "completed"))
            .unwrap();
        let csv_text = fs::read_to_string(dir.join(RESULTS_CSV)).unwrap();
        assert_eq!(csv_text.lines().count(), 2);
        assert!(dir.join(MARKER).is_file());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn resume_keeps_completed_points_and_drops_the_rest() {
        let dir = temp_dir("resume");
        let m = marker_for(json!({"a": 1.1}));
        let (mut folder, _) = open(Some(&dir), false, &m).unwrap();
        for (key, status) in [("a", "completed"), ("b", "failed"), ("c", "interrupted")] {
            folder.append(&record(key, status)).unwrap();
        }
        drop(folder);
        let mut jsonl = OpenOptions::new()
            .append(true)
            .open(dir.join(RESULTS_JSONL))
            .unwrap();
        jsonl.write_all(b"{\"schema_version\": 1, \"swe").unwrap();
        let (_, prior) = open(Some(&dir), true, &m).unwrap();
        assert_eq!(prior.done, HashSet::from(["a".to_string()]));
        assert_eq!((prior.remeasured, prior.truncated_line), (2, true));
        let kept = fs::read_to_string(dir.join(RESULTS_JSONL)).unwrap();
        assert_eq!(kept.lines().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn resume_with_other_settings_is_refused() {
        let dir = temp_dir("other");
        open(Some(&dir), false, &marker_for(json!({"sizes_bytes": [8]}))).unwrap();
        let err = open(Some(&dir), true, &marker_for(json!({"sizes_bytes": [16]})))
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("sizes_bytes: [8] then, [16] now"),
            "{err}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_existing_sweep_without_resume_is_refused() {
        let dir = temp_dir("again");
        let m = marker_for(json!({}));
        open(Some(&dir), false, &m).unwrap();
        let err = open(Some(&dir), false, &m).err().unwrap();
        assert!(matches!(err, Error::Config(_)) && err.to_string().contains("--resume"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
