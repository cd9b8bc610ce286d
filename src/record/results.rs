//! Reading a results folder back: `DIR/results.jsonl`, one record per line, each checked for a
//! schema this build can read. Shared by `sweep --resume`, `report` and `compare`.
use super::compat::check_schema;

/// One line of a results file, kept verbatim so a rewrite can reproduce it byte for byte.
pub struct ResultLine {
    pub line_number: usize,
    pub text: String,
    pub record: serde_json::Value,
}

/// `DIR/results.jsonl` as read: its records, and whether its last line was cut short (a crash
/// while writing it; that line is left out).
pub struct ResultsFile {
    pub lines: Vec<ResultLine>,
    pub truncated_tail: bool,
}

/// Reads `DIR/results.jsonl`, checking every record's schema. Errors name the file and line
/// and are input errors.
pub fn read_results_file(dir: &std::path::Path) -> Result<ResultsFile, crate::error::Error> {
    use crate::error::ConfigError;
    let path = dir.join("results.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        ConfigError(format!(
            "{}: cannot read ({e}); expected a bytepath results folder",
            path.display()
        ))
    })?;
    let numbered: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let mut file = ResultsFile {
        lines: Vec::new(),
        truncated_tail: false,
    };
    for (n, &(i, line)) in numbered.iter().enumerate() {
        let record: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) if n + 1 == numbered.len() && !text.ends_with('\n') => {
                file.truncated_tail = true;
                continue;
            }
            Err(e) => {
                let msg = format!("{}:{}: not a JSON record ({e})", path.display(), i + 1);
                return Err(ConfigError(msg).into());
            }
        };
        check_schema(&path, Some(i + 1), &record)?;
        file.lines.push(ResultLine {
            line_number: i + 1,
            text: line.to_string(),
            record,
        });
    }
    Ok(file)
}

/// The records of a results folder, one JSON value per line.
pub fn read_results(dir: &std::path::Path) -> Result<Vec<serde_json::Value>, crate::error::Error> {
    Ok(read_results_file(dir)?
        .lines
        .into_iter()
        .map(|l| l.record)
        .collect())
}

impl ResultLine {
    /// The record read as `T` (a record type or a reader's view of one); the error names the
    /// file and line and what does not read.
    pub fn typed<T: serde::de::DeserializeOwned>(
        &self,
        path: &std::path::Path,
    ) -> Result<T, crate::error::ConfigError> {
        T::deserialize(&self.record).map_err(|e| {
            crate::error::ConfigError(format!(
                "{}:{}: not a bytepath record ({e})",
                path.display(),
                self.line_number
            ))
        })
    }
}

/// The records of a results folder, each read as `T` (see `ResultLine::typed`).
pub fn read_typed<T: serde::de::DeserializeOwned>(
    dir: &std::path::Path,
) -> Result<Vec<T>, crate::error::Error> {
    let path = dir.join("results.jsonl");
    read_results_file(dir)?
        .lines
        .iter()
        .map(|l| l.typed(&path).map_err(Into::into))
        .collect()
}
