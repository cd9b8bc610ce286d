//! Where a sweep's adaptive rounds go, decided once after the pilot (the minimum rounds). A
//! group (pattern, threads, size) whose crossover cells are all decided at the pilot (beats or
//! slower, each question's cells judged as one family at the pilot's α) gets no more rounds.
//! The groups still undecided share the rounds the budget leaves equally: a group's total
//! counts the budget and how many other groups are open, never its own figures, so given that
//! it is undecided its total is fixed before its first adaptive round and its final interval,
//! over all its rounds, is a fixed-n paired interval. Each cell is looked at twice at most,
//! the looks splitting α (`analysis::crossover_rule`): whichever look a cell is reported at, a
//! false claim stays within α. At both looks every estimate is widened by its question's
//! pooled lag-1 autocorrelation of rounds (`stats::visits::pooled_lag1`, as the report does).
//! "Equivalent" needs `interval::MIN_EQUIVALENCE_PAIRS` (8) rounds (`stats::verdict`), more
//! than a pilot of the default 4 rounds holds: equivalence from the pilot alone is then
//! impossible, and a group whose cells are alike is open until its last look.
//! (A total that followed the pilot's spread, Stein's rule, would need Stein's interval, on
//! the pilot's few degrees of freedom: at Holm's strictest level over 24 cells its t(3)
//! quantile is 10.9 against t(13)'s 3.9.) A group that answers no crossover question
//! (rr, bidir, crr, …) is open in the same way and gets the same equal share: its total was
//! once the rounds at which its own pilot spread met `--ci` (Stein's rule), while its answers
//! report the plain interval, which then covers less than 95 % (91.8–94.2 % in simulation);
//! fixing its total without its own figures makes that plain interval exact, where Stein's
//! interval would have to be computed in every answer that reports these points. Its pilot's
//! spread is still recorded. The budget may end a group short of its total; the record says so.
use crate::stats::verdict::{judge_at, Correction, LogEstimate, Verdict};
use crate::stats::visits::{log_ratios, paired_ratio, pooled_lag1, RoundCorrelation};

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
    /// `--ci`: a point's relative 95 % half-width (recorded; no group's total follows it, see
    /// the module comment).
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
    /// No crossover question: an equal share of the rounds the budget leaves, as an undecided
    /// group gets.
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
    /// A group with no crossover cell: its pilot's spread, the widest SD of a point's visit
    /// means relative to their mean (recorded; its total does not follow it).
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

/// Shares the rounds the budget leaves equally among the open groups: the undecided ones and
/// those with no crossover question. A group's share counts the other open groups and the
/// budget, never its own figures: given that it is open, its total is fixed before its first
/// adaptive round, so its final interval over all its rounds is a fixed-n one.
fn share(plan: &mut [GroupRounds], targets: &Targets) {
    let is_open = |g: &GroupRounds| matches!(g.why, Why::Undecided | Why::PointInterval);
    let open = plan.iter().filter(|g| is_open(g)).count();
    if open == 0 {
        return;
    }
    let each = targets.rounds_left / open;
    for g in plan.iter_mut().filter(|g| is_open(g)) {
        g.planned_rounds = (g.pilot_rounds + each)
            .min(targets.max_rounds)
            .max(g.pilot_rounds);
    }
}

/// Each question's pooled lag-1 autocorrelation of its cells' per-round log-ratios (question
/// index, estimate; `None` where no cell has enough rounds): what the pilot's look widens its
/// estimates by, and what `rounds.json` records.
pub fn question_rho(pilot: &Pilot) -> Vec<(usize, Option<RoundCorrelation>)> {
    let questions: std::collections::BTreeSet<usize> =
        pilot.cells.iter().map(|c| c.question).collect();
    questions
        .into_iter()
        .map(|q| {
            let series: Vec<Vec<f64>> = pilot
                .cells
                .iter()
                .filter(|c| c.question == q)
                .map(|c| log_ratios(&c.pairs))
                .collect();
            (q, pooled_lag1(&series))
        })
        .collect()
}

/// Each cell's state at the pilot (its question's cells judged as one family at the pilot's α);
/// `None` where the cell has no paired interval.
fn pilot_states(pilot: &Pilot, targets: &Targets) -> Vec<Option<Verdict>> {
    let mut states = vec![None; pilot.cells.len()];
    for (q, rho) in question_rho(pilot) {
        let rho = rho.map_or(0.0, |r| r.rho);
        let estimate =
            |c: &PilotCell| Some(LogEstimate::from_interval(&paired_ratio(&c.pairs)?).widened(rho));
        let estimates: Vec<(usize, LogEstimate)> = pilot
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| c.question == q)
            .filter_map(|(i, c)| Some((i, estimate(c)?)))
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
