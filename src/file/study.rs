//! The file study as the study driver runs it (`study::Study`): every size in turn, every
//! repetition a round of transfers (`rounds`), each transfer's record appended to results.jsonl
//! as it ends (a visit line on the stream). When they end: a summary per (size, mechanism,
//! cache) on the stream's point lines, the table (or the study as `--json`) and the report.
use super::record::{self, FileStudy, FileSummary, TransferRecord, SCHEMA_VERSION};
use super::test_files::{self, ServedFile, TestFolder};
use super::{report, rounds, FileSpec, Server, Source, ORDER};
use crate::environment::Environment;
use crate::error::Error;
use crate::report::folder::{Prior, ResultsFolder, StreamAs};
use crate::study::folder::Records;
use crate::study::{
    Ending, Outcome, Plan, ReportOptions, Study, StudyDescriptor, StudyKind, Underway, Watching,
};
use std::path::{Path, PathBuf};

/// One file study: what it sends, where the server side runs, and the transfers made.
pub struct Transfers<'a> {
    spec: &'a FileSpec,
    server: Server<'a>,
    /// `--file`: the user's file, sent as it is.
    user_file: Option<ServedFile>,
    /// Whether test files are written here (not with `--file`, nor with `--remote`).
    local_files: bool,
    /// The sizes measured: the user's file's own, or `--sizes`.
    sizes: Vec<u64>,
    /// The test files' folder, removed with the study however it ends (`?`, Ctrl-C).
    test_folder: Option<TestFolder>,
    transfers: Vec<TransferRecord>,
    failed: bool,
    /// The study's document, once the transfers have ended.
    document: Option<FileStudy>,
}

/// A summary as the stream's point line carries it: with how its transfers went.
#[derive(serde::Serialize)]
pub struct SummaryLine {
    #[serde(flatten)]
    summary: FileSummary,
    status: &'static str,
}

impl<'a> Transfers<'a> {
    /// The study `spec` asks for, its server side on `server`. The user's file is opened, and
    /// the temporary folder's room for the test files checked, before anything is written.
    pub fn new(spec: &'a FileSpec, server: Server<'a>) -> Result<Transfers<'a>, Error> {
        let user_file = match &spec.user_file {
            Some(path) => Some(test_files::user_file(path, spec.verify)?),
            None => None,
        };
        let local_files = user_file.is_none() && spec.remote.is_none();
        if local_files {
            check_space(spec, &std::env::temp_dir())?;
        }
        let sizes = match &user_file {
            Some(f) => vec![f.len],
            None => spec.sizes.clone(),
        };
        Ok(Transfers {
            spec,
            server,
            user_file,
            local_files,
            sizes,
            test_folder: None,
            transfers: Vec::new(),
            failed: false,
            document: None,
        })
    }

    fn document(&self) -> &FileStudy {
        self.document.as_ref().expect("the transfers have ended")
    }
}

/// The file study as the commands that read its folders know it.
static DESCRIPTOR: StudyDescriptor = StudyDescriptor {
    marker: "bytepath file results",
    name: "file study",
    command: "file",
    render: Transfers::render,
    csv_columns: record::csv_columns,
    samples: super::openmetrics::samples,
};

/// The file study (`studies::STUDIES` lists it).
pub const KIND: StudyKind = StudyKind::new(&DESCRIPTOR);

