//! How much of each study was measured beside other work: the share of its headline visits
//! whose interference block (issue 25) marked them disturbed. The canary sees a change of the
//! machine itself (slower system calls, memory, wake-ups); a study whose visits were taken while
//! others used its CPUs can read slower with an unchanged canary, and compare says which.
use crate::probe::watch::visit_blocks;
use crate::report::visit_folder::VISITS_JSONL;
use std::path::Path;

/// Above this share of disturbed visits, a study's figures are said to be the contention's.
const MOSTLY: f64 = 0.25;

/// (disturbed, judged) headline visits of the study in `dir`; `None` where its visits carry no
/// interference blocks (a folder from before them, or a study without visits).
pub fn disturbed(dir: &Path) -> Option<(usize, usize)> {
    let judged: Vec<bool> = visit_blocks(&dir.join(VISITS_JSONL))
        .into_iter()
        .filter_map(|r| r.visit)
        .filter(|v| v.kind.as_deref() == Some("headline"))
        .filter_map(|v| v.interference?.disturbed)
        .collect();
    (!judged.is_empty()).then(|| (judged.iter().filter(|d| **d).count(), judged.len()))
}

/// The interference line compare prints after the machine line.
pub fn line(old: Option<(usize, usize)>, new: Option<(usize, usize)>) -> String {
    let side = |s: Option<(usize, usize)>| match s {
        Some((d, n)) => format!("{d} of {n} headline visits disturbed"),
        None => "no interference recorded".into(),
    };
    format!(
        "interference: old {}, new {} (others used more than the run's --quiet-threshold of its CPUs)",
        side(old),
        side(new)
    )
}

/// The summary's warning where a study was mostly measured beside other work.
pub fn note(old: Option<(usize, usize)>, new: Option<(usize, usize)>) -> Option<String> {
    let mostly = |s: Option<(usize, usize)>| s.filter(|(d, n)| *d as f64 > MOSTLY * *n as f64);
    let named: Vec<String> = [("old", mostly(old)), ("new", mostly(new))]
        .into_iter()
        .filter_map(|(which, s)| s.map(|(d, n)| format!("the {which} study ({d} of {n})")))
        .collect();
    (!named.is_empty()).then(|| {
        format!(
            "note: most visits of {} were taken while other work used the run's CPUs: its point verdicts measure that contention, not the build (measure it again on a quiet machine, or with --settle on)",
            named.join(" and ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(lines: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(VISITS_JSONL), lines.join("\n")).unwrap();
        dir
    }

    const BUSY: &str = r#"{"visit":{"kind":"headline","interference":{"disturbed":true}}}"#;
    const QUIET: &str = r#"{"visit":{"kind":"headline","interference":{"disturbed":false}}}"#;
    const COUNTERS: &str = r#"{"visit":{"kind":"counters","interference":{"disturbed":true}}}"#;

    #[test]
    fn a_study_mostly_taken_beside_other_work_is_named_and_a_quiet_one_is_not() {
        let busy = folder(&[BUSY, BUSY, QUIET, COUNTERS]);
        let quiet = folder(&[QUIET, QUIET, QUIET, BUSY]);
        let (b, q) = (disturbed(busy.path()), disturbed(quiet.path()));
        assert_eq!((b, q), (Some((2, 3)), Some((1, 4))));
        assert_eq!(
            line(q, b),
            "interference: old 1 of 4 headline visits disturbed, new 2 of 3 headline visits disturbed (others used more than the run's --quiet-threshold of its CPUs)"
        );
        let n = note(q, b).expect("the new study is named");
        assert!(
            n.contains("the new study (2 of 3)") && !n.contains("old"),
            "{n}"
        );
        assert_eq!(note(q, q), None, "1 of 4 is not most");
    }

    #[test]
    fn folders_without_interference_blocks_say_so() {
        let older = folder(&[r#"{"visit":{"kind":"headline"}}"#]);
        assert_eq!(disturbed(older.path()), None);
        assert!(line(None, None).contains("old no interference recorded"));
        assert_eq!(note(None, None), None);
    }
}
