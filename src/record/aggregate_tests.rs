//! A point built from visits of which one failed twice.
use super::*;
use crate::engine::RunOutcome;
use crate::record::VisitInfo;
use std::time::Duration;

fn spec() -> RunSpec {
    RunSpec::plain(4096, Duration::from_millis(300))
}

/// A headline visit of `round` that completed at `gbps`, or failed with `error`.
fn visit(round: usize, outcome: Result<f64, &str>) -> RunRecord {
    let spec = spec();
    let env = Environment::detect(&[0]);
    let mut r = crate::record::build(&spec, &RunOutcome::not_run(&spec, String::new()), env);
    r.visit = Some(VisitInfo {
        key: "send/stream/4096/1".into(),
        round,
        kind: VisitKind::Headline,
        position: round,
        wall_s: 0.4,
        seed: 1,
        interference: None,
    });
    r.measured_s = 0.3;
    match outcome {
        Ok(gbps) => {
            r.status = "completed".into();
            r.errors.clear();
            r.sides[1].throughput_gbps = gbps;
        }
        Err(e) => {
            r.status = "failed".into();
            r.errors = vec![e.into()];
        }
    }
    r
}

fn plan() -> VisitPlan {
    VisitPlan {
        min_visits: 4,
        visit_s: 0.3,
        warmup_s: 0.1,
        slice_s: 0.1,
        ci_target: None,
        stop_reason: "budget_spent".into(),
        counters_round: None,
        seed: Some(1),
    }
}

#[test]
fn a_point_keeps_its_completed_visits_when_one_fails_twice_and_says_so() {
    let visits = [
        visit(0, Ok(10.0)),
        visit(1, Err("no message completed in the measured phase")),
        visit(2, Ok(12.0)),
        visit(3, Ok(11.0)),
    ];
    let refs: Vec<&RunRecord> = visits.iter().collect();
    let env = Environment::detect(&[0]);
    let r = point_record(&spec(), env, &refs, &plan()).unwrap();
    assert_eq!(r.status, "completed", "{:?}", r.errors);
    assert!(r.errors.is_empty());
    assert_eq!(r.statistics.values, vec![10.0, 12.0, 11.0]);
    let note = r.notes.iter().find(|n| n.contains("failed twice")).unwrap();
    assert!(
        note.contains("round 1 visit: no message completed") && note.contains("the 3 headline"),
        "{note}"
    );
}

#[test]
fn a_point_with_one_completed_visit_left_fails_with_its_errors() {
    let visits = [visit(0, Ok(10.0)), visit(1, Err("refused"))];
    let refs: Vec<&RunRecord> = visits.iter().collect();
    let env = Environment::detect(&[0]);
    let r = point_record(&spec(), env, &refs, &plan()).unwrap();
    assert_eq!(r.status, "failed");
    assert_eq!(r.errors, ["round 1 visit: refused"]);
}