impl Study for Transfers<'_> {
    type Folder = ResultsFolder;
    type Point = SummaryLine;

    fn kind(&self) -> StudyKind {
        KIND
    }

    fn plan(&self) -> Plan {
        let spec = self.spec;
        Plan {
            spec: serde_json::to_value(spec.config(&self.sizes, self.server)).expect("JSON"),
            points: self.sizes.len()
                * spec.mechanisms.len()
                * spec.caches.len()
                * spec.reps as usize,
            order: ORDER,
        }
    }

    /// Each transfer is a visit line; the summaries per (size, mechanism) are the point lines.
    fn layout(&self) -> Records {
        Records {
            columns: record::csv_columns(),
            stream_as: StreamAs::Visits,
        }
    }

    /// No settle and no probe; the canaries between repetitions run on the CPUs allowed.
    fn watching(&self) -> Watching<'_> {
        Watching {
            cpus: crate::sys::affinity::allowed_cpus().unwrap_or_default(),
            ..Watching::default()
        }
    }

    fn begin(&mut self, run: &mut Underway<'_, ResultsFolder>, _: Prior) -> Result<(), Error> {
        let temp = std::env::temp_dir();
        if self.local_files {
            let folder = TestFolder::create(&temp).map_err(|source| Error::File {
                path: temp.clone(),
                source,
            })?;
            self.test_folder = Some(folder);
        }
        if let Some(t) = &self.test_folder {
            eprintln!("file: test files in {}", t.dir.display());
        }
        if let Some(remote) = &self.spec.remote {
            eprintln!(
                "file: the server at {} writes and sends the files; this host receives",
                remote.target
            );
        }
        eprintln!("file: results in {}", run.dir().display());
        Ok(())
    }

    fn measure(&mut self, run: &mut Underway<'_, ResultsFolder>) -> Result<Ending, Error> {
        let source = match (&self.user_file, &self.test_folder, self.server) {
            (Some(f), _, _) => Source::User(f),
            (None, Some(t), _) => Source::Test(t),
            (None, None, Server::Remote(_)) => Source::Server,
            (None, None, Server::Here(_)) => unreachable!("test files here have a folder"),
        };
        let sizes = (self.sizes.as_slice(), source);
        let status = rounds::measure_all(self.spec, self.server, sizes, run, &mut self.transfers)?;
        self.failed = status == crate::error::Status::Failed;
        Ok(match status {
            crate::error::Status::Interrupted => Ending::Interrupted,
            _ => Ending::Completed,
        })
    }

    /// The study's document, and each summary as a point line.
    fn points(
        &mut self,
        _: &mut Underway<'_, ResultsFolder>,
        ending: Ending,
    ) -> Result<Vec<SummaryLine>, Error> {
        let spec = self.spec;
        let config = spec.config(&self.sizes, self.server);
        let summaries = record::summarize_transfers(
            &self.sizes,
            &spec.mechanisms,
            &config.caches(),
            &self.transfers,
        );
        let lines = summaries
            .iter()
            .map(|summary| SummaryLine {
                summary: summary.clone(),
                status: if summary.reps_failed == 0 && summary.reps_measured > 0 {
                    "completed"
                } else {
                    "failed"
                },
            })
            .collect();
        self.document = Some(FileStudy {
            schema_version: SCHEMA_VERSION,
            command: "file",
            config,
            environment: Some(Environment::detect(&spec.cpus)),
            status: match (ending, self.failed) {
                (Ending::Interrupted, _) => "interrupted",
                (_, true) => "failed",
                (_, false) => "completed",
            },
            summaries,
            transfers: std::mem::take(&mut self.transfers),
        });
        Ok(lines)
    }

    /// The table, or the study as JSON (`--json`).
    fn show(&self, run: &Underway<'_, ResultsFolder>, _: &[SummaryLine]) {
        let document = self.document();
        if run.output.json {
            println!("{}", serde_json::to_string_pretty(document).expect("JSON"));
        } else {
            print!("{}", report::text_table(document));
        }
    }

    /// From the study's document, which holds the machine it ran on.
    fn report(&self, dir: &Path) -> Result<PathBuf, Error> {
        report::write(dir, self.document())?;
        Ok(dir.join(report::HTML))
    }

    fn render(dir: &Path, options: &ReportOptions) -> Result<PathBuf, Error> {
        options.folder_only(KIND)?;
        report::rerender(dir, options.margin)
    }

    fn outcome(
        &self,
        _: &Underway<'_, ResultsFolder>,
        _: &[SummaryLine],
    ) -> Result<Outcome, Error> {
        Ok(match self.failed {
            true => Outcome::Failed { said: None },
            false => Outcome::Passed,
        })
    }
}

/// Room for the test files in the temporary folder, checked before anything is written.
fn check_space(spec: &FileSpec, temp: &Path) -> Result<(), Error> {
    let available = test_files::available_space(temp).map_err(|source| Error::File {
        path: temp.to_path_buf(),
        source,
    })?;
    Ok(test_files::check_space(&spec.sizes, temp, available)?)
}
