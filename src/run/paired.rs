//! `bytepath run --under-load N`: the rr latency without and with the load in the same run,
//! paired by round as a sweep pairs its points. `ROUNDS` rounds, each a visit without the load
//! and a visit with it back to back, the order alternating by round, so that each round gives
//! one ratio in which the machine's regime of that moment cancels. The run's headline figures
//! are its visits with the load (what a run under load always measured); the record's
//! `under_load.paired` keeps every round's two visits and the ratios loaded over unloaded of
//! the rr client's p50 and p99, judged by the sweep answer's machinery
//! (`analysis::under_load::run_ratios`).
use super::spec::RunStudy;
use crate::config::{RunSpec, Stopping};
use crate::engine::PointRunner;
use crate::environment::Environment;
use crate::error::Error;
use crate::record::aggregate::point_record;
use crate::record::under_load::{LatencyOverVisits, PairedRun, PairedVisit, RoundPair, VisitLoad};
use crate::record::{RunRecord, VisitInfo};
use crate::stats::point::VisitPlan;
use crate::stats::schedule::VisitKind;
use crate::stats::verdict::DEFAULT_MARGIN;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Rounds of a paired run (`run` has no --rounds): the fewest pairs from which "equivalent"
/// may be said (`stats::interval::MIN_EQUIVALENCE_PAIRS`), so that each state of the verdict
/// can be reached; fewer would leave a load that changes nothing "undecided" whatever it did.
pub const ROUNDS: usize = crate::stats::interval::MIN_EQUIVALENCE_PAIRS;

/// How a paired run lays out its visits, stated in its record.
const DESIGN: &str = "rounds of two visits, one without the load and one with it, back to \
     back: the visit without the load first in even rounds (0, 2, ...), the one with it first in \
     odd rounds; the run's --duration (or --messages/--bytes) split evenly over the 2 x rounds \
     visits, each visit warmed up for --warmup before its measured phase (the load, in its \
     visits, runs through both); rounds fixed at 8, the fewest pairs from which \"equivalent\" \
     may be said (run has no --rounds)";

/// One visit made: its round, whether the load ran beside it, and its record.
struct Visit {
    round: usize,
    loaded: bool,
    record: RunRecord,
}

