//! Where a sweep's adaptive rounds go, decided once after the pilot (the minimum rounds). A
//! group (pattern, threads, size) whose crossover cells are all decided at the pilot (beats,
//! slower or equivalent, each question's cells judged as one family at α / 2) gets no more
//! rounds. A group still undecided gets a total fixed from its pilot's spread alone (a
//! two-stage rule after Stein, 1945): the rounds at which, at that spread, an interval would
//! decide any true ratio (the difference interval at Holm's strictest level plus the
//! equivalence interval fit inside the margin). The total never changes with later rounds, and
//! it depends on the pilot's spread, not on its ratio, so the final interval is a fixed-n
//! interval given the pilot; each cell is looked at twice at most, each look at α / 2
//! (`analysis::crossover_rule`). A group that answers no crossover question gets the rounds
//! at which its pilot's spread would meet `--ci` (Stein's fixed-width rule). The budget may
//! end a group short of its total; the record says so.
use crate::stats::student::t_quantile;
use crate::stats::verdict::{judge_at, Correction, LogEstimate, Verdict, ALPHA};
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
    /// Looks each cell may get: the pilot's verdicts and the planned totals are held at
    /// α / looks (`ADAPTIVE_LOOKS`; 1 only to show in simulation what the correction buys).
    pub looks: usize,
}

/// Why a group got the rounds it got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// Every crossover cell of the group was decided at the pilot.
    DecidedAtPilot,
    /// Some cell was undecided: rounds fixed by the pilot's spread.
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
    /// The pilot's spread the total was fixed from: the SD of the per-round log ratio (a
    /// crossover group's widest undecided cell) or of a point's visit means relative to their
    /// mean.
    pub pilot_spread: Option<f64>,
    /// The group's cells still undecided at the pilot (question indexes).
    pub undecided: Vec<usize>,
}

/// A pilot cell with its state and its family's size (`None`: no paired interval).
type CellState<'a> = (&'a PilotCell, Option<(Verdict, usize)>);

/// Every group's rounds, decided once from the pilot.
pub fn plan(pilot: &Pilot, targets: &Targets) -> Vec<GroupRounds> {
    let states = pilot_states(pilot, targets);
    (0..pilot.groups)
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
                undecided(&mut rounds, &cells, targets);
            }
            rounds
        })
        .collect()
}

/// A group with an undecided cell: the total its widest undecided cell's spread fixes.
fn undecided(rounds: &mut GroupRounds, cells: &[CellState], targets: &Targets) {
    let open: Vec<&CellState> = cells
        .iter()
        .filter(|(_, s)| s.is_some_and(|(v, _)| v == Verdict::Undecided))
        .collect();
    if open.is_empty() {
        return;
    }
    rounds.why = Why::Undecided;
    rounds.undecided = open.iter().map(|(c, _)| c.question).collect();
    let worst = open
        .iter()
        .filter_map(|(c, s)| Some((log_spread(&c.pairs)?, s.expect("judged").1)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    rounds.pilot_spread = worst.map(|(s, _)| s);
    let n = worst.map_or(targets.max_rounds, |(s, tests)| {
        rounds_to_decide(
            s,
            tests,
            targets.margin,
            (targets.looks, rounds.pilot_rounds),
        )
    });
    rounds.planned_rounds = n.clamp(rounds.pilot_rounds, targets.max_rounds);
}

/// Each cell's state at the pilot (its question's cells judged as one family at α / looks)
/// with its family's size; `None` where the cell has no paired interval.
fn pilot_states(pilot: &Pilot, targets: &Targets) -> Vec<Option<(Verdict, usize)>> {
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
        let alpha = ALPHA / targets.looks.max(1) as f64;
        let family = judge_at(&only, corrections, targets.margin, alpha);
        for ((i, _), j) in estimates.iter().zip(&family.judged) {
            states[*i] = Some((j.state, only.len()));
        }
    }
    states
}

/// The rounds at which a cell of a family of `tests` with per-round log-ratio spread `spread`
/// is decided whatever its true ratio: the difference interval at Holm's strictest level and
/// the equivalence interval, end to end, fit inside the margin (a ratio just outside the
/// first is inside the second). The report's interval after adaptive rounds is Stein's (the
/// pilot's spread on the pilot's degrees of freedom), so the quantiles are taken on those.
pub fn rounds_to_decide(
    spread: f64,
    tests: usize,
    margin: f64,
    looks_pilot: (usize, usize),
) -> usize {
    let (looks, pilot) = looks_pilot;
    let alpha = ALPHA / looks.max(1) as f64;
    let room = (1.0 + margin).ln();
    let df = pilot.max(2) as f64 - 1.0;
    rounds_for(|n| {
        let difference = t_quantile(1.0 - alpha / (2.0 * tests.max(1) as f64), df);
        let equivalence = t_quantile(1.0 - alpha, df);
        (difference + equivalence) * spread / n.sqrt() <= room
    })
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

/// SD of the per-round log ratios.
fn log_spread(pairs: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<f64> = pairs
        .iter()
        .filter(|(a, b)| *a > 0.0 && *b > 0.0)
        .map(|(a, b)| (a / b).ln())
        .collect();
    sd(&logs)
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
