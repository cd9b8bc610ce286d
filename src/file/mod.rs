//! `bytepath file`: the seeds' zero-copy file-server study. A server thread sends a file over
//! loopback TCP with read+send, sendfile(2), splice(2) or mmap(2)+send, a client thread
//! receives it; each (size, mechanism) is timed over `--reps` transfers with the page cache warm
//! or dropped (cold), and the results become a table, results.jsonl and a report.
pub(crate) mod answers;

pub(crate) mod mechanisms;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod server;
mod spec;
mod study;
pub(crate) mod test_files;
pub(crate) mod transfer;

use crate::environment::Environment;
use crate::error::{Error, Status};
use crate::report::folder::{self, StudyOutput};
use crate::transport::FlowConnector;
use record::{FileStudy, TransferRecord, SCHEMA_VERSION};
use server::FileServer;
pub use spec::{check_pipe_size, Cache, FileSpec, MAX_CHUNK};
use std::path::Path;
use std::sync::atomic::AtomicBool;
pub use study::{prepare_cache, read_through};
use test_files::{ServedFile, TestFolder};

pub const FILE_KIND: &str = crate::report::study_kind::StudyKind::File.marker();
/// Where the server side of every transfer runs: a thread here, on a flow from the link's
/// connector, or `bytepath server` on another host (`--remote`).
#[derive(Clone, Copy)]
pub enum Server<'a> {
    Here(&'a dyn FlowConnector),
    Remote(&'a dyn FileServer),
}

/// Where the served files come from.
#[derive(Clone, Copy)]
enum Source<'a> {
    User(&'a ServedFile),
    Test(&'a TestFolder),
    /// The remote server writes a test file per transfer.
    Server,
}

/// The user's file (`--file`) if one is given, and whether test files are written here (not
/// with `--file`, nor with `--remote`, whose server writes them and checks its own space);
/// refuses before anything is measured when the temporary folder lacks room for them. Also
/// the sizes measured: the user's file's own, or `--sizes`.
fn files_to_send(spec: &FileSpec) -> Result<(Option<ServedFile>, bool, Vec<u64>), Error> {
    let user_file = match &spec.user_file {
        Some(path) => Some(test_files::user_file(path, spec.verify)?),
        None => None,
    };
    let temp = std::env::temp_dir();
    let local_files = user_file.is_none() && spec.remote.is_none();
    if local_files {
        check_space(spec, &temp)?;
    }
    let sizes = match &user_file {
        Some(f) => vec![f.len],
        None => spec.sizes.clone(),
    };
    Ok((user_file, local_files, sizes))
}

/// Measures every transfer `spec` asks for, its server side on `server`, into a new results
/// folder; writes the report and prints the table (or the study as JSON).
pub fn run(
    spec: &FileSpec,
    output: &StudyOutput,
    server: Server<'_>,
    interrupt: &AtomicBool,
) -> Result<Status, Error> {
    let (user_file, local_files, sizes) = files_to_send(spec)?;
    let temp = std::env::temp_dir();
    let marker = marker(spec, output, server, &sizes);
    let (mut results, _) =
        folder::open_with(output.out.as_deref(), false, &marker, record::csv_columns())?;
    // Each transfer is a visit line; the summaries per (size, mechanism) are the point lines.
    results.stream_to(output, "file", &marker, folder::StreamAs::Visits);
    // Removed on drop: on every return from here on, `?` included, and after Ctrl-C, which only
    // sets `interrupt` and lets this function return normally.
    let test_folder = local_files.then(|| test_folder(&temp)).transpose()?;
    announce(spec, &test_folder, &results.dir);
    let source = match (&user_file, &test_folder, server) {
        (Some(f), _, _) => Source::User(f),
        (None, Some(t), _) => Source::Test(t),
        (None, None, Server::Remote(_)) => Source::Server,
        (None, None, Server::Here(_)) => unreachable!("test files here have a folder"),
    };
    let mut transfers = Vec::new();
    let status = study::measure_all(
        spec,
        server,
        &sizes,
        source,
        interrupt,
        &mut results,
        &mut transfers,
    )?;
    finish(
        spec,
        output,
        server,
        &sizes,
        status,
        transfers,
        &results.dir,
    )?;
    drop(test_folder);
    Ok(status)
}

/// A folder of its own for the test files under the temporary directory.
fn test_folder(temp: &Path) -> Result<TestFolder, Error> {
    TestFolder::create(temp).map_err(|source| Error::File {
        path: temp.to_path_buf(),
        source,
    })
}

/// Room for the test files in the temporary folder, checked before anything is written.
fn check_space(spec: &FileSpec, temp: &Path) -> Result<(), Error> {
    let available = test_files::available_space(temp).map_err(|source| Error::File {
        path: temp.to_path_buf(),
        source,
    })?;
    Ok(test_files::check_space(&spec.sizes, temp, available)?)
}

/// The results folder's marker: the study's configuration, its flags as given, how many
/// transfers it makes and in which order.
fn marker(
    spec: &FileSpec,
    output: &StudyOutput,
    server: Server<'_>,
    sizes: &[u64],
) -> serde_json::Value {
    folder::marker(
        FILE_KIND,
        serde_json::to_value(spec.config(sizes, server)).expect("JSON"),
        output.arguments.clone(),
        sizes.len() * spec.mechanisms.len() * spec.caches.len() * spec.reps as usize,
        study::ORDER,
    )
}

/// Where the files are and where the results go, before the first transfer.
fn announce(spec: &FileSpec, test_folder: &Option<TestFolder>, results: &Path) {
    if let Some(t) = test_folder {
        eprintln!("file: test files in {}", t.dir.display());
    }
    if let Some(remote) = &spec.remote {
        eprintln!(
            "file: the server at {} writes and sends the files; this host receives",
            remote.target
        );
    }
    eprintln!("file: results in {}", results.display());
}

/// The study's document: written as the report, printed as the table or as JSON.
fn finish(
    spec: &FileSpec,
    output: &StudyOutput,
    server: Server<'_>,
    sizes: &[u64],
    status: Status,
    transfers: Vec<TransferRecord>,
    dir: &Path,
) -> Result<(), Error> {
    let study = FileStudy {
        schema_version: SCHEMA_VERSION,
        command: "file",
        config: spec.config(sizes, server),
        environment: Some(Environment::detect(&spec.cpus)),
        status: match status {
            Status::Success => "completed",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        },
        summaries: record::summarize_transfers(
            sizes,
            &spec.mechanisms,
            &spec.config(sizes, server).caches(),
            &transfers,
        ),
        transfers,
    };
    report::write(dir, &study)?;
    for summary in &study.summaries {
        let mut line = serde_json::to_value(summary).expect("JSON");
        line["status"] =
            serde_json::json!(if summary.reps_failed == 0 && summary.reps_measured > 0 {
                "completed"
            } else {
                "failed"
            });
        output.stream.point(&line);
    }
    if output.json {
        println!("{}", serde_json::to_string_pretty(&study).expect("JSON"));
    } else {
        print!("{}", report::text_table(&study));
        println!("report: {}", dir.join(report::HTML).display());
    }
    Ok(())
}
