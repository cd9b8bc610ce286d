//! Reading a results folder back: `DIR/results.jsonl`, one record per line, each checked for a
//! schema this build can read. Shared by `sweep --resume`, `report` and `compare`.
use super::compat::check_schema;
use serde::de::DeserializeOwned;
use serde_json::Value;

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
    /// file and line, the field and what does not read.
    pub fn typed<T: DeserializeOwned>(
        &self,
        path: &std::path::Path,
    ) -> Result<T, crate::error::ConfigError> {
        read_as(&self.record).map_err(|why| {
            crate::error::ConfigError(format!(
                "{}:{}: not a bytepath record ({why})",
                path.display(),
                self.line_number
            ))
        })
    }
}

/// `value` read as `T`, or what does not read, with the field that keeps it from reading
/// (`config.threads: invalid type: string "two", expected a JSON number`).
pub fn read_as<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|e| match culprit::<T>(value) {
        Some(field) => format!("{field}: {e}"),
        None => e.to_string(),
    })
}

/// The dotted path of the field that keeps `value` from reading as `T` (`config.threads`,
/// `sides[1].latency_ns`), found by reading `T` from `value` cut down to one field at a time
/// (the readers' types take every field as optional, so the culprit fails alone); `None` where
/// no single field fails alone, or where `T` requires fields (a record type, not a view), so
/// that every field would fail alone.
fn culprit<T: DeserializeOwned>(value: &Value) -> Option<String> {
    let fails = |candidate: &Value| T::deserialize(candidate).is_err();
    if fails(&Value::Object(serde_json::Map::new())) {
        return None;
    }
    let path = narrow(value, &|v| v, &fails, String::new());
    (!path.is_empty()).then_some(path)
}

/// Puts a part back into the whole document, alone in each object and array above it.
type Whole<'a> = Box<dyn Fn(Value) -> Value + 'a>;

/// The deepest part of `node` (at `path`, put back into the document by `whole`) that fails
/// alone; `path` itself where none of its parts does.
fn narrow(
    node: &Value,
    whole: &dyn Fn(Value) -> Value,
    fails: &dyn Fn(&Value) -> bool,
    path: String,
) -> String {
    let parts: Vec<(String, &Value, Whole)> = match node {
        Value::Object(fields) => fields
            .iter()
            .map(|(k, v)| {
                let key = k.clone();
                let wrap: Whole = Box::new(move |x| {
                    whole(Value::Object(std::iter::once((key.clone(), x)).collect()))
                });
                let at = match path.as_str() {
                    "" => k.clone(),
                    _ => format!("{path}.{k}"),
                };
                (at, v, wrap)
            })
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let wrap: Whole = Box::new(move |x| whole(Value::Array(vec![x])));
                (format!("{path}[{i}]"), v, wrap)
            })
            .collect(),
        _ => return path,
    };
    for (at, part, wrap) in parts {
        if fails(&wrap(part.clone())) {
            return narrow(part, &*wrap, fails, at);
        }
    }
    path
}

/// The records of a results folder, each read as `T` (see `ResultLine::typed`).
pub fn read_typed<T: DeserializeOwned>(
    dir: &std::path::Path,
) -> Result<Vec<T>, crate::error::Error> {
    let path = dir.join("results.jsonl");
    read_results_file(dir)?
        .lines
        .iter()
        .map(|l| l.typed(&path).map_err(Into::into))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::view::RunView;
    use serde_json::json;

    #[test]
    fn a_field_that_does_not_read_is_named_with_its_path() {
        let bad = json!({"status": "completed", "config": {"mechanism": "copy", "threads": "two"}});
        let e = read_as::<RunView>(&bad).unwrap_err();
        assert!(
            e.starts_with("config.threads: invalid type: string \"two\""),
            "{e}"
        );
        let bad_side = json!({"sides": [{}, {"latency_ns": {"p50": "fast"}}]});
        let e = read_as::<RunView>(&bad_side).unwrap_err();
        assert!(
            e.starts_with("sides[1].latency_ns.p50: invalid type"),
            "{e}"
        );
        assert!(read_as::<RunView>(&json!({"status": "completed"})).is_ok());
        // A type with required fields gets serde's own words, never a guessed field.
        let strict = read_as::<crate::stats::Summary>(&json!({"n": "x"})).unwrap_err();
        assert!(strict.starts_with("invalid type"), "{strict}");
    }
}
