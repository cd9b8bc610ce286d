//! A record's `--profile` blocks: each side's CPU breakdown (`measure::profile`) taken in a
//! visit of its own, attached to the headline record with a note of which visit it was, its
//! CPU-ns per byte per category from that visit's own CPU time, and "copies' worth" from the
//! memcpy cost per byte that `probe` measures (its DRAM point; none when not measured).
use super::{RunRecord, VisitKind};
use crate::engine::worker::Role;
use crate::engine::RunOutcome;
use crate::measure::profile::Profile;
use serde::{Deserialize, Serialize};

/// Which visit the sides' profiles come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfiledVisit {
    /// The sweep round of the profile visit; absent for `run`, whose profiled run follows the
    /// headline run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
    pub measured_s: f64,
    /// The profiled visit's own figure (Gbit/s or round trips/s): what sampling cost shows
    /// beside the headline, which never includes it.
    pub headline_value: f64,
    pub description: String,
    /// What one byte of memcpy costs, that "copies' worth" divides by; null when not measured.
    pub memcpy_ns_per_byte: Option<f64>,
    /// Where that cost comes from, or why there is none.
    pub memcpy_source: String,
}

/// The profile of `role` from a run's outcome, its CPU-ns per byte per category filled from
/// the same run's CPU time. `None` when no profile was asked for.
pub fn side_profile(
    outcome: &RunOutcome,
    role: Role,
    cpu_ns_per_byte: Option<f64>,
) -> Option<Profile> {
    let (_, profile) = outcome.profiles.iter().find(|(r, _)| *r == role)?;
    let mut profile = profile.clone();
    if let (Profile::Measured(block), Some(cost)) = (&mut profile, cpu_ns_per_byte) {
        block.apply_costs(cost, None);
    }
    Some(profile)
}

/// Puts the profiled visit's side blocks on `record`, saying which visit they come from. A
/// profiled visit that failed leaves each side unavailable with its errors.
pub fn attach(record: &mut RunRecord, profiled: &RunRecord, description: String) {
    let failed = (!profiled.errors.is_empty())
        .then(|| format!("the profiled visit failed: {}", profiled.errors.join("; ")));
    for (side, theirs) in record.sides.iter_mut().zip(&profiled.sides) {
        side.profile = match (&theirs.profile, &failed) {
            (Some(p), _) => Some(p.clone()),
            (None, Some(reason)) => Some(Profile::Unavailable {
                reason: reason.clone(),
            }),
            (None, None) => Some(Profile::Unavailable {
                reason: "the profiled visit sampled no side".into(),
            }),
        };
    }
    let round = profiled
        .visit
        .as_ref()
        .filter(|v| v.kind == VisitKind::Profile)
        .map(|v| v.round);
    record.profiled_visit = Some(ProfiledVisit {
        round,
        measured_s: profiled.measured_s,
        headline_value: profiled.headline_value(),
        description,
        memcpy_ns_per_byte: None,
        memcpy_source: "not measured".into(),
    });
}

/// Fills "copies' worth" on every measured side but `skip` (a side on another host, whose
/// memcpy cost is not this one's), from `memcpy`: ns per byte and where it comes from.
pub fn apply_memcpy(
    record: &mut RunRecord,
    memcpy: Result<(f64, String), String>,
    skip: Option<Role>,
) {
    let (cost, source) = match memcpy {
        Ok((cost, source)) => (Some(cost), source),
        Err(why) => (None, why),
    };
    for (i, side) in record.sides.iter_mut().enumerate() {
        let here = skip.is_none_or(|r| r as usize != i);
        if let (Some(Profile::Measured(block)), Some(cpu)) =
            (&mut side.profile, side.cpu_ns_per_byte)
        {
            block.apply_costs(cpu, cost.filter(|_| here));
        }
    }
    if let Some(visit) = &mut record.profiled_visit {
        visit.memcpy_ns_per_byte = cost;
        visit.memcpy_source = match skip {
            Some(_) if cost.is_some() => format!("{source}; applied to this host's side only"),
            _ => source,
        };
    }
}

/// The memcpy cost per byte from a probe document (`bytepath probe --json`, a sweep's
/// probe.json): the DRAM point's median, the report's roofline. A copy of cache-resident data
/// costs less per byte (the L2 point is several times faster here), so this unit gives the
/// fewer, conservative, copies' worth; the source text says which unit was used.
pub fn memcpy_from_probe(probe: &serde_json::Value) -> Result<(f64, String), String> {
    let probe = super::probe_view::ProbeView::deserialize(probe)
        .map_err(|e| format!("the probe does not read as a probe document ({e})"))?;
    probe
        .memcpy_roofline
        .as_ref()
        .and_then(|r| r.points.as_ref())
        .ok_or("the probe has no memcpy roofline")?;
    let dram = probe
        .dram()
        .ok_or("the probe's memcpy roofline has no DRAM point")?;
    let gb_per_s = dram
        .bandwidth
        .and_then(|b| b.median_gb_per_s)
        .filter(|v| *v > 0.0)
        .ok_or("the probe's DRAM memcpy point has no bandwidth")?;
    let bytes = dram.buffer_bytes.unwrap_or(0);
    Ok(memcpy_unit(gb_per_s, bytes, "probe's"))
}

/// The memcpy cost per byte (ns) of a DRAM point's median `gb_per_s` over a buffer of
/// `buffer_bytes`, and the source text naming whose probe measured it (`probe's`, `a quick
/// probe's`).
pub fn memcpy_unit(gb_per_s: f64, buffer_bytes: u64, whose: &str) -> (f64, String) {
    (
        1.0 / gb_per_s,
        format!(
            "{whose} memcpy of a {} MiB buffer (beyond the caches), median {gb_per_s:.1} GB/s",
            buffer_bytes >> 20
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcpy_cost_is_the_inverse_of_the_dram_median_bandwidth() {
        let probe = serde_json::json!({"memcpy_roofline": {"points": [
            {"level": "l2", "buffer_bytes": 262144,
             "bandwidth": {"median_gb_per_s": 10.0}},
            {"level": "dram", "buffer_bytes": 25165824,
             "bandwidth": {"median_gb_per_s": 40.0}}
        ]}});
        let (ns, source) = memcpy_from_probe(&probe).unwrap();
        assert!((ns - 0.025).abs() < 1e-12);
        assert!(
            source.contains("24 MiB") && source.contains("40.0 GB/s"),
            "{source}"
        );
        let (quick_ns, quick) = memcpy_unit(40.0, 25165824, "a quick probe's");
        assert_eq!(
            quick_ns, ns,
            "one unit, typed or read from a probe document"
        );
        assert_eq!(quick, source.replacen("probe's", "a quick probe's", 1));
    }

    #[test]
    fn a_probe_without_a_roofline_says_why() {
        let err = memcpy_from_probe(&serde_json::json!({})).unwrap_err();
        assert!(err.contains("no memcpy roofline"), "{err}");
    }
}
