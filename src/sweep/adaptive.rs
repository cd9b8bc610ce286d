//! Where a sweep's adaptive rounds go, decided once after the pilot (the minimum rounds). A
//! group (pattern, threads, size) whose crossover cells are all decided at the pilot (beats,
//! slower or equivalent, each question's cells judged as one family at the pilot's α) gets
//! no more rounds. The groups still undecided share the rounds the budget leaves equally: a
//! group's total counts the budget and how many other groups are open, never its own figures,
//! so given that it is undecided its total is fixed before its first adaptive round and its
//! final interval, over all its rounds, is a plain fixed-n paired interval. Each cell is
//! looked at twice at most, the looks splitting α (`analysis::crossover_rule`): whichever
//! look a cell is reported at, a false claim stays within α. (A total that followed the
//! pilot's spread, Stein's rule, would need Stein's interval, on the pilot's few degrees of
//! freedom: at Holm's strictest level over 24 cells its t(3) quantile is 10.9 against
//! t(13)'s 3.9.) A group that answers no crossover question gets the rounds at which its
//! pilot's spread would meet `--ci` (Stein's fixed-width rule; its interval is shown, not
//! tested). The budget may end a group short of its total; the record says so.
use crate::stats::student::t_quantile;
use crate::stats::verdict::{judge_at, Correction, LogEstimate, Verdict};
use crate::stats::visits::paired_ratio;

/// What the pilot measured.
#[derive(Debug, Clone, Default)]
pub struct Pilot {
    /// Rounds the pilot holds (the minimum rounds).
    pub rounds: usize,
    pub groups: usize,
    /// Every crossover cell: its group, its question (an index into the crossover pairs) and
    /// its per-round (challenger, baseline) headline figures.
    pub cells: Vec<PilotCell>,
    /// Every point: its group and its pilot visit means.
    pub points: Vec<(usize, Vec<f64>)>,
}

#[derive(Debug, Clone)]
pub struct PilotCell {
    pub group: usize,
    pub question: usize,
    pub pairs: Vec<(f64, f64)>,
}

/// What the rule is held to.
#[derive(Debug, Clone, Copy)]
pub struct Targets {
    pub margin: f64,
    /// `--ci`: a point's relative 95 % half-width.
    pub ci: f64,
    /// The most rounds any group is given.
    pub max_rounds: usize,
    /// Group-rounds the budget leaves after the pilot (and the counter round): what the
    /// adaptive rounds may spend.
    pub rounds_left: usize,
    /// The α the pilot's look is held to (`crossover_rule::PILOT_ALPHA`; the whole α only to
    /// show in simulation what splitting it buys).
    pub pilot_alpha: f64,
}

/// Why a group got the rounds it got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// Every crossover cell of the group was decided at the pilot.
    DecidedAtPilot,
    /// Some cell was undecided: an equal share of the rounds the budget leaves.
    Undecided,
    /// A cell had no paired interval at the pilot (a failed or skipped point): more rounds of
    /// the same cannot help.
    NotJudged,
    /// No crossover question: rounds at which the pilot's spread meets `--ci`.
    PointInterval,
}

/// One group's rounds, fixed after the pilot.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GroupRounds {
    pub group: usize,
    pub why: Why,
    pub pilot_rounds: usize,
    /// Rounds in all (pilot included) the rule gives the group.
    pub planned_rounds: usize,
    /// A group with no crossover cell: the spread its total was fixed from, the widest SD of
    /// a point's visit means relative to their mean.
    pub pilot_spread: Option<f64>,
    /// The group's cells still undecided at the pilot (question indexes; rounds.json names
    /// the questions instead).
    #[serde(skip)]
    pub undecided: Vec<usize>,
}

/// A pilot cell with its state (`None`: no paired interval).
type CellState<'a> = (&'a PilotCell, Option<Verdict>);

/// Every group's rounds, decided once from the pilot.
pub fn plan(pilot: &Pilot, targets: &Targets) -> Vec<GroupRounds> {
    let states = pilot_states(pilot, targets);
    let mut plan: Vec<GroupRounds> = (0..pilot.groups)
        .map(|group| {
            let cells: Vec<CellState> = pilot
                .cells
                .iter()
                .zip(&states)
                .filter(|(c, _)| c.group == group)
                .map(|(c, s)| (c, *s))
                .collect();
            let mut rounds = GroupRounds {
                group,
                why: Why::DecidedAtPilot,
                pilot_rounds: pilot.rounds,
                planned_rounds: pilot.rounds,
                pilot_spread: None,
                undecided: Vec::new(),
            };
            if cells.is_empty() {
                rounds.why = Why::PointInterval;
                rounds.pilot_spread = point_spread(pilot, group);
                let n = rounds.pilot_spread.map_or(pilot.rounds, |s| {
                    rounds_for(|n| t_quantile(0.975, n - 1.0) * s / n.sqrt() <= targets.ci)
                });
                rounds.planned_rounds = n.clamp(pilot.rounds, targets.max_rounds);
            } else if cells.iter().any(|(_, s)| s.is_none()) {
                rounds.why = Why::NotJudged;
            } else {
                undecided(&mut rounds, &cells);
            }
            rounds
        })
        .collect();
    share(&mut plan, targets);
    plan
}

