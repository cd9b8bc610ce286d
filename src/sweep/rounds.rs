//! The sweep's side of the adaptive rule (`adaptive`): the pilot read from the visits made,
//! and `rounds.json`, which records per group how many rounds it was given, how many it got
//! and why, with the rule's looks and margin (the report judges the crossover families with
//! them, `analysis::crossover_rule`).
use super::adaptive::{self, question_rho, GroupRounds, Pilot, PilotCell, Targets};
use super::spec::{Point, SweepSpec};
use super::visit_log::VisitLog;
use crate::analysis::crossover_rule::{pairs, Settings, ADAPTIVE_LOOKS, PILOT_ALPHA, ROUNDS_JSON};
use crate::config::Pattern;
use crate::error::Error;
use crate::record::{RunRecord, VisitKind};
use serde::Serialize;
use std::path::Path;

/// The rule as `rounds.json` and the marker state it.
pub const RULE: &str = "two looks: after the minimum rounds, a group whose crossover cells \
     are all decided (each question's cells one family, Holm for beats/slower and \
     Benjamini–Hochberg for equivalence, at α = 0.01) gets no more rounds and is reported at \
     that look's α; the groups still undecided share the rounds the budget leaves equally (a \
     total fixed without their own figures) with the groups that have no crossover cell, and \
     are judged again over all their rounds, at α = 0.04; at both looks every estimate is \
     widened by its question's pooled lag-1 autocorrelation of rounds (rho, bias-corrected, \
     clamped to [0, 0.95]); equivalent needs 8 rounds, so no pilot of fewer decides it; the \
     budget may end a group short.";

/// A point's headline figures by round, of rounds before `before`, from completed visits.
fn headline(log: &VisitLog, point: &Point, before: usize) -> Vec<(usize, f64)> {
    log.of(&point.key())
        .into_iter()
        .filter(|r| r.status == "completed")
        .filter_map(|r: &RunRecord| {
            let v = r.visit.as_ref()?;
            (v.kind == VisitKind::Headline && v.round < before)
                .then(|| (v.round, r.headline_value()))
        })
        .collect()
}

/// The pilot: every headline visit made before round `before`, by group.
pub fn pilot(
    spec: &SweepSpec,
    points: &[Point],
    groups: &[Vec<usize>],
    log: &VisitLog,
    before: usize,
) -> Pilot {
    let mut pilot = Pilot {
        rounds: spec.min_visits,
        groups: groups.len(),
        ..Pilot::default()
    };
    for (g, members) in groups.iter().enumerate() {
        for &i in members {
            let values = headline(log, &points[i], before);
            pilot
                .points
                .push((g, values.iter().map(|(_, v)| *v).collect()));
        }
        let stream: Vec<&Point> = members
            .iter()
            .map(|&i| &points[i])
            .filter(|p| p.pattern == Pattern::Stream && !p.bidir)
            .collect();
        let named = |name: &str| stream.iter().find(|p| p.mechanism.name() == name).copied();
        for (question, (challenger, baseline)) in pairs().into_iter().enumerate() {
            let (Some(c), Some(b)) = (named(challenger), named(baseline)) else {
                continue;
            };
            let base = headline(log, b, before);
            let pairs = headline(log, c, before)
                .into_iter()
                .filter_map(|(round, vc)| {
                    let (_, vb) = base.iter().find(|(r, _)| *r == round)?;
                    Some((vc, *vb))
                })
                .collect();
            pilot.cells.push(PilotCell {
                group: g,
                question,
                pairs,
            });
        }
    }
    pilot
}

/// The targets the spec sets (its margin, its `--ci`, at most `VISIT_BOUNDS.1` rounds) and
/// the group-rounds its budget leaves.
pub fn targets(spec: &SweepSpec, rounds_left: usize) -> Targets {
    Targets {
        margin: spec.margin,
        ci: spec.ci_target,
        max_rounds: super::spec::VISIT_BOUNDS.1,
        rounds_left,
        pilot_alpha: PILOT_ALPHA,
    }
}

/// Group-rounds the budget left after the rounds before `before` buys: what is left over what
/// a round of an average group cost in them (its points' headline visits at their mean wall
/// time). Counted from those rounds alone, so that `--resume` decides the same plan again.
fn rounds_left(spec: &SweepSpec, groups: &[Vec<usize>], log: &VisitLog, before: usize) -> usize {
    let (spent, visit) = log.cost_before(before);
    let left = spec.total_budget().saturating_sub(spent).as_secs_f64();
    let points = groups.iter().map(Vec::len).sum::<usize>() as f64 / groups.len().max(1) as f64;
    match visit {
        Some(visit) if visit > 0.0 && points > 0.0 => (left / (visit * points)) as usize,
        _ => 0,
    }
}

/// Headline rounds each group has made (its points' most; a skipped point makes none).
pub fn made(points: &[Point], groups: &[Vec<usize>], log: &VisitLog) -> Vec<usize> {
    groups
        .iter()
        .map(|members| {
            members
                .iter()
                .map(|&i| headline_rounds(log, &points[i]))
                .max()
                .unwrap_or(0)
        })
        .collect()
}

fn headline_rounds(log: &VisitLog, point: &Point) -> usize {
    log.of(&point.key())
        .iter()
        .filter(|r| {
            r.visit
                .as_ref()
                .is_some_and(|v| v.kind == VisitKind::Headline)
        })
        .count()
}

