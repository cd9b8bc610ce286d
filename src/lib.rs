//! bytepath: measures what it costs Linux to move bytes. The library holds everything; the
//! binary only parses arguments, calls in here and sets the exit code.
#![deny(unsafe_code)]

pub mod analysis;
pub mod args;
pub mod cli;
pub mod compare;
pub mod config;
pub mod engine;
pub mod environment;
pub mod error;
pub mod export;
pub mod file;
pub mod ipc;
pub mod measure;
pub mod mechanism;
pub mod mesh;
pub mod probe;
pub mod record;
pub mod remote;
pub mod report;
pub mod servers;
pub mod sides;
pub mod stats;
pub mod sweep;
pub mod sys;
pub mod transport;
