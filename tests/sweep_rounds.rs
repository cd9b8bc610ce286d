//! `bytepath sweep` with budget left after the pilot: the plan is made once, rounds.json
//! records it, the visits follow it, and the report judges the crossover family at the last
//! look's α (0.04).
mod common;

use serde_json::Value;

#[test]
fn a_sweep_with_budget_left_plans_each_groups_rounds_and_judges_at_two_looks() {
    let dir = std::env::temp_dir().join(format!("bytepath-sweep-rounds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = common::bytepath()
        .args([
            "sweep",
            "--mechanisms",
            "copy,gather",
            "--sizes",
            "4K",
            "--threads",
            "1",
        ])
        .args([
            "--visit",
            "50ms",
            "--warmup",
            "20ms",
            "--slice",
            "10ms",
            "--min-visits",
            "2",
        ])
        .args([
            "--budget",
            "2s",
            "--counters",
            "none",
            "--seed",
            "3",
            "--margin",
            "4%",
        ])
        .arg("--out")
        .arg(&dir)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("bytepath ran");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("margin ±4 %"), "{stdout}");
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    let rounds = read("rounds.json");
    assert_eq!(
        (rounds["looks"].as_u64(), rounds["margin"].as_f64()),
        (Some(2), Some(0.04))
    );
    let group = &rounds["groups"][0];
    let (planned, made) = (
        group["planned_rounds"].as_u64().unwrap(),
        group["rounds_made"].as_u64().unwrap(),
    );
    assert!(made <= planned && made >= 2, "{group}");
    match group["why"].as_str().unwrap() {
        "decided_at_pilot" => assert_eq!((planned, made), (2, 2), "{group}"),
        "undecided" => {
            // The only group open: the whole budget's rounds, none of them from its spread.
            assert!(planned > 2 && group["pilot_spread"].is_null(), "{group}");
            let stop = group["stop"].as_str().unwrap();
            assert_eq!(stop == "planned_rounds_made", made == planned, "{group}");
        }
        other => panic!("{other}: {group}"),
    }
    // The visits follow the plan: each point has as many headline rounds as the group made.
    let visits = std::fs::read_to_string(dir.join("visits.jsonl")).unwrap();
    let gather_rounds = visits
        .lines()
        .filter(|l| l.contains("\"gather/stream/4096/1\"") && l.contains("\"headline\""))
        .count() as u64;
    assert!(
        gather_rounds >= made,
        "{gather_rounds} visits, {made} rounds"
    );
    let answers = read("answers.json");
    let gather = answers
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["question"].as_str().unwrap().contains("gather"))
        .unwrap();
    assert_eq!(
        (gather["alpha"].as_f64(), gather["margin"].as_f64()),
        (Some(0.04), Some(0.04))
    );
    let _ = std::fs::remove_dir_all(&dir);
}
