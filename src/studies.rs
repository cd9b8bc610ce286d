//! The one list of studies that write a results folder: each study's descriptor
//! (`study::StudyKind`, defined in the study's own folder beside its `Study`). The commands
//! that read folders are handed this list: `bytepath report DIR` renders a folder by the study
//! its marker names, `bytepath export DIR` takes that study's CSV columns and OpenMetrics
//! samples. A new study is its own folder (spec, study with its descriptor, answers, report)
//! and its line here; outside it remain its `pub mod` line in `lib.rs`, its command line in
//! layer 10 (the clap subcommand in `cli`, flags to spec in `args`, the dispatch in `main`)
//! and its row in docs/ARCHITECTURE.md's study table.
use crate::study::StudyKind;

/// Every study that writes a results folder.
pub const STUDIES: [StudyKind; 5] = [
    crate::sweep::KIND,
    crate::ipc::KIND,
    crate::file::KIND,
    crate::servers::KIND,
    crate::mesh::KIND,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::marker::SWEEP_KIND;
    use crate::study::ReportOptions;

    #[test]
    fn no_two_studies_share_a_marker_or_a_command_and_the_sweep_is_one() {
        for (i, a) in STUDIES.iter().enumerate() {
            for b in &STUDIES[i + 1..] {
                assert_ne!(a.marker(), b.marker());
                assert_ne!(a.command(), b.command());
            }
            assert_eq!(StudyKind::among(&STUDIES, a.marker()), Some(*a));
        }
        assert_eq!(StudyKind::reading(&STUDIES, None), crate::sweep::KIND);
        assert_eq!(crate::sweep::KIND.marker(), SWEEP_KIND);
        assert_eq!(StudyKind::among(&STUDIES, "bytepath run results"), None);
    }

    #[test]
    fn a_folder_is_rendered_by_the_study_its_marker_names() {
        let dir = tempfile::tempdir().unwrap();
        let marker = crate::report::folder::Marker::new(
            crate::mesh::KIND.marker(),
            serde_json::json!({}),
            serde_json::json!({}),
            0,
            "",
        );
        std::fs::write(
            dir.path().join(crate::report::folder::MARKER),
            marker.to_value().to_string(),
        )
        .unwrap();
        let kind = crate::report::study::kind(dir.path());
        let study = StudyKind::reading(&STUDIES, kind.as_deref());
        assert_eq!(study, crate::mesh::KIND);
        // A mesh renders its own folder: --output is refused before anything is read.
        let options = ReportOptions {
            output: Some(dir.path().join("elsewhere.html")),
            margin: None,
        };
        let refused = (study.render)(dir.path(), &options).unwrap_err();
        assert!(refused.to_string().contains("--output"), "{refused}");
        // Nor does it take a margin it would not judge at: refused, never ignored.
        let options = ReportOptions {
            output: None,
            margin: Some(0.02),
        };
        let refused = (study.render)(dir.path(), &options).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("--margin 2 %: a mesh folder's report"),
            "{refused}"
        );
    }
}
