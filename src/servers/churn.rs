//! The servers study's answer to "what does connection churn cost each model, and which
//! suffers most", where one study measured both `--connection persistent,per-request`. The two
//! modes of a model at one client count were visited back to back in each round (with every
//! other model of that count), so each round gives the share of its persistent requests/s a
//! model keeps per-request; models are compared on those per-round shares (a paired ratio of
//! ratios), and "suffers most" is said only when that comparison is decided. A model the load
//! generator limited at that client count (either mode) is named and not compared.
use super::leaders::limited_words;
use super::visits::{connection_of, point_of, round, ServersView};
use crate::analysis::paired::{ratio_of, verdict_within};
use crate::analysis::separated::{self, leadership, Rounds, Words};
use crate::analysis::Answer;
use crate::stats::verdict::percent;

pub const CHURN: &str = "What does a connection per request cost each model against persistent connections, and which model suffers most from connection churn?";

/// What the churn answer rests on, with the margin stated.
fn basis(margin: f64) -> String {
    format!(
        "per-round paired ratios (both connection modes of every model at one client count \
         visited back to back in each round, order reversed every other round): a model's \
         per-request requests/s over its persistent requests/s, and two models compared on \
         those per-round shares; 95 % CI by Student's t on the per-round log-ratios; each \
         comparison alone (no family correction): below/above 1 when that interval excludes \
         1, \"equivalent within ±{}\" when two one-sided tests place it inside [{:.3}, {:.3}] \
         (90 % CI), \"undecided\" otherwise; a model suffers most only when the share it \
         keeps is below every other model's (all pairs, Holm), \"A against B\" giving B's \
         kept share over A's; a model whose client CPU per thread reached 90 % at a visit \
         (either mode) was limited by the load generator and is named, not compared",
        percent(margin),
        1.0 - margin,
        1.0 + margin
    )
}

/// Whether the records hold both connection modes (then the study answers [`CHURN`]).
pub fn both_modes(records: &[ServersView]) -> bool {
    let has = |mode: &str| records.iter().any(|r| connection_of(r) == mode);
    has("persistent") && has("per-request")
}

/// `(round, requests/s)` of one point's completed visits in one connection mode.
fn rounds(records: &[&ServersView], model: &str, clients: u64, mode: &str) -> Vec<(usize, f64)> {
    records
        .iter()
        .filter(|r| connection_of(r) == mode && point_of(r) == (model.to_string(), clients))
        .filter_map(|r| Some((round(r), r.metrics.as_ref()?.requests_per_s?)))
        .collect()
}

/// Per round, the share of its persistent requests/s the model keeps per-request.
fn kept_per_round(records: &[&ServersView], model: &str, clients: u64) -> Vec<(usize, f64)> {
    let persistent = rounds(records, model, clients, "persistent");
    rounds(records, model, clients, "per-request")
        .into_iter()
        .filter_map(|(round, churned)| {
            let (_, kept) = persistent.iter().find(|(r, _)| *r == round)?;
            (*kept > 0.0).then(|| (round, churned / kept))
        })
        .collect()
}

/// A model measured in both modes: its name, its per-request over persistent ratio, and the
/// share it kept in each round.
type Ranked = (String, f64, Vec<(usize, f64)>);

/// One client count's lines: each model's cost of churn, then which suffers most.
/// The last is (the detail with its figures, the verdict without them).
fn at(
    records: &[&ServersView],
    clients: u64,
    models: &[String],
    margin: f64,
) -> (Vec<String>, (String, String)) {
    let mut lines = Vec::new();
    let mut ranked: Vec<Ranked> = Vec::new();
    for m in models {
        // Either mode limited by the load generator: its share may be the clients'.
        let limited = records
            .iter()
            .filter(|r| point_of(r) == (m.clone(), clients))
            .filter_map(|r| r.load_limited())
            .reduce(f64::max);
        if let Some(share) = limited {
            let why = limited_words(m, clients, share);
            lines.push(format!("{clients} clients, {m}: not compared: {why}"));
            continue;
        }
        let churned = rounds(records, m, clients, "per-request");
        let kept = rounds(records, m, clients, "persistent");
        match ratio_of(&churned, &kept, &format!("{m} per-request and persistent")) {
            Ok(r) => {
                lines.push(format!(
                    "{clients} clients, {m}: per-request over persistent requests/s {}",
                    verdict_within(&r, margin)
                ));
                ranked.push((m.clone(), r.ratio, kept_per_round(records, m, clients)));
            }
            Err(why) if !churned.is_empty() && !kept.is_empty() => {
                lines.push(format!("{clients} clients, {m}: {why}"))
            }
            Err(_) => {}
        }
    }
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    (lines, most_suffering(clients, &ranked, margin))
}

/// How "suffers most" is told: the model whose kept share is below every other's.
const WORDS: Words = Words {
    better: "keeps less",
    worse: "keeps more",
    leads: "suffers most",
    noun: "model suffering most",
};

/// Which of the models `ranked` suffers most at `c` clients: the one whose per-round kept
/// share is below every other model's (all pairs, Holm), never merely the smallest estimate
/// tested against the next (which names a sufferer among equals); the detail with its
/// figures and the verdict without them.
fn most_suffering(c: u64, ranked: &[Ranked], margin: f64) -> (String, String) {
    match ranked {
        [] => (
            format!("{c} clients: no model measured in both modes"),
            format!("{c} clients: cannot be said"),
        ),
        [(only, ..)] => (
            format!("{c} clients: {only} (the only model measured in both modes)"),
            format!("{c} clients: {only} alone"),
        ),
        _ => {
            let candidates: Vec<(String, Rounds)> = ranked
                .iter()
                .map(|(m, _, k)| (m.clone(), k.clone()))
                .collect();
            let l = leadership(&candidates, false, margin);
            let detail = format!(
                "{c} clients: {} ({})",
                separated::describe(&candidates, &l, WORDS, margin),
                l.family.control()
            );
            let verdict = match l.leader {
                Some(i) => format!("{c} clients: {} suffers most", candidates[i].0),
                None => format!("{c} clients: undecided"),
            };
            (detail, verdict)
        }
    }
}

/// The answer from every visit's record (both modes), or `None` when the study measured one.
pub fn answer(records: &[ServersView], margin: f64) -> Option<Answer> {
    if !both_modes(records) {
        return None;
    }
    let done: Vec<&ServersView> = records.iter().filter(|r| r.completed()).collect();
    let mut models: Vec<String> = Vec::new();
    let mut clients: Vec<u64> = Vec::new();
    for r in &done {
        let (m, c) = point_of(r);
        if !models.contains(&m) {
            models.push(m);
        }
        if !clients.contains(&c) {
            clients.push(c);
        }
    }
    clients.sort();
    let (mut details, mut most) = (Vec::new(), Vec::new());
    for c in clients {
        let (lines, line) = at(&done, c, &models, margin);
        details.extend(lines);
        most.push(line);
    }
    if most.is_empty() {
        return Some(Answer::cannot(
            CHURN,
            "Cannot be said: no visit completed in both connection modes.".into(),
            basis(margin),
        ));
    }
    details.extend(most.iter().map(|(detail, _)| detail.clone()));
    let summary: Vec<String> = most.into_iter().map(|(_, summary)| summary).collect();
    Some(Answer {
        question: CHURN,
        finding: "Per client count, each model's requests/s with a connection per request against persistent connections (paired per round), then the model that keeps the smallest share, against the next smallest:".into(),
        details,
        rests_on: basis(margin),
        verdict: Some(summary.join("; ")),
    })
}

#[cfg(test)]
#[path = "churn_tests.rs"]
mod tests;
