//! The run's phase, shared by the controller and every worker. Workers read it once per
//! message with a relaxed load (no lock, no syscall).
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Phase {
    Warmup = 0,
    Measure = 1,
    Stop = 2,
}

#[derive(Debug, Default)]
pub struct Control {
    phase: AtomicU8,
}

impl Control {
    #[inline]
    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Relaxed) {
            0 => Phase::Warmup,
            1 => Phase::Measure,
            _ => Phase::Stop,
        }
    }

    pub fn set(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Release);
    }
}
