//! What entering the kernel costs: raw syscall(2) of getpid and getuid (no libc wrapper, no
//! cache, no vDSO), the floor under every send, recv and splice.
use super::summary::{time_batches, Timing};
use super::Effort;
use crate::sys::support::{raw_getpid, raw_getuid};
use serde::Serialize;
use std::hint::black_box;

/// System calls per timed batch.
const CALLS_PER_BATCH: usize = 64;

#[derive(Debug, Clone, Serialize)]
pub struct Syscalls {
    pub getpid: Timing,
    pub getuid: Timing,
}

pub fn measure(effort: &Effort) -> Syscalls {
    Syscalls {
        getpid: time_batches(effort.trials, CALLS_PER_BATCH, || {
            black_box(raw_getpid());
        }),
        getuid: time_batches(effort.trials, CALLS_PER_BATCH, || {
            black_box(raw_getuid());
        }),
    }
}
