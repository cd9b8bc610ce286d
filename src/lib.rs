//! bytepath: measures what it costs Linux to move bytes. The library holds everything; the
//! binary only parses arguments, calls in here and sets the exit code.
//!
//! The modules below are grouped by layer, bottom to top (docs/ARCHITECTURE.md holds the
//! table `tests/layers.rs` enforces): a module imports only from layers below it.
//!
//! | command | flags and parsing | what it runs | its report |
//! |---|---|---|---|
//! | `run` | `cli`, `args::run` | `run::study`, `engine` (one point) | `run::report` |
//! | `sweep`, `ipc`, `file`, `servers`, `mesh` | `args::<study>` | `study::drive` with the study's `Study` (`<study>::study`, beside its descriptor; mesh's runs through `remote`) | `<study>::answers`, `<study>::report`; `bytepath report` finds it in `studies` |
//! | `server` | `args::server` | `remote` (the server side) | — |
//! | `probe` | `args::probe` | `probe` | `probe` (text) |
//! | `report` | `args::report` | — (reads a results folder) | the study `studies` lists for its kind |
//! | `compare` | `args::compare` | `compare` | `compare`, `report` |
//! | `export` | `args::export` | `export` | the columns and samples of the study `studies` lists for its kind |
//! | `completions`, `man` | `args::shell` | — | — |
#![deny(unsafe_code)]

// Layer 0: the only `unsafe`.
/// Thin wrappers over the system calls std lacks.
pub mod sys;

// Layer 1: what moves bytes and what measures it.
/// Clocks, latency histograms, perf counters, machine-wide CPU, profiles.
pub mod measure;
/// Send mechanisms and receive paths behind one trait each.
pub mod mechanism;
/// What carries bytes between the two sides: sockets, pipes, shm; veth/netns links.
pub mod transport;

// Layer 2: validated plain data.
/// Validated configuration: `RunSpec`, patterns, pinning, network, limits.
pub mod config;
/// The library's error enum: input errors exit 2, run failures exit 1.
pub mod error;

// Layer 3: one point.
/// Measures one point: flows, threads, warm-up, window, slices, stop.
pub mod engine;

// Layer 4: what a point leaves behind.
/// The machine a run ran on.
pub mod environment;
/// `bytepath probe`: the machine's measured limits (roofline, syscall and clock cost).
pub mod probe;
/// The typed, versioned records one measured point produces.
pub mod record;
/// Statistics over slices and visits, and the visit schedule studies share.
pub mod stats;

// Layer 5: answers.
/// Derived answers from records (crossovers, costs, scaling, surprises).
pub mod analysis;

// Layer 6: rendering.
/// Exporters (JSON, CSV, Markdown, HTML with inline SVG) and folder reading.
pub mod report;

// Layer 7: what every study shares.
/// The one study driver: a results folder, its marker, the stream, the probe, the canaries,
/// the settle, the report and the ending, around what each study measures.
pub mod study;

// Layer 8: the studies.
/// `bytepath compare`: paired comparison of two results folders.
pub mod compare;
/// `bytepath file`: moving a file's bytes to a socket, warm and cold cache.
pub mod file;
/// `bytepath ipc`: one machine's IPC transports side by side.
pub mod ipc;
/// `bytepath mesh`: flows between many hosts at once.
pub mod mesh;
/// `bytepath run`: one point measured, with its counter run and profiled run.
pub mod run;
/// `bytepath servers`: echo-server designs under load.
pub mod servers;
/// `bytepath sweep`: a matrix of points in interleaved visits.
pub mod sweep;

// Layer 9: other hosts and other formats.
/// `bytepath export`: any study's folder as OpenMetrics, CSV or JSON.
pub mod export;
/// The control protocol, `bytepath server` and the client placement.
pub mod remote;
/// Where the two sides of a flow run: this host, two namespaces, or a remote server.
pub mod sides;
/// The one list of studies that write a results folder: their descriptors, which `report`
/// and `export` find a folder's study in.
pub mod studies;

// Layer 10: the command line.
/// Each command's flags to its spec, and spec to study; one-line errors.
pub mod args;
/// The clap structs of the command line.
pub mod cli;

// docs/ARCHITECTURE.md, compiled into the crate's documentation so that every item its prose
// links to must exist: `.ci/run` builds the documentation with broken links denied, so the map
// cannot name code that is gone. `architecture_tests` checks its word lists against the code.
#[cfg(doc)]
#[doc = include_str!("../docs/ARCHITECTURE.md")]
mod architecture {}
#[cfg(test)]
mod architecture_tests;

/// Says that the running unit test, or `part` of it, did not run here, and why: the twin of
/// `skip` in tests/common/mod.rs (integration tests cannot see this crate's test-only code).
/// One line `SKIP bytepath::<test>[ (part)]: <reason>` on stderr, appended to the file
/// `BYTEPATH_SKIP_LOG` names when set, which `.ci/run` sums up after `cargo test`.
#[cfg(test)]
pub(crate) fn skip_test(part: Option<&str>, reason: impl std::fmt::Display) {
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("(a thread of its own)");
    let part = part.map(|p| format!(" ({p})")).unwrap_or_default();
    let reason = reason.to_string().replace('\n', " ");
    let line = format!(
        "SKIP {}::{test}{part}: {reason}\n",
        env!("CARGO_CRATE_NAME")
    );
    eprint!("{line}");
    if let Some(path) = std::env::var_os("BYTEPATH_SKIP_LOG") {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut log| log.write_all(line.as_bytes()))
            .unwrap_or_else(|e| panic!("BYTEPATH_SKIP_LOG {}: {e}", path.to_string_lossy()));
    }
}
