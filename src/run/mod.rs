//! `bytepath run`'s study: one point measured in a placement and its record built (with a
//! stream: the start line, a line per slice, the point), and with `--profile` the same point
//! once more, sampled, its blocks put on the headline record with a quick probe's memcpy as
//! the unit of copies' worth. The headline run opens no perf counter; with counters asked
//! for, a counter run of its own follows it (`counters`), and with `--count-copies` a run with
//! the kernel's tracepoints open (`copies`). With `--under-load` the headline is measured in
//! paired visits without and with the load (`paired`), each visit one run (`visit`).
//! `args::run` turns the flags into the spec.
//!
//! Its parts, as every study's: `spec` (what to measure), `study` (the measuring), `report`
//! (the record as a table, JSON or the stream's last line). A run answers no question of its
//! own: it compares nothing, so it has no `answers`.
pub(crate) mod copies;
pub(crate) mod counters;
pub(crate) mod paired;
pub(crate) mod report;
pub(crate) mod spec;
pub(crate) mod study;
pub(crate) mod visit;

pub use spec::RunStudy;
pub use study::measure_point;
