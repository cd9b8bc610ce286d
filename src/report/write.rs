//! Reading DIR/results.jsonl and writing report.html and report.md. Input problems are one
//! line naming the file and line (exit 2), found before anything is written; each report is
//! written to a temporary file and renamed, so a failure never leaves a half-written report.
use super::{html, markdown};
use crate::analysis::crossover_rule::{RoundsHead, Settings, ROUNDS_JSON};
use crate::analysis::tested::TestedAnswer;
use crate::analysis::{load, Answer, Dataset};
use crate::error::bad;
use crate::error::Error;
use crate::record::probe_view::ProbeView;
use std::path::{Path, PathBuf};

pub const RESULTS_FILE: &str = "results.jsonl";
/// The report's answers as data: what a re-run must reproduce (`bench/repeatability.sh`).
pub const ANSWERS_FILE: &str = "answers.json";

/// Kept at this path for the studies that hand their questions to `reports`.
pub use crate::analysis::questions::Questions;

/// Reads and checks `dir/results.jsonl`.
pub fn read_results(dir: &Path) -> Result<Dataset, Error> {
    if !dir.is_dir() {
        return Err(bad(format!(
            "{}: no such folder; give the folder `bytepath sweep --out` wrote",
            dir.display()
        )));
    }
    let path = dir.join(RESULTS_FILE);
    if !path.exists() {
        return Err(bad(format!(
            "{}: not found; is {} a folder written by `bytepath sweep`?",
            path.display(),
            dir.display()
        )));
    }
    let file = crate::record::read_results_file(dir)?;
    let mut data = load::dataset(file.lines, &path.display().to_string()).map_err(bad::<Error>)?;
    data.probe = read_probe(dir)?;
    data.margin = super::folder::MarkerHead::read(dir).and_then(|m| m.margin());
    data.verdicts = read_rounds(dir)?;
    Ok(data)
}

/// The crossover families' margin and looks from `dir/rounds.json`, which a sweep writes; the
/// defaults (one look, ±5 %) without it.
fn read_rounds(dir: &Path) -> Result<Settings, Error> {
    let path = dir.join(ROUNDS_JSON);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str::<RoundsHead>(&text)
            .ok()
            .and_then(|doc| Settings::from_rounds(&doc))
            .ok_or_else(|| {
                bad(format!(
                    "{}: not a rounds document (it needs \"looks\" ≥ 1 and \"margin\" between 0 and 1)",
                    path.display()
                ))
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
        Err(source) => Err(Error::File { path, source }),
    }
}

/// `dir/probe.json`, if the sweep recorded one.
fn read_probe(dir: &Path) -> Result<Option<ProbeView>, Error> {
    let path = dir.join(super::folder::PROBE_JSON);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| bad(format!("{}: not a probe document ({e})", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::File { path, source }),
    }
}

/// Renders both reports (report.md beside the HTML) and answers.json; returns the HTML path.
/// `margin` (`report --margin`) judges in place of the recorded margin; a margin
/// other than the study's is stated in the method text and recorded in the folder
/// (`margin_change`).
pub fn reports_within(
    dir: &Path,
    html_out: Option<&Path>,
    questions: &Questions,
    margin: Option<f64>,
) -> Result<PathBuf, Error> {
    let mut data = read_results(dir)?;
    let recorded = data.margin.unwrap_or(data.verdicts.margin);
    let judging = super::margin_change::judging(dir, recorded, margin)?;
    if judging.note.is_some() {
        // The crossover families and the method text's margin alike.
        data.verdicts.margin = judging.margin;
        data.margin = Some(judging.margin);
        data.margin_note = judging.note;
    }
    let source = dir.join(RESULTS_FILE).display().to_string();
    let html_path = html_out.map_or_else(|| dir.join("report.html"), Path::to_path_buf);
    let md_path = html_path.with_file_name("report.md");
    let page = html::page(&data, &source, questions);
    let document = markdown::document(&data, &source, questions);
    let (document, page, machine) = super::canary::with_machine(dir, &document, &page);
    // The figures' files first, so the reports never link a file that is not there yet.
    let beside = html_path.parent().unwrap_or(Path::new("."));
    let mut figures = super::figure_files::report_figures(&data);
    figures.extend(machine);
    super::figure_files::write(beside, &figures)?;
    super::folder::write_atomically(&html_path, &page)?;
    super::folder::write_atomically(&md_path, &document)?;
    super::folder::write_atomically(
        &html_path.with_file_name(ANSWERS_FILE),
        answers_json(&(questions.answers)(&data), &(questions.tested)(&data)),
    )?;
    Ok(html_path)
}

/// One answer of answers.json: question, verdict (`null` for an answer that is a figure),
/// finding and basis, and the family of tests it rests on (`families` where it has several).
#[derive(serde::Serialize)]
struct AnswerJson<'a> {
    question: &'a str,
    verdict: &'a Option<String>,
    finding: &'a str,
    rests_on: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    families: Option<Vec<&'a TestedAnswer>>,
    #[serde(flatten)]
    family: Option<FamilyJson<'a>>,
}

