//! `compare` knows the machine: two synthetic folders whose canaries and points all differ by
//! 10 % name the machine change without normalization and find no point change with
//! `--normalize canary`; folders without canaries read as before, with a line saying so.
mod common;
use bytepath::analysis::synthetic::{jsonl, Shape};
use bytepath::probe::canary::{Canary, CANARY_JSONL, CANARY_VERSION};
use common::compare;
use std::path::Path;

fn study(dir: &Path, scale: f64) {
    std::fs::create_dir_all(dir).unwrap();
    let shapes: Vec<Shape> = [4096, 65536]
        .iter()
        .flat_map(|&size| {
            ["send", "copy"].map(|m| {
                let mut s = Shape::stream(m, size, 1, 10.0 * scale);
                s.ci_rel = 0.02;
                s.pair_noise = 0.01;
                s
            })
        })
        .collect();
    std::fs::write(dir.join("results.jsonl"), jsonl(&shapes)).unwrap();
}

/// Five rounds of canaries whose costs are `cost` times a fixed machine's, with 1 % jitter,
/// each round's in a process of its own, as a study records them.
fn canaries(dir: &Path, cost: f64) {
    canaries_taken(dir, cost, Some("own"));
}

/// The same, with `process` as the lines' record of how they were taken (`None`: older
/// folders, which did not say, and whose canaries ran in the study's process).
fn canaries_taken(dir: &Path, cost: f64, process: Option<&str>) {
    let lines: Vec<String> = [1.0, 1.01, 0.99, 1.005, 0.995]
        .iter()
        .enumerate()
        .map(|(round, j)| {
            let c = Canary {
                canary_version: CANARY_VERSION,
                getpid_ns: 120.0 * cost * j,
                memcpy_gbit_s: 100.0 / (cost * j),
                memcpy_trials_gbit_s: Vec::new(),
                pipe_rr_same_cpu_us: Some(4.0 * cost * j),
                pipe_rr_same_cpu_unavailable_reason: None,
                pipe_rr_cross_cpu_us: Some(9.0 * cost * j),
                pipe_rr_cross_cpu_unavailable_reason: None,
                cpus: vec![0, 1],
                elapsed_ms: 30.0,
            };
            let mut line =
                serde_json::json!({"round": round, "unix_s": 1.0e9 + round as f64, "canary": c});
            if let Some(p) = process {
                line["process"] = serde_json::json!(p);
            }
            line.to_string()
        })
        .collect();
    std::fs::write(dir.join(CANARY_JSONL), lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_machine_ten_percent_slower_is_named_and_normalizing_removes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    study(&old, 1.0);
    canaries(&old, 1.0);
    // The machine costs 10 % more for everything; so every point is 1/1.1 as fast.
    study(&new, 1.0 / 1.1);
    canaries(&new, 1.1);

    let (code, text) = compare(&old, &new, &[]);
    assert_eq!(code, Some(0), "{text}");
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("machine: canary cost new/old"), "{text}");
    assert!(
        first.contains("the machine changed: 10.0 % slower"),
        "{text}"
    );
    // The decision is one family over the three deciding components, and the line says so;
    // the cross-CPU round trip is shown beside it, not judged.
    assert!(
        first.contains("CI Holm-corrected over 3 components"),
        "{text}"
    );
    assert!(
        first.contains(
            "reported, not judged (contention more than machine): pipe round trip, two CPUs 1.100"
        ),
        "{text}"
    );
    assert!(
        text.contains("4 points compared: 0 faster, 4 slower"),
        "{text}"
    );
    assert!(
        text.contains("point verdicts of that size are the machine's"),
        "{text}"
    );

    let (code, text) = compare(&old, &new, &["--normalize", "canary"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("normalized: every new point's figure multiplied"),
        "{text}"
    );
    // Normalized, no point moved; five visits a side are fewer than the eight "equivalent"
    // needs, so they read undecided, not equivalent.
    assert!(
        text.contains("0 faster, 0 slower, 0 equivalent within ±5 %, 4 undecided"),
        "{text}"
    );
    assert!(text.contains("1.000 ["), "{text}");
}

#[test]
fn older_folders_whose_canaries_shared_the_study_s_process_are_widened_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    study(&old, 1.0);
    study(&new, 1.0);
    // Taken in each study's process: the 1 % jitter of five rounds says nothing of how far
    // two processes land apart, so a 10 % shift is within what an A/A of such folders shows.
    canaries_taken(&old, 1.0, None);
    canaries_taken(&new, 1.1, Some("study"));
    let (code, text) = compare(&old, &new, &[]);
    assert_eq!(code, Some(0), "{text}");
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("widened by a between-process spread of 10.1 %: old 5 of 5, new 5 of 5 canaries were taken in the study's own process, whose rounds do not cover the spread between processes"),
        "{first}"
    );
    assert!(
        first.contains("no machine change beyond the 3 % margin is shown"),
        "{first}"
    );
    // Where each round was a process of its own, the same figures name the change.
    canaries(&old, 1.0);
    canaries(&new, 1.1);
    let (_, text) = compare(&old, &new, &[]);
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("each round's canary a process of its own")
            && first.contains("the machine changed: 10.0 % slower"),
        "{first}"
    );
}

#[test]
fn older_folders_without_canaries_read_as_before_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    study(&old, 1.0);
    study(&new, 1.0);
    let (code, text) = compare(&old, &new, &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("no canary was recorded in either folder"),
        "{text}"
    );
    assert!(
        text.contains("4 points compared: 0 faster, 0 slower"),
        "{text}"
    );
    // Normalizing by a canary that is not there is a bad input: one line, exit 2.
    let (code, text) = compare(&old, &new, &["--normalize", "canary"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--normalize canary: no canary was recorded"),
        "{text}"
    );
    let (code, text) = compare(&old, &new, &["--normalize", "memcpy"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--normalize \"memcpy\": expected canary"),
        "{text}"
    );
}

/// `visits.jsonl` of `n` headline visits, the first `disturbed` of them marked disturbed.
fn visits(dir: &Path, n: usize, disturbed: usize) {
    let lines: Vec<String> = (0..n)
        .map(|i| {
            serde_json::json!({"visit": {"kind": "headline", "round": i,
                "interference": {"disturbed": i < disturbed}}})
            .to_string()
        })
        .collect();
    std::fs::write(dir.join("visits.jsonl"), lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_study_taken_beside_other_work_is_named_beside_an_unchanged_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    study(&old, 1.0);
    canaries(&old, 1.0);
    visits(&old, 8, 0);
    // The canary is unchanged, the points are slower: the new study ran beside a busy loop.
    study(&new, 0.5);
    canaries(&new, 1.0);
    visits(&new, 8, 7);
    let (code, text) = compare(&old, &new, &[]);
    assert_eq!(code, Some(0), "{text}");
    let second = text.lines().nth(1).unwrap();
    assert_eq!(
        second,
        "interference: old 0 of 8 headline visits disturbed, new 7 of 8 headline visits disturbed (others used more than the run's --quiet-threshold of its CPUs)"
    );
    assert!(
        text.contains("note: most visits of the new study (7 of 8) were taken while other work used the run's CPUs"),
        "{text}"
    );
}
