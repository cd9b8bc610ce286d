//! `bytepath report DIR --margin PCT` where the study recorded another margin: the verdicts
//! are judged again at the margin given, and since that margin was chosen after the data was
//! seen (a margin picked to turn "undecided" into "equivalent" is a claim the data did not
//! test), the report says so in its method text and the folder keeps every such change in
//! `margin_changes.json` (when, from, to), so a later reader of the folder sees it too.
use crate::error::Error;
use crate::stats::verdict::percent;
use std::path::Path;

/// The folder's record of every margin a report was judged at other than the study's.
pub const MARGIN_CHANGES_JSON: &str = "margin_changes.json";

/// One `report --margin` that differed from the study's margin.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MarginChange {
    /// When the report was rendered (seconds since the Unix epoch).
    pub unix_s: u64,
    /// The margin the study was run with (a share).
    pub from: f64,
    /// The margin the report judged at (a share).
    pub to: f64,
}

/// The margin a report judges with, and the sentence its method text adds when that margin
/// is not the study's.
#[derive(Debug, Clone, PartialEq)]
pub struct Judging {
    pub margin: f64,
    pub note: Option<String>,
}

/// The margin to judge `dir`'s study with: `given` (`report --margin`) where it differs from
/// `recorded` (the study's own), then appended to `dir/margin_changes.json` and noted; else
/// the recorded one, with no note.
pub fn judging(dir: &Path, recorded: f64, given: Option<f64>) -> Result<Judging, Error> {
    let Some(to) = given.filter(|to| (to - recorded).abs() > 1e-12) else {
        return Ok(Judging {
            margin: recorded,
            note: None,
        });
    };
    let change = MarginChange {
        unix_s: super::marker::unix_now(),
        from: recorded,
        to,
    };
    append(dir, change)?;
    Ok(Judging {
        margin: to,
        note: Some(note(recorded, to)),
    })
}

/// "Re-judged at ±2 %; the study was run with ±5 %: a margin chosen after the data (…)".
pub fn note(from: f64, to: f64) -> String {
    format!(
        "Re-judged at ±{}; the study was run with ±{}: a margin chosen after the data \
         (`report --margin`, recorded in {MARGIN_CHANGES_JSON}), so an \"equivalent\" it \
         yields was not a margin the study set out to test.",
        percent(to),
        percent(from)
    )
}

/// Every change `dir` records, oldest first (none for a folder that has no record).
pub fn read(dir: &Path) -> Result<Vec<MarginChange>, Error> {
    let path = dir.join(MARGIN_CHANGES_JSON);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            crate::error::bad(format!(
                "{}: not a list of margin changes ({e}); allowed: the list `report --margin` writes",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(Error::File { path, source }),
    }
}

fn append(dir: &Path, change: MarginChange) -> Result<(), Error> {
    let mut changes = read(dir)?;
    changes.push(change);
    let path = dir.join(MARGIN_CHANGES_JSON);
    let text = serde_json::to_string_pretty(&changes).expect("JSON") + "\n";
    std::fs::write(&path, text).map_err(|source| Error::File { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_margin_other_than_the_studys_is_noted_and_recorded_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let same = judging(dir.path(), 0.05, Some(0.05)).unwrap();
        assert_eq!(
            same,
            Judging {
                margin: 0.05,
                note: None
            }
        );
        assert_eq!(judging(dir.path(), 0.05, None).unwrap().margin, 0.05);
        assert!(
            read(dir.path()).unwrap().is_empty(),
            "nothing changed, nothing recorded"
        );
        let changed = judging(dir.path(), 0.05, Some(0.02)).unwrap();
        assert_eq!(changed.margin, 0.02);
        let note = changed.note.unwrap();
        assert!(
            note.starts_with(
                "Re-judged at ±2 %; the study was run with ±5 %: a margin chosen after the data"
            ),
            "{note}"
        );
        judging(dir.path(), 0.05, Some(0.1)).unwrap();
        let changes = read(dir.path()).unwrap();
        let pairs: Vec<(f64, f64)> = changes.iter().map(|c| (c.from, c.to)).collect();
        assert_eq!(pairs, [(0.05, 0.02), (0.05, 0.1)]);
        assert!(changes.iter().all(|c| c.unix_s > 1_600_000_000));
    }

    #[test]
    fn an_unreadable_record_is_an_input_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MARGIN_CHANGES_JSON), "{}").unwrap();
        let err = judging(dir.path(), 0.05, Some(0.02))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("margin_changes.json: not a list of margin changes"),
            "{err}"
        );
    }
}
