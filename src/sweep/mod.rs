//! `bytepath sweep`: a matrix of points, each measured in several short visits spread over the
//! whole sweep. Rounds visit every point once in a seeded shuffled order (`stats::schedule`); a
//! point's figure and interval come from its visit means, so the regimes a shared machine
//! moves between, which last seconds, fall inside its interval instead of between points.
//! After the minimum rounds (the pilot) and one round of counter visits, further rounds go to
//! the groups whose crossover verdicts the pilot left undecided, which share the rounds the
//! budget leaves equally (`adaptive`, recorded in rounds.json). Every visit is saved as it
//! finishes and every point's record after every round; a visit that fails is recorded and the
//! sweep goes on; Ctrl-C ends the sweep after the current visit. The folder, the stream, the
//! probe, the canaries and the ending are the study driver's (`study`); `Sweep` is what
//! differs.
pub mod adaptive;
mod announce;
pub(crate) mod answers;
mod points;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod rounds;
pub(crate) mod spec;
mod study;
mod visit;
pub(crate) mod visit_log;
mod watch;

use crate::report::folder::PROBE_JSON;
use spec::SweepSpec;
pub use study::{Sweep, KIND};

/// How the visits are ordered, as the marker records it.
const ORDER: &str = "rounds of visits: in each round the groups of (pattern, threads, size) in \
     a seeded shuffled order, each group's mechanisms back to back in an order drawn from the \
     seed and reversed on every other visit of the group; after the minimum rounds (the pilot) \
     one round of counter visits, then rounds of the groups the pilot left undecided, each up \
     to its equal share of the rounds the budget leaves (see rounds.json), furthest short \
     first, until the budget is spent";

/// Visits the minimum rounds and the counter, profile and copies rounds hold: the bar's first
/// length.
fn planned_visits(spec: &SweepSpec) -> usize {
    spec.total()
        * (spec.min_visits
            + usize::from(spec.counter_visits())
            + usize::from(spec.profile)
            + usize::from(spec.count_copies))
}

/// The memcpy cost per byte from the probe this folder recorded.
fn probe_memcpy(dir: &std::path::Path) -> Result<(f64, String), String> {
    let text = std::fs::read_to_string(dir.join(PROBE_JSON))
        .map_err(|e| format!("no memcpy cost: {PROBE_JSON} could not be read ({e})"))?;
    let probe: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("no memcpy cost: {PROBE_JSON}: {e}"))?;
    crate::record::profile::memcpy_from_probe(&probe)
}
