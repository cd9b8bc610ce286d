//! The one list of studies that write a results folder: for each kind of folder (its marker's
//! `kind`, `report::study_kind`), the study that writes it and renders it again (`bytepath
//! report DIR`, through `Study::render`, one signature for every study). A new study is its
//! own folder (spec, study, answers, report, its `Study`) and its entry here; what remains
//! outside it is its kind's row in `report::study_kind` and its command line in layer 10 (the
//! clap subcommand in `cli`, flags to spec in `args`, the dispatch in `main`).
use crate::error::Error;
use crate::report::study_kind::StudyKind;
use crate::study::{ReportOptions, Study};
use std::path::{Path, PathBuf};

/// One study as the commands that read folders find it.
pub struct Registered {
    pub kind: StudyKind,
    /// Renders a folder of this study; the HTML path.
    pub render: fn(&Path, &ReportOptions) -> Result<PathBuf, Error>,
}

/// Every study that writes a results folder.
pub const STUDIES: [Registered; 5] = [
    Registered {
        kind: StudyKind::Sweep,
        render: crate::sweep::Sweep::render,
    },
    Registered {
        kind: StudyKind::Ipc,
        render: crate::ipc::Ipc::render,
    },
    Registered {
        kind: StudyKind::File,
        render: crate::file::Transfers::render,
    },
    Registered {
        kind: StudyKind::Servers,
        render: crate::servers::Servers::render,
    },
    Registered {
        kind: StudyKind::Mesh,
        render: crate::mesh::Mesh::render,
    },
];

/// The study of a kind.
pub fn of(kind: StudyKind) -> &'static Registered {
    STUDIES
        .iter()
        .find(|s| s.kind == kind)
        .expect("every study kind is registered")
}

/// The study whose folder `dir` is, as its marker says; `None` without a readable marker or
/// for a kind this bytepath does not know.
pub fn of_folder(dir: &Path) -> Option<&'static Registered> {
    crate::report::study::study_kind(dir).map(of)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_folder_has_exactly_one_study() {
        for kind in StudyKind::ALL {
            let entries = STUDIES.iter().filter(|s| s.kind == kind).count();
            assert_eq!(entries, 1, "{kind:?}");
        }
        assert_eq!(STUDIES.len(), StudyKind::ALL.len());
    }

    #[test]
    fn a_folder_is_rendered_by_the_study_its_marker_names() {
        let dir = tempfile::tempdir().unwrap();
        assert!(of_folder(dir.path()).is_none(), "no marker, no study");
        let marker = crate::report::folder::Marker::new(
            StudyKind::Mesh,
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
        let study = of_folder(dir.path()).unwrap();
        assert_eq!(study.kind, StudyKind::Mesh);
        // A mesh renders its own folder: --output is refused before anything is read.
        let options = ReportOptions {
            output: Some(dir.path().join("elsewhere.html")),
            margin: None,
        };
        let refused = (study.render)(dir.path(), &options).unwrap_err();
        assert!(refused.to_string().contains("--output"), "{refused}");
    }
}
