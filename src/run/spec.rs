//! What `bytepath run` measures: the placed `config::RunSpec` (built from the flags by
//! `args::run`) and what the command line adds to it.
use crate::engine::worker::Role;
use crate::report::stream::JsonStream;

/// What the command line adds to the placed spec.
pub struct RunStudy<'a> {
    /// The CPUs this process may use (the environment block names them).
    pub cpus: &'a [usize],
    /// `--profile`: the profiled rerun after the headline run.
    pub profile: bool,
    /// `--count-copies`: a run with the kernel's tracepoints open after the headline run.
    pub count_copies: bool,
    /// With `--remote`: the side the server runs, which this host cannot sample.
    pub theirs: Option<Role>,
    pub stream: &'a JsonStream,
}