/// The one family a question rests on: its count of tests, correction and every cell's state.
#[derive(serde::Serialize)]
struct FamilyJson<'a> {
    tests: usize,
    correction: crate::stats::verdict::Correction,
    why_correction: &'a str,
    margin: f64,
    alpha: f64,
    cells: &'a [crate::analysis::tested::Cell],
}

/// Each answer's question, verdict, finding and basis, and where the answer rests on a family
/// of tests, its count, correction and every cell's state (`tests`, `correction`, `margin`,
/// `cells`). Keys in sorted order, as the document has always had them.
fn answers_json(answers: &[Answer], tested: &[TestedAnswer]) -> String {
    let answers: Vec<AnswerJson> = answers
        .iter()
        .map(|a| {
            let families: Vec<&TestedAnswer> =
                tested.iter().filter(|t| t.question == a.question).collect();
            // A question of several families (ipc's fastest, one per size) lists each whole.
            let family = match families[..] {
                [t] => Some(FamilyJson {
                    tests: t.tests,
                    correction: t.correction,
                    why_correction: t.why_correction,
                    margin: t.margin,
                    alpha: t.alpha,
                    cells: &t.cells,
                }),
                _ => None,
            };
            AnswerJson {
                question: a.question,
                verdict: &a.verdict,
                finding: &a.finding,
                rests_on: &a.rests_on,
                families: (families.len() > 1).then_some(families),
                family,
            }
        })
        .collect();
    // Through a `Value`, whose objects keep their keys sorted.
    let sorted = serde_json::to_value(&answers).expect("JSON");
    serde_json::to_string_pretty(&sorted).expect("JSON") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::synthetic::{jsonl, Shape};
    use crate::sweep::answers::QUESTIONS as SWEEP;

    fn folder(name: &str, results: Option<&str>) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("bytepath-write-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(text) = results {
            std::fs::write(dir.join(RESULTS_FILE), text).unwrap();
        }
        dir
    }

    fn message(e: Error) -> String {
        match e {
            Error::Config(c) => c.0,
            other => panic!("not an input error: {other}"),
        }
    }

    #[test]
    fn both_reports_are_written_beside_the_results() {
        let dir = folder("ok", Some(&jsonl(&[Shape::stream("copy", 4096, 1, 10.0)])));
        let html = reports_within(&dir, None, &SWEEP, None).unwrap();
        assert_eq!(html, dir.join("report.html"));
        assert!(std::fs::read_to_string(&html)
            .unwrap()
            .starts_with("<!DOCTYPE html>"));
        assert!(dir.join("report.md").exists());
        assert!(!dir.join("report.html.tmp").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_missing_folder_is_an_input_error() {
        let dir = std::env::temp_dir().join("bytepath-write-does-not-exist");
        assert!(
            message(reports_within(&dir, None, &SWEEP, None).unwrap_err())
                .contains("no such folder")
        );
    }

    #[test]
    fn a_folder_without_results_is_an_input_error() {
        let dir = folder("empty", None);
        let msg = message(reports_within(&dir, None, &SWEEP, None).unwrap_err());
        let expected = format!(
            "results.jsonl: not found; is {} a folder written by `bytepath sweep`?",
            dir.display()
        );
        assert!(msg.ends_with(&expected), "{msg}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_bad_line_overwrites_nothing() {
        let dir = folder("bad", Some("{\"schema_version\": 1}\n"));
        std::fs::write(dir.join("report.html"), "old").unwrap();
        let msg = message(reports_within(&dir, None, &SWEEP, None).unwrap_err());
        assert!(
            msg.contains("results.jsonl line 1: config.mechanism is missing"),
            "{msg}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("report.html")).unwrap(),
            "old"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
