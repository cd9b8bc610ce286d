//! The visits a study made so far, in memory and by point: which were made (so `--resume`
//! makes only the missing ones), what they cost, and how far each point's interval is from
//! the target. On disk they are `report::visit_folder`'s.
use crate::record::{RunRecord, VisitKind};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// The visits made so far, by point. A visit made again (after it failed) replaces the
/// earlier one in its point's figures; the earlier one is kept apart.
#[derive(Default)]
pub struct VisitLog {
    visits: Vec<RunRecord>,
    by_key: HashMap<String, Vec<usize>>,
    made: HashSet<(String, usize, VisitKind)>,
    /// Visits replaced by a later one of the same point, round and kind.
    replaced: Vec<usize>,
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
        let identity = (info.key.clone(), info.round, info.kind);
        let of_point = self.by_key.entry(info.key.clone()).or_default();
        if !self.made.insert(identity) {
            let same = |v: &RunRecord| {
                v.visit
                    .as_ref()
                    .is_some_and(|o| (o.round, o.kind) == (info.round, info.kind))
            };
            if let Some(at) = of_point.iter().position(|&i| same(&self.visits[i])) {
                self.replaced.push(of_point.remove(at));
            }
        }
        of_point.push(self.visits.len());
        self.visits.push(visit);
    }

    /// The visits of one point that a later visit replaced.
    pub fn replaced(&self, key: &str) -> Vec<&RunRecord> {
        self.replaced
            .iter()
            .map(|&i| &self.visits[i])
            .filter(|r| r.visit.as_ref().is_some_and(|v| v.key == key))
            .collect()
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

    /// Whether any headline visit of round `round` or later was made.
    pub fn headline_from(&self, round: usize) -> bool {
        self.visits
            .iter()
            .filter_map(|r| r.visit.as_ref())
            .any(|v| v.kind == VisitKind::Headline && v.round >= round)
    }

    /// A point this kernel cannot run: visited once, skipped, never again.
    pub fn skipped(&self, key: &str) -> bool {
        self.of(key).iter().any(|r| r.skipped_reason.is_some())
    }

    /// What every visit so far cost (replaced ones too): the budget spent.
    pub fn spent(&self) -> Duration {
        let s: f64 = self
            .visits
            .iter()
            .filter_map(|r| r.visit.as_ref())
            .map(|v| v.wall_s)
            .sum();
        Duration::from_secs_f64(s)
    }

    /// What the visits of rounds before `round` cost (replaced ones too), and the mean wall
    /// time of their headline visits in seconds (`None` without one): what the adaptive plan
    /// is counted from, the same again when `--resume` decides it once more.
    pub fn cost_before(&self, round: usize) -> (Duration, Option<f64>) {
        let before: Vec<_> = self
            .visits
            .iter()
            .filter_map(|r| r.visit.as_ref())
            .filter(|v| v.round < round)
            .collect();
        let spent = before.iter().map(|v| v.wall_s).sum::<f64>();
        let walls: Vec<f64> = before
            .iter()
            .filter(|v| v.kind == VisitKind::Headline)
            .map(|v| v.wall_s)
            .collect();
        let mean = (!walls.is_empty()).then(|| walls.iter().sum::<f64>() / walls.len() as f64);
        (Duration::from_secs_f64(spent), mean)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RunOutcome;
    use clap::Parser;

    /// A visit record of the default sweep's first point, failed (it never ran) or completed.
    fn visit(round: usize, completed: bool) -> RunRecord {
        let cli = crate::cli::Cli::parse_from(["bytepath", "sweep"]);
        let crate::cli::Command::Sweep(args) = cli.command else {
            unreachable!()
        };
        let spec = crate::args::sweep::sweep_spec(&args, &[0, 1]).unwrap();
        let point = spec.points()[0];
        let run = spec.run_spec(&point, false);
        let mut r = crate::record::build(
            &run,
            &RunOutcome::not_run(&run, "starved".into()),
            crate::environment::Environment::detect(&[0, 1]),
        );
        if completed {
            r.status = "completed".into();
            r.errors.clear();
        }
        r.visit = Some(crate::record::VisitInfo {
            key: point.key(),
            round,
            kind: VisitKind::Headline,
            position: 0,
            wall_s: 0.5,
            seed: 1,
            interference: None,
        });
        r
    }

    #[test]
    fn a_visit_made_again_replaces_the_failed_one_in_its_points_figures() {
        let mut log = VisitLog::default();
        log.add(visit(0, true));
        log.add(visit(1, false));
        let key = log.visits[0].visit.as_ref().unwrap().key.clone();
        assert_eq!(
            log.need(&key, 2, 0.02),
            None,
            "a failed visit: more visits cannot help"
        );
        log.add(visit(1, true));
        let now = log.of(&key);
        assert_eq!(now.len(), 2);
        assert!(now.iter().all(|r| r.status == "completed"));
        let replaced = log.replaced(&key);
        assert_eq!((replaced.len(), replaced[0].errors.len()), (1, 1));
        assert!(log.made(&key, 1, VisitKind::Headline));
        assert_eq!(
            log.spent(),
            Duration::from_secs_f64(1.5),
            "the failed visit cost time too"
        );
    }

    #[test]
    fn the_cost_before_a_round_counts_only_its_earlier_rounds_replaced_visits_too() {
        let mut log = VisitLog::default();
        log.add(visit(0, true));
        log.add(visit(1, false));
        log.add(visit(1, true));
        let mut later = visit(2, true);
        later.visit.as_mut().unwrap().wall_s = 3.0;
        log.add(later);
        assert_eq!(
            log.cost_before(2),
            (Duration::from_secs_f64(1.5), Some(0.5))
        );
        assert_eq!(log.cost_before(0), (Duration::ZERO, None));
        let (spent, mean) = log.cost_before(3);
        assert_eq!((spent, mean), (Duration::from_secs_f64(4.5), Some(1.125)));
    }
}