/// Measures the placed `spec` (which asks for a load) in paired visits and builds the run's
/// record: the headline from the visits with the load, `under_load.paired` from all of them.
pub fn measure(
    spec: &RunSpec,
    runner: &dyn PointRunner,
    study: &RunStudy,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Error> {
    let (visits, again) = visits(spec, runner, study, interrupt)?;
    let mut record = headline(spec, Environment::detect(study.cpus), &visits);
    record.notes.extend(again);
    // The visits' notes said it; a record built from them says it once.
    let stream_note = super::visit::STREAM_NOTE;
    if study.stream.is_on() && !record.notes.iter().any(|n| n == stream_note) {
        record.notes.push(stream_note.into());
    }
    match record.under_load.as_mut() {
        Some(block) => block.paired = Some(paired(spec, &visits)),
        None => record.notes.push(
            "--under-load: the run stopped before any visit with the load, so nothing is paired"
                .into(),
        ),
    }
    Ok(record)
}

/// A visit's spec: `spec` with its duration (and count) split evenly over the visits, and
/// the load only in the visits that carry it.
fn visit_spec(spec: &RunSpec, loaded: bool) -> RunSpec {
    let visits = 2 * ROUNDS;
    let duration = spec.duration / visits as u32;
    RunSpec {
        duration,
        stopping: Stopping {
            messages_per_flow: (spec.stopping.messages_per_flow)
                .map(|m| (m / visits as u64).max(1)),
            ..Stopping::fixed(duration)
        },
        under_load: spec.under_load.filter(|_| loaded),
        ..spec.clone()
    }
}

/// Round `round`'s two visits in the order they run: `false` without the load, `true` with.
fn order(round: usize) -> [bool; 2] {
    match round % 2 {
        0 => [false, true],
        _ => [true, false],
    }
}

/// Every visit, round by round, until the last or until one is interrupted or skipped (the
/// first always runs, so the run has a record), and what was made again.
fn visits(
    spec: &RunSpec,
    runner: &dyn PointRunner,
    study: &RunStudy,
    interrupt: &AtomicBool,
) -> Result<(Vec<Visit>, Vec<String>), Error> {
    let (mut made, mut again): (Vec<Visit>, Vec<String>) = (Vec::new(), Vec::new());
    for (round, loaded) in (0..ROUNDS).flat_map(|r| order(r).map(|l| (r, l))) {
        let ended = |v: &Visit| v.record.interrupted || v.record.skipped_reason.is_some();
        if !made.is_empty() && (interrupt.load(Ordering::Relaxed) || made.iter().any(ended)) {
            break;
        }
        let make = || {
            visit(
                spec,
                runner,
                (study, interrupt),
                (round, loaded),
                made.len(),
            )
        };
        let mut record = make()?;
        // As a sweep does: a visit that failed is made once more at once.
        if record.status == "failed" && !interrupt.load(Ordering::Relaxed) {
            again.push(format!(
                "round {round} visit {}: failed ({}) and was made once more at once",
                if loaded {
                    "with the load"
                } else {
                    "without the load"
                },
                record.errors.join("; ")
            ));
            record = make()?;
        }
        made.push(Visit {
            round,
            loaded,
            record,
        });
    }
    Ok((made, again))
}

/// One visit of round `round`, with the load or without it, labelled as the `position`-th.
fn visit(
    spec: &RunSpec,
    runner: &dyn PointRunner,
    (study, interrupt): (&RunStudy, &AtomicBool),
    (round, loaded): (usize, bool),
    position: usize,
) -> Result<RunRecord, Error> {
    let label = serde_json::json!({ "round": round, "load": loaded });
    let started = Instant::now();
    let one = visit_spec(spec, loaded);
    let mut record = super::visit::visit(&one, runner, study, interrupt, Some(label))?;
    record.visit = Some(VisitInfo {
        key: "run".into(),
        round,
        kind: VisitKind::Headline,
        position,
        wall_s: started.elapsed().as_secs_f64(),
        // The order is fixed (alternating), not drawn: no seed is behind it.
        seed: 0,
        interference: None,
    });
    Ok(record)
}

/// The run's record from its visits with the load (as a sweep's point from its visits), its
/// configuration the run's own; the visits without the load add their errors.
fn headline(spec: &RunSpec, env: Environment, visits: &[Visit]) -> RunRecord {
    let loaded: Vec<&RunRecord> = (visits.iter())
        .filter(|v| v.loaded)
        .map(|v| &v.record)
        .collect();
    let one = visit_spec(spec, true);
    let plan = VisitPlan {
        min_visits: ROUNDS,
        visit_s: one.duration.as_secs_f64(),
        warmup_s: spec.warmup.as_secs_f64(),
        slice_s: one.stopping.slice.as_secs_f64(),
        ci_target: None,
        stop_reason: "fixed_duration".into(),
        counters_round: None,
        seed: None,
    };
    // `visits` holds at least its first visit: the run's record when none had the load.
    let Some(mut record) = point_record(&one, env, &loaded, &plan) else {
        return visits[0].record.clone();
    };
    record.config.duration_s = spec.duration.as_secs_f64();
    record.config.messages_per_flow = spec.stopping.messages_per_flow;
    record.notes.retain(|n| !n.starts_with("measured in "));
    record.notes.push(visits_note(&plan, loaded.len()));
    quiet_errors(&mut record, visits);
    record
}

/// The visits without the load on the run's record, by the rule a sweep's point keeps for its
/// visits: with two or more completed, one that failed twice costs its round's pair (a note
/// says which); with fewer, its errors fail the run.
fn quiet_errors(record: &mut RunRecord, visits: &[Visit]) {
    let quiet: Vec<&Visit> = visits.iter().filter(|v| !v.loaded).collect();
    let completed = quiet.iter().filter(|v| v.record.status == "completed");
    let errors: Vec<String> = (quiet.iter())
        .flat_map(|v| {
            let at = format!("round {} visit without the load", v.round);
            v.record.errors.iter().map(move |e| format!("{at}: {e}"))
        })
        .collect();
    if errors.is_empty() {
        return;
    }
    if completed.count() >= 2 {
        record.notes.push(format!(
            "a visit without the load failed twice and its round is left out of the pairs ({}); the ratios come from the rounds whose two visits completed",
            errors.join("; ")
        ));
        return;
    }
    record.errors.extend(errors);
    if record.status == "completed" {
        record.status = "failed".into();
    }
}

/// What the headline figures of a paired run are over.
fn visits_note(plan: &VisitPlan, loaded: usize) -> String {
    format!(
        "--under-load: measured in {ROUNDS} rounds of a visit without the load and a visit with \
         it ({:.0} ms measured each, after {:.0} ms of warm-up each, order alternating by round); \
         every figure above is over the {loaded} visits with the load (latency percentiles the \
         median over visits, the interval from the visit means); under_load.paired holds every \
         round's two visits and the ratios with over without",
        plan.visit_s * 1e3,
        plan.warmup_s * 1e3
    )
}

/// The paired block: every round's two visits, their medians and the ratios.
fn paired(spec: &RunSpec, visits: &[Visit]) -> PairedRun {
    let pairs: Vec<RoundPair> = (0..ROUNDS)
        .filter(|r| visits.iter().any(|v| v.round == *r))
        .map(|round| {
            let of = |loaded| {
                visits
                    .iter()
                    .find(|v| v.round == round && v.loaded == loaded)
            };
            RoundPair {
                round,
                first: if order(round)[0] {
                    "loaded"
                } else {
                    "unloaded"
                }
                .into(),
                unloaded: paired_visit(of(false)),
                loaded: paired_visit(of(true)),
            }
        })
        .collect();
    let one = visit_spec(spec, true);
    PairedRun {
        rounds: ROUNDS,
        design: DESIGN.into(),
        visit_s: one.duration.as_secs_f64(),
        warmup_s: spec.warmup.as_secs_f64(),
        unloaded: over_visits(&pairs, |p| &p.unloaded),
        loaded: over_visits(&pairs, |p| &p.loaded),
        ratios: crate::analysis::under_load::run_ratios(&pairs, DEFAULT_MARGIN),
        margin: DEFAULT_MARGIN,
        basis: crate::analysis::under_load::run_basis(DEFAULT_MARGIN),
        pairs,
    }
}

/// One visit's rr client latency and load, or a visit the run stopped before.
fn paired_visit(v: Option<&Visit>) -> PairedVisit {
    let Some(v) = v else {
        return PairedVisit {
            status: "not run".into(),
            p50_ns: None,
            p99_ns: None,
            latency_percentiles_ns: Vec::new(),
            latency_unavailable_reason: Some("the run stopped before this visit".into()),
            load: None,
        };
    };
    let client = v.record.sides.first();
    let latency = client.and_then(|c| c.latency_ns.as_ref());
    let reason = || {
        (client.and_then(|c| c.latency_ns_unavailable_reason.clone()))
            .unwrap_or_else(|| "the visit measured no client side".into())
    };
    PairedVisit {
        status: v.record.status.clone(),
        p50_ns: latency.map(|l| l.p50),
        p99_ns: latency.map(|l| l.p99),
        latency_percentiles_ns: (client.map(|c| c.distribution.latency_percentiles_ns.clone()))
            .unwrap_or_default(),
        latency_unavailable_reason: latency.is_none().then(reason),
        load: v.record.under_load.as_ref().map(VisitLoad::of),
    }
}

/// The median over the completed visits of one kind of each visit's p50 and p99.
fn over_visits(pairs: &[RoundPair], visit: fn(&RoundPair) -> &PairedVisit) -> LatencyOverVisits {
    let done: Vec<&PairedVisit> = (pairs.iter().map(visit))
        .filter(|v| v.status == "completed")
        .collect();
    let median = |pick: fn(&PairedVisit) -> Option<u64>| {
        let values: Vec<f64> = done
            .iter()
            .filter_map(|v| pick(v))
            .map(|ns| ns as f64)
            .collect();
        crate::probe::summary::median(&values)
    };
    LatencyOverVisits {
        visits: done.len(),
        p50_ns: median(|v| v.p50_ns),
        p99_ns: median(|v| v.p99_ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Pattern;
    use std::time::Duration;

    fn rr() -> RunSpec {
        RunSpec {
            pattern: Pattern::Rr,
            under_load: Some(2),
            ..RunSpec::plain(64, Duration::from_millis(1600))
        }
    }

    #[test]
    fn the_duration_is_split_evenly_and_only_the_loaded_visits_carry_the_load() {
        let (quiet, loaded) = (visit_spec(&rr(), false), visit_spec(&rr(), true));
        assert_eq!(quiet.duration, Duration::from_millis(100));
        assert_eq!(quiet.stopping, Stopping::fixed(Duration::from_millis(100)));
        assert_eq!((quiet.under_load, loaded.under_load), (None, Some(2)));
        let counted = RunSpec {
            stopping: Stopping {
                messages_per_flow: Some(1600),
                ..rr().stopping
            },
            ..rr()
        };
        assert_eq!(
            visit_spec(&counted, true).stopping.messages_per_flow,
            Some(100)
        );
    }

    #[test]
    fn the_order_alternates_by_round_and_each_round_holds_one_of_each() {
        assert_eq!(order(0), [false, true]);
        assert_eq!(order(1), [true, false]);
        assert_eq!(order(6), order(0));
        let loaded: usize = (0..ROUNDS)
            .map(|r| order(r).iter().filter(|l| **l).count())
            .sum();
        assert_eq!(loaded, ROUNDS);
    }

    #[test]
    fn a_visit_the_run_stopped_before_says_so_and_counts_in_no_median() {
        let missing = paired_visit(None);
        assert_eq!((missing.status.as_str(), missing.p50_ns), ("not run", None));
        assert!(missing.load.is_none());
        let pair = |round: usize, unloaded: PairedVisit| RoundPair {
            round,
            first: "unloaded".into(),
            unloaded,
            loaded: paired_visit(None),
        };
        let done = PairedVisit {
            status: "completed".into(),
            p50_ns: Some(10),
            p99_ns: Some(30),
            ..paired_visit(None)
        };
        let pairs = [
            pair(0, done.clone()),
            pair(
                1,
                PairedVisit {
                    p50_ns: Some(20),
                    ..done
                },
            ),
            pair(2, paired_visit(None)),
        ];
        let quiet = over_visits(&pairs, |p| &p.unloaded);
        assert_eq!(
            (quiet.visits, quiet.p50_ns, quiet.p99_ns),
            (2, Some(15.0), Some(30.0))
        );
        assert_eq!(over_visits(&pairs, |p| &p.loaded).p50_ns, None);
    }
}
