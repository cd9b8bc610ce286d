//! The results folder of a study measured in visits. `visits.jsonl` takes every visit's run
//! record as the visit finishes, synced before the next starts: Ctrl-C or a crash loses no
//! finished visit, and `--resume` keeps them and makes only the missing ones. `results.jsonl`
//! and `results.csv` hold one record per point, aggregated from its visits and rewritten whole
//! (via a temporary file and a rename) after every round, so they always match the visits.
use super::csv;
use super::folder::{self, file_error, write_atomically, Saved, RESULTS_CSV, RESULTS_JSONL};
use super::stream::JsonStream;
use crate::error::Error;
use crate::record::{self, RunRecord};
use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const VISITS_JSONL: &str = "visits.jsonl";

/// An open results folder of a study in visits.
pub struct VisitFolder {
    pub dir: PathBuf,
    visits: File,
    /// `--json-stream`: each visit, once on disk, as a visit line.
    pub stream: JsonStream,
}

/// What a resumed folder already held.
#[derive(Default)]
pub struct PriorVisits {
    pub resumed: bool,
    /// Finished visits (completed or skipped), in the order they were made, each with its
    /// line as saved (a resume rewrites it byte for byte).
    pub visits: Vec<(String, RunRecord)>,
    /// Failed or interrupted visits dropped: made again.
    pub dropped: usize,
    /// A last line cut short by a crash, dropped.
    pub truncated_line: bool,
}

/// Opens (or creates) the folder; on `--resume` reads its visits back.
pub fn open(
    out: Option<&Path>,
    resume: bool,
    marker: &Value,
) -> Result<(VisitFolder, PriorVisits), Error> {
    let (dir, resumed) = folder::prepare(out, resume, marker)?;
    let prior = if resumed {
        PriorVisits {
            resumed: true,
            ..load(&dir)?
        }
    } else {
        PriorVisits::default()
    };
    let lines: String = prior
        .visits
        .iter()
        .map(|(line, _)| format!("{line}\n"))
        .collect();
    let path = dir.join(VISITS_JSONL);
    write_atomically(&path, &lines)?;
    let visits = OpenOptions::new()
        .append(true)
        .open(&path)
        .map_err(file_error(&path))?;
    Ok((
        VisitFolder {
            dir,
            visits,
            stream: JsonStream::default(),
        },
        prior,
    ))
}

/// Reads visits.jsonl: keeps completed and skipped visits, drops the rest and a cut last line.
fn load(dir: &Path) -> Result<PriorVisits, Error> {
    let path = dir.join(VISITS_JSONL);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let mut prior = PriorVisits::default();
    for (n, &(i, line)) in lines.iter().enumerate() {
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) if n + 1 == lines.len() && !text.ends_with('\n') => {
                prior.truncated_line = true;
                continue;
            }
            Err(e) => return Err(bad_line(&path, i, &e.to_string())),
        };
        record::check_schema(&path, Some(i + 1), &value)?;
        let visit: RunRecord =
            serde_json::from_value(value).map_err(|e| bad_line(&path, i, &e.to_string()))?;
        if visit.visit.is_none() {
            return Err(bad_line(&path, i, "a record without its visit block"));
        }
        if matches!(visit.status.as_str(), "completed" | "skipped") {
            prior.visits.push((line.to_string(), visit));
        } else {
            prior.dropped += 1;
        }
    }
    Ok(prior)
}

fn bad_line(path: &Path, index: usize, why: &str) -> Error {
    crate::error::ConfigError(format!(
        "{}:{}: not a visit record ({why})",
        path.display(),
        index + 1
    ))
    .into()
}

impl VisitFolder {
    /// Appends one visit and forces it to disk before returning.
    pub fn append(&mut self, visit: &RunRecord) -> Result<(), Error> {
        let line = serde_json::to_string(visit).expect("a record serializes") + "\n";
        let path = self.dir.join(VISITS_JSONL);
        self.visits
            .write_all(line.as_bytes())
            .and_then(|()| self.visits.sync_data())
            .map_err(file_error(&path))?;
        if self.stream.is_on() {
            self.stream
                .visit(&serde_json::to_value(visit).expect("a record serializes"));
        }
        Ok(())
    }

    /// Rewrites results.jsonl and results.csv with one record per point.
    pub fn write_points(&self, points: &[RunRecord]) -> Result<(), Error> {
        let saved: Vec<Saved> = points
            .iter()
            .map(|r| Saved {
                line: serde_json::to_string(r).expect("a record serializes"),
                value: serde_json::to_value(r).expect("a record serializes"),
            })
            .collect();
        let jsonl: String = saved.iter().map(|s| format!("{}\n", s.line)).collect();
        write_atomically(&self.dir.join(RESULTS_JSONL), &jsonl)?;
        let values: Vec<Value> = saved.into_iter().map(|s| s.value).collect();
        write_atomically(
            &self.dir.join(RESULTS_CSV),
            csv::to_csv_with(&csv::columns(), &values),
        )
    }
}
