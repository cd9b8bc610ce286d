//! A profiled visit's sampling (`--profile`): each side's worker threads in this process are
//! sampled on their own with perf_event_open(2) over the measured phase (see
//! `measure::profile`), so the sender's and the receiver's CPU are broken down apart. The
//! threads are found by the names `spawn` gives them (`bytepath-<flow>-<role>`, cut by the
//! kernel at 15 bytes). A side that cannot be sampled gets its reason, and the run goes on.
use super::worker::Role;
use crate::config::RunSpec;
use crate::measure::profile::{self, Profile, RunningProfile, SamplerSettings, Symbolizer};
use std::time::Duration;

/// Sampling under way over the local sides of a run.
pub struct ProfileWindow {
    sides: Vec<(Role, Result<RunningProfile, String>)>,
}

/// Sampling stopped; the samples not yet named.
pub struct StoppedWindow {
    sides: Vec<(Role, Result<profile::StoppedProfile, String>)>,
}

/// The sampler settings for a measured phase of `duration`: the rings hold it all.
pub fn settings(duration: Duration) -> SamplerSettings {
    let defaults = SamplerSettings::default();
    SamplerSettings {
        max_window: defaults.max_window.max(duration + Duration::from_secs(1)),
        ..defaults
    }
}

impl ProfileWindow {
    /// Opens and enables sampling of this process's worker threads of each of `roles`.
    pub fn open(roles: &[Role], duration: Duration) -> ProfileWindow {
        let pid = std::process::id();
        let named = worker_threads(pid);
        let settings = settings(duration);
        let sides = roles
            .iter()
            .map(|&role| {
                let tids: Vec<i32> = named
                    .iter()
                    .filter(|(_, r)| *r == role)
                    .map(|(t, _)| *t)
                    .collect();
                let running = if tids.is_empty() {
                    Err(format!(
                        "no {} worker thread of this process was found to sample",
                        role_name(role)
                    ))
                } else {
                    profile::start(&tids, &settings).map_err(|u| u.reason)
                };
                (role, running)
            })
            .collect();
        ProfileWindow { sides }
    }

    /// Stops every side's sampling at the same instant (before any naming starts).
    pub fn stop(self) -> StoppedWindow {
        StoppedWindow {
            sides: self
                .sides
                .into_iter()
                .map(|(role, r)| (role, r.map(RunningProfile::stop_sampling)))
                .collect(),
        }
    }
}

impl StoppedWindow {
    /// Names and charges each side's samples (call while this process still maps what ran).
    pub fn build(self) -> Vec<(Role, Profile)> {
        let mut symbols = Symbolizer::new();
        self.sides
            .into_iter()
            .map(|(role, stopped)| {
                let profile = match stopped {
                    Ok(stopped) => stopped.build(&mut symbols),
                    Err(reason) => Profile::Unavailable { reason },
                };
                (role, profile)
            })
            .collect()
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Sender => "sending",
        Role::Receiver => "receiving",
    }
}

/// This process's worker threads with their roles, from their names.
fn worker_threads(pid: u32) -> Vec<(i32, Role)> {
    profile::process_threads(pid)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|tid| {
            let name = profile::thread_name(pid, tid)?;
            Some((tid, role_of(&name)?))
        })
        .collect()
}

/// The role a worker's thread name gives (`bytepath-12-send…`, `bytepath-3-rece…`).
fn role_of(name: &str) -> Option<Role> {
    let rest = name.strip_prefix("bytepath-")?;
    let (flow, role) = rest.split_once('-')?;
    if flow.is_empty() || !flow.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match role.as_bytes().first()? {
        b's' => Some(Role::Sender),
        b'r' => Some(Role::Receiver),
        _ => None,
    }
}

/// The profiles of a run whose sides ran elsewhere, each with the reason.
pub fn not_here(roles: &[Role], reason: &str) -> Vec<(Role, Profile)> {
    roles
        .iter()
        .map(|&role| {
            let reason = reason.to_string();
            (role, Profile::Unavailable { reason })
        })
        .collect()
}

/// The profiles of a run here (`engine::measure`'s): this process's sides named, a forked side said to be missing.
pub(crate) fn here(
    spec: &RunSpec,
    split: Option<Role>,
    sampling: Option<StoppedWindow>,
) -> Vec<(Role, Profile)> {
    let mut profiles = sampling.map_or_else(Vec::new, |s| s.build());
    if let (Some(child), true) = (split, spec.profile) {
        let why =
            "this side ran in the forked process (--processes); only the parent's side is sampled";
        profiles.extend(not_here(&[child], why));
    }
    profiles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_names_give_their_roles_and_other_threads_none() {
        assert_eq!(role_of("bytepath-0-send"), Some(Role::Sender));
        assert_eq!(role_of("bytepath-0-rece"), Some(Role::Receiver));
        assert_eq!(role_of("bytepath-123-re"), Some(Role::Receiver));
        assert_eq!(role_of("bytepath-1000-s"), Some(Role::Sender));
        assert_eq!(role_of("bytepath-10000-"), None);
        assert_eq!(role_of("bytepath-stdin-"), None);
        assert_eq!(role_of("bytepath"), None);
    }

    #[test]
    fn long_windows_get_rings_that_hold_them() {
        assert_eq!(
            settings(Duration::from_secs(1)).max_window,
            Duration::from_secs(5)
        );
        assert_eq!(
            settings(Duration::from_secs(9)).max_window,
            Duration::from_secs(10)
        );
    }
}
