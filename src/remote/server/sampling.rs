//! `profile` for a run's side served from here: this side's threads sampled over the
//! measured phase, the window opened when that phase begins and stopped when it ends (the
//! session wakes for both), and the breakdown that goes back to the client.
use crate::engine::profiling::{ProfileWindow, StoppedWindow};
use crate::engine::worker::Role;
use crate::measure::profile::Profile;
use std::time::{Duration, Instant};

/// `profile`: this side's sampling, opened when the measured phase begins and stopped when it
/// ends (the session wakes for both).
pub(super) struct Sampling {
    role: Role,
    from: Instant,
    until: Instant,
    open: Option<ProfileWindow>,
    stopped: Option<StoppedWindow>,
}

impl Sampling {
    pub(super) fn new(role: Role, (from, until): (Instant, Instant)) -> Sampling {
        Sampling {
            role,
            from,
            until,
            open: None,
            stopped: None,
        }
    }

    /// Opens or stops the sampling as the schedule says; returns how long until it next must.
    pub(super) fn tick(&mut self, now: Instant) -> Option<Duration> {
        if self.open.is_none() && self.stopped.is_none() && now >= self.from && now < self.until {
            let duration = self.until.saturating_duration_since(self.from);
            self.open = Some(ProfileWindow::open(&[self.role], duration));
        }
        if now >= self.until {
            if let Some(window) = self.open.take() {
                self.stopped = Some(window.stop());
            }
            return None;
        }
        let next = if self.open.is_none() {
            self.from
        } else {
            self.until
        };
        Some(
            next.saturating_duration_since(now)
                .max(Duration::from_millis(1)),
        )
    }

    pub(super) fn finish(mut self) -> Profile {
        if let Some(window) = self.open.take() {
            self.stopped = Some(window.stop());
        }
        let built = self.stopped.map(StoppedWindow::build).unwrap_or_default();
        built.into_iter().next().map_or_else(
            || Profile::Unavailable {
                reason: "the run ended before its measured phase began".into(),
            },
            |(_, p)| p,
        )
    }
}
