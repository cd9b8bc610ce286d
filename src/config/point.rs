//! One point of a matrix of runs, as sweeps and meshes name it: (mechanism, pattern, message
//! size, flows), with the key that identifies it across studies and folders.
use super::Pattern;
use crate::mechanism::MechanismKind;

/// One point of a matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub mechanism: MechanismKind,
    pub pattern: Pattern,
    pub message_size: usize,
    pub threads: usize,
    /// `sweep --bidir`: the point's flows carry data both ways at once (its one-way twin is
    /// the same point with this false).
    pub bidir: bool,
    /// `sweep --sink --beside-loopback`: the point visited over loopback UDP, beside its twin
    /// on the sink (a local receiver, so the kernel copies what zero copy lends).
    pub loopback_twin: bool,
    /// `sweep --under-load N` (rr): the point visited with the sweep's load flows beside it
    /// (its twin without load is the same point with this false, in the same group).
    pub under_load: bool,
}

impl Point {
    /// Identifies the point across sweeps: `mechanism/pattern/size/threads`, then `/bidir`
    /// for a point whose flows go both ways and `/loopback` for a sink's loopback twin (other
    /// keys stay as they always were), `/under-load` for an rr point visited beside `--under-load`'s
    /// flows.
    pub fn key(&self) -> String {
        format!(
            "{}/{}/{}/{}{}{}{}",
            self.mechanism.name(),
            self.pattern.name(),
            self.message_size,
            self.threads,
            if self.bidir { "/bidir" } else { "" },
            if self.loopback_twin { "/loopback" } else { "" },
            if self.under_load { "/under-load" } else { "" }
        )
    }
}
