//! The one table of study kinds: which study wrote a results folder, as its marker's `kind`
//! says, and what that means to the commands that read folders (`report`, `export`). Every
//! marker kind string lives here; the studies' `*_KIND` constants name these entries.

/// A study that writes a results folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StudyKind {
    Sweep,
    Ipc,
    File,
    Servers,
    Mesh,
}

impl StudyKind {
    pub const ALL: [StudyKind; 5] = [
        StudyKind::Sweep,
        StudyKind::Ipc,
        StudyKind::File,
        StudyKind::Servers,
        StudyKind::Mesh,
    ];

    /// The marker's `kind`: what makes a folder this study's.
    pub const fn marker(self) -> &'static str {
        match self {
            StudyKind::Sweep => "bytepath sweep results",
            StudyKind::Ipc => "bytepath ipc results",
            StudyKind::File => "bytepath file results",
            StudyKind::Servers => "bytepath servers results",
            StudyKind::Mesh => "bytepath mesh results",
        }
    }

    /// The study in a message's words ("a file study folder's report …").
    pub fn name(self) -> &'static str {
        match self {
            StudyKind::Sweep => "sweep",
            StudyKind::Ipc => "ipc study",
            StudyKind::File => "file study",
            StudyKind::Servers => "servers study",
            StudyKind::Mesh => "mesh",
        }
    }

    /// The command that runs it, as the `--json-stream` start line names it.
    pub fn command(self) -> &'static str {
        match self {
            StudyKind::Sweep => "sweep",
            StudyKind::Ipc => "ipc",
            StudyKind::File => "file",
            StudyKind::Servers => "servers",
            StudyKind::Mesh => "mesh",
        }
    }

    /// Whether the folder's records are run records (one per point), read by the run-record
    /// report and export; the others are the study's own records and it renders them itself.
    pub fn writes_run_records(self) -> bool {
        matches!(self, StudyKind::Sweep | StudyKind::Ipc)
    }

    /// The kind a marker's `kind` text names.
    pub fn from_marker(kind: &str) -> Option<StudyKind> {
        StudyKind::ALL.into_iter().find(|k| k.marker() == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_marker_and_no_two_share_one() {
        for kind in StudyKind::ALL {
            assert_eq!(StudyKind::from_marker(kind.marker()), Some(kind));
        }
        assert_eq!(StudyKind::from_marker("bytepath run results"), None);
        let run_records: Vec<_> = StudyKind::ALL
            .into_iter()
            .filter(|k| k.writes_run_records())
            .collect();
        assert_eq!(run_records, [StudyKind::Sweep, StudyKind::Ipc]);
    }
}
