//! `bytepath ipc`: the seeds' IPC study on the run engine (no second engine). Latency is a
//! ping-pong of `--trials` round trips (rr); bandwidth moves `--bytes` in writes of each size
//! (stream, timed on the receiving side, so the time covers delivery, not buffering). The
//! pipe buffer (and the shm ring) is a dimension of the study with `--pipe-sizes`. Every point
//! is measured in `--visits` visits, the transports of one (measure, size) visited back to back
//! in a seeded order (`study`), so the report's answers (`answers`) rest on paired ratios. The
//! study's parts are those of every study: `spec`, `study` (what the study driver runs),
//! `answers`, `report`.
pub(crate) mod answers;
mod cost;
mod fastest;
mod fit;
mod peak;
pub(crate) mod report;
mod series;
mod spec;
mod study;

pub use spec::{has_buffer, IpcSpec, Measure, Point};
pub use study::{Ipc, KIND};
