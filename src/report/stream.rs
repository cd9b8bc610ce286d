//! `--json-stream`: one JSON object per line on stdout as the work goes, in the manner of
//! iperf3's `--json-stream` (start / interval / end): a `start` line with the full
//! configuration and the machine, a `slice` or `visit` line per slice or visit with its
//! figures, a `point` line per finished point with its record, and an `end` line with a
//! summary and the exit status. Every line carries the records' `schema_version` and is
//! flushed when written, so a reader at the other end of a pipe sees it at once. Lines are
//! written at slice, visit and point boundaries by the controller or the study, never from
//! the threads that move the messages. A point or visit line of a tcp run also carries the
//! TCP_INFO readings of each slice boundary (`stream_tcp`), sent then because the sampler
//! hands them over only when the run stops.
use crate::environment::Environment;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The stream of one command, or none (the default). Clones write to the same stream.
#[derive(Clone, Default)]
pub struct JsonStream {
    inner: Option<Arc<Mutex<Inner>>>,
}

struct Inner {
    out: Box<dyn Write + Send>,
    schema_version: u64,
    started: bool,
    /// A write failed (the reader went away): the rest is dropped, the work goes on.
    broken: bool,
    points: BTreeMap<String, usize>,
    visits: usize,
    slices: usize,
    folder: Option<String>,
}

impl std::fmt::Debug for JsonStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_on() {
            "JsonStream(on)"
        } else {
            "JsonStream(off)"
        })
    }
}

impl JsonStream {
    /// `--json-stream` given: stdout becomes the stream and every text line goes to stderr.
    pub fn take_stdout() -> Result<JsonStream, Error> {
        let file = crate::sys::stdio::take_stdout()
            .map_err(|e| Error::Failed(format!("--json-stream: taking over stdout: {e}")))?;
        Ok(JsonStream::to_writer(Box::new(file)))
    }

    /// A stream into `out` (tests read it back).
    pub fn to_writer(out: Box<dyn Write + Send>) -> JsonStream {
        JsonStream {
            inner: Some(Arc::new(Mutex::new(Inner {
                out,
                schema_version: u64::from(crate::record::SCHEMA_VERSION),
                started: false,
                broken: false,
                points: BTreeMap::new(),
                visits: 0,
                slices: 0,
                folder: None,
            }))),
        }
    }

    pub fn is_on(&self) -> bool {
        self.inner.is_some()
    }

    /// The first line: what the command was asked (`config`, in full) and where it runs.
    pub fn start(&self, command: &str, schema_version: u64, config: &Value, environment: Value) {
        self.with(|inner| {
            inner.schema_version = schema_version;
            inner.started = true;
            inner.line(
                "start",
                json!({
                    "command": command,
                    "bytepath_version": env!("CARGO_PKG_VERSION"),
                    "config": config,
                    "environment": environment,
                }),
            );
        });
    }

    /// A study's first line: its marker (settings, flags, schema version) as the
    /// configuration, the machine detected now, and its results folder.
    pub fn start_study(&self, command: &str, marker: &impl Serialize, folder: &Path) {
        if !self.is_on() {
            return;
        }
        let cpus = crate::sys::affinity::allowed_cpus().unwrap_or_default();
        let environment = serde_json::to_value(Environment::detect(&cpus)).expect("JSON");
        let folder = folder.display().to_string();
        let config = serde_json::to_value(StudyConfig {
            marker,
            results_folder: &folder,
        })
        .expect("a marker is plain data");
        let version = MarkerVersion::deserialize(&config)
            .ok()
            .and_then(|m| m.schema_version)
            .unwrap_or(u64::from(crate::record::SCHEMA_VERSION));
        self.with(|inner| inner.folder = Some(folder.clone()));
        self.start(command, version, &config, environment);
    }

    /// One slice of a run, as the controller saw it complete.
    pub fn slice(&self, figures: Value) {
        self.with(|inner| {
            inner.slices += 1;
            inner.line("slice", figures);
        });
    }

    /// One visit of a point (or one repetition), with its record.
    pub fn visit(&self, record: &Value) {
        self.with(|inner| {
            inner.visits += 1;
            inner.line("visit", with_tcp_info(record));
        });
    }

