//! The two results folders a study writes, as the driver opens them: a folder of visits
//! (`VisitFolder`: visits.jsonl appended, one record per point rewritten after each round; the
//! sweep and ipc) and a folder of records appended as they end (`ResultsFolder`: each a visit
//! of a point, a transfer or a run; file, servers, mesh). Either is opened new, or with
//! `--resume` continued, from the study's marker, and streams what it takes to `--json-stream`.
use crate::error::Error;
use crate::report::csv::Column;
use crate::report::folder::{self, Prior, ResultsFolder, StreamAs, StudyOutput};
use crate::report::visit_folder::{self, PriorVisits, VisitFolder};
use serde_json::Value;
use std::path::Path;

pub trait StudyFolder: Sized {
    /// What the study says of its folder beyond the marker (the CSV columns of its records).
    type Layout;
    /// What a resumed folder held.
    type Prior;

    /// Opens the folder `output` names (a new one, or with `--resume` the one to continue)
    /// for `marker`, and from then on tells the stream what it takes.
    fn open(
        output: &StudyOutput,
        marker: &Value,
        layout: Self::Layout,
    ) -> Result<(Self, Self::Prior), Error>;

    fn dir(&self) -> &Path;

    /// The file its visits are in, where each holds an interference block: the machine's
    /// summary line at the end reads it.
    fn visits_file(&self) -> Option<&'static str>;
}

impl StudyFolder for VisitFolder {
    type Layout = ();
    type Prior = PriorVisits;

    fn open(output: &StudyOutput, marker: &Value, (): ()) -> Result<(Self, PriorVisits), Error> {
        let (mut folder, prior) = visit_folder::open(output.out.as_deref(), output.resume, marker)?;
        folder.stream = output.stream.clone();
        Ok((folder, prior))
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn visits_file(&self) -> Option<&'static str> {
        Some(visit_folder::VISITS_JSONL)
    }
}

/// A folder of records: what results.csv holds of each, and what each is on the stream.
pub struct Records {
    pub columns: Vec<Column>,
    pub stream_as: StreamAs,
}

impl StudyFolder for ResultsFolder {
    type Layout = Records;
    type Prior = Prior;

    fn open(output: &StudyOutput, marker: &Value, layout: Records) -> Result<(Self, Prior), Error> {
        let (mut folder, prior) =
            folder::open_with(output.out.as_deref(), output.resume, marker, layout.columns)?;
        folder.stream_as(&output.stream, layout.stream_as);
        Ok((folder, prior))
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn visits_file(&self) -> Option<&'static str> {
        None
    }
}
