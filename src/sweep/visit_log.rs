//! The visits a study made so far, in memory and by point: which were made (so `--resume`
//! makes only the missing ones), what they cost, and how far each point's interval is from
//! the target. On disk they are `report::visit_folder`'s.
use crate::record::{RunRecord, VisitKind};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// The visits made so far, by point.
#[derive(Default)]
pub struct VisitLog {
    visits: Vec<RunRecord>,
    by_key: HashMap<String, Vec<usize>>,
    made: HashSet<(String, usize, VisitKind)>,
}

impl VisitLog {
    pub fn new(prior: Vec<(String, RunRecord)>) -> VisitLog {
        let mut log = VisitLog::default();
        for (_, visit) in prior {
            log.add(visit);
        }
        log
    }

    pub fn add(&mut self, visit: RunRecord) {
        let info = visit.visit.as_ref().expect("a visit record");
        self.made.insert((info.key.clone(), info.round, info.kind));
        self.by_key
            .entry(info.key.clone())
            .or_default()
            .push(self.visits.len());
        self.visits.push(visit);
    }

    /// Whether this visit was made (and kept) already.
    pub fn made(&self, key: &str, round: usize, kind: VisitKind) -> bool {
        self.made.contains(&(key.to_string(), round, kind))
    }

    /// The visits of one point, in the order they were made.
    pub fn of(&self, key: &str) -> Vec<&RunRecord> {
        self.by_key
            .get(key)
            .map(|ix| ix.iter().map(|&i| &self.visits[i]).collect())
            .unwrap_or_default()
    }

    /// A point this kernel cannot run: visited once, skipped, never again.
    pub fn skipped(&self, key: &str) -> bool {
        self.of(key).iter().any(|r| r.skipped_reason.is_some())
    }

    /// What every visit so far cost: the budget spent.
    pub fn spent(&self) -> Duration {
        let s: f64 = self
            .visits
            .iter()
            .filter_map(|r| r.visit.as_ref())
            .map(|v| v.wall_s)
            .sum();
        Duration::from_secs_f64(s)
    }

    /// How far a point's interval is from `target` over its headline visits of rounds before
    /// `round`: the relative half-width over the target (above 1: needs visits; infinite with
    /// fewer than two visits). `None` for a point more visits cannot help (skipped or failed).
    pub fn need(&self, key: &str, round: usize, target: f64) -> Option<f64> {
        let visits = self.of(key);
        if visits
            .iter()
            .any(|r| r.skipped_reason.is_some() || r.status == "failed")
        {
            return None;
        }
        let values: Vec<f64> = visits
            .iter()
            .filter(|r| {
                r.visit
                    .as_ref()
                    .is_some_and(|v| v.kind == VisitKind::Headline && v.round < round)
            })
            .map(|r| r.headline_value())
            .collect();
        Some(
            crate::stats::visits::summarize_visits(&values)
                .map_or(f64::INFINITY, |s| s.ci95_rel / target),
        )
    }
}