/// `rounds.json`: the rule, its looks and margin, and every group's rounds (planned, made, why
/// it stopped). `plan` is `None` where the budget ended the sweep before any adaptive round:
/// each cell was then looked at once.
pub fn write(
    dir: &Path,
    (spec, log): (&SweepSpec, &VisitLog),
    points: &[Point],
    groups: &[Vec<usize>],
    (plan, made, stopped): (Option<&[GroupRounds]>, &[usize], &str),
) -> Result<(), Error> {
    let entries: Vec<GroupLine> = groups
        .iter()
        .enumerate()
        .map(|(g, members)| {
            let p = &points[members[0]];
            GroupLine {
                pattern: p.pattern.name(),
                threads: p.threads,
                size_bytes: p.message_size,
                rounds_made: made[g],
                plan: plan.and_then(|plan| plan.get(g)).map(|r| PlannedLine {
                    rounds: r,
                    undecided: r.undecided.iter().map(|&q| question_name(q)).collect(),
                    stop: stop(r, made[g], stopped),
                }),
            }
        })
        .collect();
    let looks = if plan.is_some() { ADAPTIVE_LOOKS } else { 1 };
    let document = serde_json::json!({
        "rule": RULE,
        "looks": looks,
        "alpha_looks": looks_settings(looks).alpha_looks(),
        "margin": spec.margin,
        "pilot_rounds": spec.min_visits,
        "adaptive": plan.is_some(),
        "rho": rho_lines(spec, (points, groups), log, plan.is_some()),
        "groups": entries,
    });
    let path = dir.join(ROUNDS_JSON);
    let text = serde_json::to_string_pretty(&document).expect("JSON") + "\n";
    let tmp = dir.join(format!("{ROUNDS_JSON}.tmp"));
    let file_error = |source| Error::File {
        path: path.clone(),
        source,
    };
    std::fs::write(&tmp, text).map_err(file_error)?;
    std::fs::rename(&tmp, &path).map_err(file_error)
}

/// Each question's pooled lag-1 autocorrelation of rounds, as the looks widened by it: at the
/// pilot (where there was an adaptive plan) and over every round made (the report's look).
fn rho_lines(
    spec: &SweepSpec,
    (points, groups): (&[Point], &[Vec<usize>]),
    log: &VisitLog,
    adaptive: bool,
) -> Vec<serde_json::Value> {
    let last = question_rho(&pilot(spec, points, groups, log, usize::MAX));
    let at_pilot = match adaptive {
        true => question_rho(&pilot(spec, points, groups, log, spec.min_visits)),
        false => Vec::new(),
    };
    last.into_iter()
        .map(|(q, rho)| {
            let pilot = at_pilot.iter().find(|(p, _)| *p == q).and_then(|(_, r)| *r);
            serde_json::json!({"question": question_name(q), "pilot": pilot, "last": rho})
        })
        .collect()
}

/// One group's entry in rounds.json.
#[derive(Serialize)]
struct GroupLine<'a> {
    pattern: &'static str,
    threads: usize,
    size_bytes: usize,
    rounds_made: usize,
    /// Its rounds as the plan fixed them, where there is a plan.
    #[serde(flatten)]
    plan: Option<PlannedLine<'a>>,
}

#[derive(Serialize)]
struct PlannedLine<'a> {
    #[serde(flatten)]
    rounds: &'a GroupRounds,
    /// The questions still undecided at the pilot, by name.
    undecided: Vec<String>,
    /// Why its rounds ended where they did.
    stop: &'static str,
}

/// The crossover rule's settings at `looks` looks.
fn looks_settings(looks: usize) -> Settings {
    Settings {
        looks,
        ..Settings::default()
    }
}

fn question_name(q: usize) -> String {
    let (c, b) = pairs()[q];
    format!("{c} vs {b}")
}

/// Why a group's rounds ended where they did.
fn stop(r: &GroupRounds, made: usize, stopped: &str) -> &'static str {
    match (made >= r.planned_rounds, stopped) {
        (true, _) => "planned_rounds_made",
        (false, "interrupted") => "interrupted",
        (false, "under_way") => "under_way",
        (false, _) => "budget_spent",
    }
}

/// Decides the plan once, from the pilot.
pub fn decide(
    spec: &SweepSpec,
    points: &[Point],
    groups: &[Vec<usize>],
    log: &VisitLog,
    before: usize,
) -> Vec<GroupRounds> {
    let targets = targets(spec, rounds_left(spec, groups, log, before));
    adaptive::plan(&pilot(spec, points, groups, log, before), &targets)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule's text and the report's method text state each look's α in words: they must
    /// be the α the looks are held to.
    #[test]
    fn the_rule_texts_state_the_alphas_the_looks_use() {
        let [pilot, last] = looks_settings(ADAPTIVE_LOOKS).alpha_looks()[..] else {
            panic!("two looks, two α")
        };
        assert!(RULE.contains(&format!("at α = {pilot})")), "{RULE}");
        assert!(RULE.contains(&format!("at α = {last};")), "{RULE}");
        let families = super::super::answers::QUESTIONS.families;
        let stated = format!("the pilot's look at α = {pilot} and the last at {last}");
        assert!(families.contains(&stated), "{families}");
        assert_eq!(
            looks_settings(1).alpha_looks(),
            [crate::stats::verdict::ALPHA]
        );
    }
}
