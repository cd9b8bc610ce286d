//! `servers --profile` in the report: each point's server-process profile (sampled in a
//! window of its own after the measured one) as the breakdown's points, one series per model,
//! ordered by clients.
use super::visits::{point_of, ServersView};
use crate::analysis::profile::{Profiled, SideProfile};
use crate::measure::profile::Profile;

/// The profiled points of `records` (servers records as read back), by model then clients.
pub fn points(records: &[ServersView]) -> Vec<Profiled> {
    let mut out: Vec<Profiled> = records
        .iter()
        .filter_map(|r| {
            let profile = r.profile.clone()?;
            let (model, clients) = point_of(r);
            Some(Profiled {
                series: model.clone(),
                mechanism: model,
                size: clients as f64,
                at: format!("{clients} clients"),
                sides: vec![SideProfile {
                    side: "server".into(),
                    profile: match profile {
                        Profile::Measured(b) => Ok(*b),
                        Profile::Unavailable { reason } => Err(reason),
                    },
                }],
            })
        })
        .collect();
    // Models in the order the study ran them (first appearance), then clients.
    let order: Vec<String> = out
        .iter()
        .map(|p| p.series.clone())
        .fold(Vec::new(), |mut v, s| {
            if !v.contains(&s) {
                v.push(s);
            }
            v
        });
    out.sort_by_key(|p| (order.iter().position(|s| *s == p.series), p.size as u64));
    out
}