    /// One finished point with its record.
    pub fn point(&self, record: &Value) {
        self.with(|inner| {
            let status = RecordStatus::deserialize(record)
                .ok()
                .and_then(|r| r.status)
                .unwrap_or_else(|| "completed".into());
            *inner.points.entry(status).or_default() += 1;
            inner.line("point", with_tcp_info(record));
        });
    }

    /// The last line: counts of what went by, and how the command ends. Written only after a
    /// start line (input refused before the work began leaves stdout empty).
    pub fn end(&self, exit_code: u8, error: Option<String>) {
        self.with(|inner| {
            if !inner.started {
                return;
            }
            let summary = json!({
                "points": inner.points.values().sum::<usize>(),
                "points_by_status": inner.points,
                "visits": inner.visits,
                "slices": inner.slices,
                "results_folder": inner.folder,
            });
            let status = match exit_code {
                0 => "completed",
                130 => "interrupted",
                2 => "refused",
                _ => "failed",
            };
            inner.line(
                "end",
                json!({"status": status, "exit_code": exit_code, "error": error, "summary": summary}),
            );
        });
    }

    fn with(&self, f: impl FnOnce(&mut Inner)) {
        if let Some(inner) = &self.inner {
            // A panic elsewhere while holding the lock leaves a usable stream all the same.
            let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut inner);
        }
    }
}

impl Inner {
    fn line(&mut self, kind: &str, fields: Value) {
        if self.broken {
            return;
        }
        let mut line = Map::new();
        line.insert("type".into(), json!(kind));
        line.insert("schema_version".into(), json!(self.schema_version));
        line.insert("time_unix_ms".into(), json!(unix_ms()));
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        let text = Value::Object(line).to_string() + "\n";
        if self
            .out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
            .is_err()
        {
            self.broken = true;
        }
    }
}

/// A point or visit line's fields: the record, and its TCP_INFO readings per slice boundary
/// (sent now, after the run: the sampler hands them over when the run stops).
fn with_tcp_info(record: &Value) -> Value {
    let mut fields = super::stream_tcp::fields(record);
    fields.insert("record".into(), record.clone());
    Value::Object(fields)
}

/// A study's start line's configuration: its marker, and where its results go.
#[derive(Serialize)]
struct StudyConfig<'a, M: Serialize> {
    #[serde(flatten)]
    marker: &'a M,
    results_folder: &'a str,
}

/// The schema version a marker states.
#[derive(Deserialize)]
struct MarkerVersion {
    #[serde(default)]
    schema_version: Option<u64>,
}

/// How a record says its point ended.
#[derive(Deserialize)]
struct RecordStatus {
    #[serde(default)]
    status: Option<String>,
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The exit code a command's result gets (as `main` sets it).
pub fn exit_code(result: &Result<crate::error::Status, Error>) -> u8 {
    use crate::error::Status;
    match result {
        Ok(Status::Success) => 0,
        Ok(Status::Failed) => 1,
        Ok(Status::Interrupted) => 130,
        Err(Error::Config(_)) => 2,
        Err(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer the test can read back after the stream wrote into it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn lines(buf: &Shared) -> Vec<Value> {
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn lines_carry_their_type_and_the_schema_version_and_end_counts_points() {
        let buf = Shared::default();
        let stream = JsonStream::to_writer(Box::new(buf.clone()));
        stream.start("sweep", 2, &json!({"a": 1}), json!({}));
        stream.visit(&json!({"status": "completed"}));
        stream.point(&json!({"status": "completed"}));
        stream.point(&json!({"status": "failed"}));
        stream.end(1, None);
        let lines = lines(&buf);
        let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["start", "visit", "point", "point", "end"]);
        assert!(lines.iter().all(|l| l["schema_version"] == 2));
        assert_eq!(lines[4]["summary"]["points"], 2);
        assert_eq!(lines[4]["summary"]["points_by_status"]["failed"], 1);
        assert_eq!(lines[4]["status"], "failed");
    }

    #[test]
    fn no_end_line_without_a_start_line() {
        let buf = Shared::default();
        JsonStream::to_writer(Box::new(buf.clone())).end(2, Some("bad".into()));
        assert!(lines(&buf).is_empty());
    }

    #[test]
    fn a_stream_that_is_off_writes_nothing_and_costs_nothing() {
        let stream = JsonStream::default();
        stream.point(&json!({}));
        assert!(!stream.is_on());
    }
}
