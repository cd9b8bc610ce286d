//! The mesh's canary: at the start of each round, each host's server measures the canary on
//! itself (a `canary` control message, one session per host), recorded in canary.jsonl with
//! its round and host; a server that cannot (an older bytepath, or busy) gets a line saying
//! why, so the report can say no canary was recorded for it.
use super::hosts::MeshHosts;
use super::spec::MeshSpec;
use crate::error::Error;
use crate::probe::watch::CanaryLine;
use std::path::Path;

/// Asks every host in `up` (indices into the spec's hosts) for its canary, in turn, and
/// records each answer.
pub fn record_round(
    hosts: &dyn MeshHosts,
    spec: &MeshSpec,
    up: &[usize],
    dir: &Path,
    round: usize,
) -> Result<(), Error> {
    for &h in up {
        let host = &spec.hosts[h];
        let (canary, canary_unavailable_reason) = match hosts.canary(host, spec.token.as_deref()) {
            Ok(canary) => (Some(canary), None),
            Err(why) => (None, Some(why)),
        };
        let line = CanaryLine {
            round: Some(round),
            host: Some(host.to_string()),
            canary,
            canary_unavailable_reason,
            ..CanaryLine::default()
        };
        crate::probe::watch::append_canary_line(dir, line)?;
    }
    Ok(())
}