/// A group with an undecided cell: its cells still open.
fn undecided(rounds: &mut GroupRounds, cells: &[CellState]) {
    rounds.undecided = cells
        .iter()
        .filter(|(_, s)| *s == Some(Verdict::Undecided))
        .map(|(c, _)| c.question)
        .collect();
    if !rounds.undecided.is_empty() {
        rounds.why = Why::Undecided;
    }
}

/// Shares the rounds the budget leaves (after the point-interval groups' own totals) equally
/// among the undecided groups. A group's share counts the other undecided groups and the
/// budget, never its own figures: given that it is undecided, its total is fixed before its
/// first adaptive round, so its final interval over all its rounds is a fixed-n one.
fn share(plan: &mut [GroupRounds], targets: &Targets) {
    let points: usize = plan
        .iter()
        .filter(|g| g.why == Why::PointInterval)
        .map(|g| g.planned_rounds - g.pilot_rounds)
        .sum();
    let open = plan.iter().filter(|g| g.why == Why::Undecided).count();
    if open == 0 {
        return;
    }
    let each = targets.rounds_left.saturating_sub(points) / open;
    for g in plan.iter_mut().filter(|g| g.why == Why::Undecided) {
        g.planned_rounds = (g.pilot_rounds + each)
            .min(targets.max_rounds)
            .max(g.pilot_rounds);
    }
}

/// Each cell's state at the pilot (its question's cells judged as one family at the pilot's α);
/// `None` where the cell has no paired interval.
fn pilot_states(pilot: &Pilot, targets: &Targets) -> Vec<Option<Verdict>> {
    let mut states = vec![None; pilot.cells.len()];
    let questions: std::collections::BTreeSet<usize> =
        pilot.cells.iter().map(|c| c.question).collect();
    for q in questions {
        let estimates: Vec<(usize, LogEstimate)> = pilot
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| c.question == q)
            .filter_map(|(i, c)| Some((i, LogEstimate::from_interval(&paired_ratio(&c.pairs)?))))
            .collect();
        let only: Vec<LogEstimate> = estimates.iter().map(|(_, e)| *e).collect();
        let corrections = (Correction::Holm, Correction::BenjaminiHochberg);
        let family = judge_at(&only, corrections, targets.margin, targets.pilot_alpha);
        for ((i, _), j) in estimates.iter().zip(&family.judged) {
            states[*i] = Some(j.state);
        }
    }
    states
}

/// The smallest round count from 2 up at which `enough` holds (capped far past any budget);
/// `enough` grows true with the rounds, so a bisection finds it.
fn rounds_for(enough: impl Fn(f64) -> bool) -> usize {
    let (mut low, mut high) = (2usize, 100_000usize);
    if enough(low as f64) {
        return low;
    }
    if !enough(high as f64) {
        return high;
    }
    while high - low > 1 {
        let mid = (low + high) / 2;
        if enough(mid as f64) {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

/// The widest relative SD of visit means among the group's points.
fn point_spread(pilot: &Pilot, group: usize) -> Option<f64> {
    pilot
        .points
        .iter()
        .filter(|(g, _)| *g == group)
        .filter_map(|(_, values)| {
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            (mean > 0.0).then(|| sd(values).map(|s| s / mean))?
        })
        .max_by(f64::total_cmp)
}

fn sd(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some(var.sqrt())
}

/// The groups an adaptive round visits, given the rounds each has made: those short of their
/// planned total, furthest short first (ties by group), so a budget that ends mid-round cuts
/// the groups nearest their totals.
pub fn round_groups(plan: &[GroupRounds], made: &[usize]) -> Vec<usize> {
    let mut short: Vec<(usize, usize)> = plan
        .iter()
        .filter(|g| made[g.group] < g.planned_rounds)
        .map(|g| (g.group, g.planned_rounds - made[g.group]))
        .collect();
    short.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    short.into_iter().map(|(g, _)| g).collect()
}

#[cfg(test)]
#[path = "adaptive_tests.rs"]
mod tests;
