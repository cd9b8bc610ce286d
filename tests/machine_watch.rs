//! The machine watches itself: a visit beside a busy loop on its CPU is marked disturbed and
//! made again, a visit beside nothing is not, and `--settle` waits while a busy loop runs and
//! starts once it stops (or says it started on a busy machine).
mod common;

use bytepath::measure::interference::Sample;
use bytepath::sys::affinity::{allowed_cpus, pin_current_thread};
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The tests here load CPUs on purpose: one at a time, so no test's busy loop lands in
/// another's quiet visit.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// A thread spinning on `cpu` until the returned flag is cleared.
fn busy_loop(cpu: usize) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let running = Arc::new(AtomicBool::new(true));
    let flag = running.clone();
    let handle = std::thread::spawn(move || {
        pin_current_thread(cpu).expect("pinning the busy loop");
        while flag.load(Ordering::Relaxed) {
            std::hint::black_box(0u64);
        }
    });
    (running, handle)
}

/// Others' share of `cpu` over one second, as the visits measure it.
fn others_share(cpu: usize) -> f64 {
    let before = Sample::take(&[cpu]);
    std::thread::sleep(Duration::from_secs(1));
    let b = before.until(&Sample::take(&[cpu]), 1, 0.1);
    b.others_cpu_share + b.steal_share
}

fn sweep(dir: &Path, extra: &[&str]) -> (String, i32) {
    let out = common::bytepath()
        .args([
            "sweep",
            "--mechanisms",
            "send",
            "--sizes",
            "4K",
            "--threads",
            "1",
        ])
        .args(["--patterns", "stream", "--pin", "same", "--visits", "2"])
        .args([
            "--slice", "20ms", "--visit", "200ms", "--budget", "300ms", "--warmup", "50ms",
        ])
        .args(["--seed", "5"])
        .args(extra)
        .arg("--out")
        .arg(dir)
        .timeout(Duration::from_secs(180))
        .output()
        .expect("bytepath ran");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (text, out.status.code().unwrap_or(-1))
}

/// Each of two rounds holds two visit lines: the disturbed visit and its redo, both kept.
fn assert_two_visits_in_each_of_two_rounds(visits: &[Value]) {
    for round in 0..2 {
        let n = visits
            .iter()
            .filter(|v| v["visit"]["round"] == round)
            .count();
        assert_eq!(n, 2, "round {round}: {visits:?}");
    }
}

fn headline_visits(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("visits.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["visit"]["kind"] == "headline")
        .collect()
}

#[test]
fn a_visit_beside_a_busy_loop_on_its_cpu_is_disturbed_and_made_again() {
    let _one = serial();
    let cpu = allowed_cpus().unwrap()[0];
    let dir = tempfile::tempdir().unwrap();
    let (running, hog) = busy_loop(cpu);
    let (text, code) = sweep(dir.path(), &["--settle", "off", "--quiet-threshold", "10%"]);
    running.store(false, Ordering::Relaxed);
    hog.join().unwrap();
    assert_eq!(code, 0, "{text}");
    let visits = headline_visits(dir.path());
    // The busy loop shares the run's one CPU: far above the 10 % threshold.
    for v in &visits {
        let block = &v["visit"]["interference"];
        assert!(block["others_cpu_share"].as_f64().unwrap() > 0.1, "{block}");
        assert_eq!(block["disturbed"], true, "{block}");
        assert_eq!(block["cpus"], 1, "{block}");
    }
    // Each of the 2 rounds: the disturbed visit and its redo at the end of the round.
    assert_two_visits_in_each_of_two_rounds(&visits);
    let results = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    assert!(results.contains("was disturbed"), "{results}");
    assert_eq!(headline_visits(dir.path()).len(), 4);
    // The report counts the disturbed visits of every kind (the counters' too) and the
    // redos among them, and draws the rounds' canaries.
    let all = std::fs::read_to_string(dir.path().join("visits.jsonl")).unwrap();
    let disturbed = all.matches("\"disturbed\":true").count();
    let canaries = std::fs::read_to_string(dir.path().join("canary.jsonl")).unwrap();
    let report = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    let counted = format!(
        "{disturbed} of {} visits were disturbed",
        all.lines().count()
    );
    assert!(
        report.contains(&counted)
            && report.contains(&format!("{} canaries over", canaries.lines().count())),
        "{counted}: {report}"
    );
    let made_again: usize = report
        .split(" of them were made again")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the count made again");
    assert!(made_again >= 2, "both headline redos: {report}");
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("data-plot=\"canary\""),
        "no canary plot in report.html"
    );
}

#[test]
fn a_visit_beside_nothing_is_not_disturbed() {
    let _one = serial();
    let cpu = allowed_cpus().unwrap()[0];
    let baseline = others_share(cpu);
    if baseline > 0.05 {
        common::skip(format!(
            "others already use {:.0} % of CPU {cpu} (a loaded machine), so a quiet visit cannot be had here",
            baseline * 100.0
        ));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (text, code) = sweep(dir.path(), &["--settle", "off", "--quiet-threshold", "50%"]);
    assert_eq!(code, 0, "{text}");
    let visits = headline_visits(dir.path());
    assert_eq!(visits.len(), 2, "no visit made again: {visits:?}");
    for v in &visits {
        assert_eq!(v["visit"]["interference"]["disturbed"], false, "{v}");
    }
}

/// Each round's canary is taken in a short process of its own (so that the rounds' spread
/// holds the spread between processes `compare` must allow for), and the line says so and
/// what the round paid for it: the child's start and exit on top of the canary itself.
#[test]
fn each_round_s_canary_is_a_process_of_its_own_and_its_cost_is_recorded() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let (text, code) = sweep(dir.path(), &["--settle", "off"]);
    assert_eq!(code, 0, "{text}");
    let lines: Vec<Value> = std::fs::read_to_string(dir.path().join("canary.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // One per round: the 2 visits' rounds, and more where the budget allows adaptive ones.
    assert!(lines.len() >= 2, "one canary per round: {lines:?}");
    for line in &lines {
        assert_eq!(line["process"], "own", "{line}");
        assert!(line.get("process_unavailable_reason").is_none(), "{line}");
        let wall = line["wall_ms"].as_f64().unwrap();
        let canary = line["canary"]["elapsed_ms"].as_f64().unwrap();
        assert!(
            line["canary"]["getpid_ns"].as_f64().unwrap() > 0.0,
            "{line}"
        );
        // The child's start and exit come on top of the canary, and cost far less than a
        // second even in a debug build on a loaded machine.
        assert!(wall >= canary && wall - canary < 1000.0, "{line}");
        println!("canary round: {wall:.1} ms in all, {canary:.1} ms the canary itself");
    }
}

#[test]
fn settle_starts_busy_at_its_limit_while_a_busy_loop_runs() {
    let _one = serial();
    let cpu = allowed_cpus().unwrap()[0];
    let dir = tempfile::tempdir().unwrap();
    let (running, hog) = busy_loop(cpu);
    let started = Instant::now();
    let (text, code) = sweep(
        dir.path(),
        &[
            "--settle",
            "on",
            "--settle-limit",
            "2s",
            "--quiet-threshold",
            "10%",
        ],
    );
    running.store(false, Ordering::Relaxed);
    hog.join().unwrap();
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("settle: started on a busy machine after waiting"),
        "{text}"
    );
    assert!(text.contains("the 2 s limit ran out"), "{text}");
    assert!(started.elapsed() >= Duration::from_secs(2));
}

#[test]
fn settle_waits_while_a_busy_loop_runs_and_starts_when_it_stops() {
    let _one = serial();
    let cpu = allowed_cpus().unwrap()[0];
    let baseline = others_share(cpu);
    if baseline > 0.05 {
        common::skip(format!(
            "others already use {:.0} % of CPU {cpu} (a loaded machine), so settling cannot end quiet here",
            baseline * 100.0
        ));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (running, hog) = busy_loop(cpu);
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(8));
        running.store(false, Ordering::Relaxed);
    });
    let (text, code) = sweep(
        dir.path(),
        &[
            "--settle",
            "on",
            "--settle-limit",
            "25s",
            "--quiet-threshold",
            "50%",
        ],
    );
    stopper.join().unwrap();
    hog.join().unwrap();
    assert_eq!(code, 0, "{text}");
    // The loop's CPU share is this test's to control; the canary's steadiness is the shared
    // machine's: when the limit ran out on the canary alone, quiet was never seen to judge.
    let ran_out = text
        .lines()
        .find(|l| l.starts_with("settle: started on a busy machine") && l.contains("canary"));
    if let Some(line) = ran_out {
        common::skip(format!("the canary never steadied in 25 s here: {line}"));
        return;
    }
    let line = text
        .lines()
        .find(|l| l.starts_with("settle: the machine was quiet after"))
        .unwrap_or_else(|| panic!("{text}"));
    // The busy loop runs 8 s from before the sweep starts; the sweep's own start and its
    // probe (a debug build on a loaded machine; the memcpy curve by threads alone takes 1–2 s
    // here) can take up to 6 s of those, so settling sees at least 1.5 s of the loop and then
    // waits the 3 s of quiet asked: 4.5 s at least.
    let waited: f64 = line
        .trim_start_matches("settle: the machine was quiet after ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(waited >= 4.5, "{line}");
}

#[test]
fn probe_canary_prints_the_figures_the_studies_record() {
    let out = common::bytepath()
        .args(["probe", "--canary", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(c["getpid_ns"].as_f64().unwrap() > 0.0, "{c}");
    assert!(c["memcpy_gbit_s"].as_f64().unwrap() > 0.0, "{c}");
    assert!(c["pipe_rr_same_cpu_us"].as_f64().unwrap() > 0.0, "{c}");
    let cross_or_why = c["pipe_rr_cross_cpu_us"].as_f64().is_some()
        || c["pipe_rr_cross_cpu_unavailable_reason"].is_string();
    assert!(cross_or_why, "{c}");
    let text = common::bytepath()
        .args(["probe", "--canary"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.starts_with("canary (CPUs"), "{text}");
    assert!(text.contains("64 B pipe round trip, one CPU"), "{text}");
}

#[test]
fn a_servers_visit_beside_a_busy_loop_is_disturbed_and_made_again_at_its_rounds_end() {
    let _one = serial();
    let cpu = allowed_cpus().unwrap()[0];
    let dir = tempfile::tempdir().unwrap();
    let (running, hog) = busy_loop(cpu);
    let out = common::bytepath()
        .args([
            "servers",
            "--models",
            "epoll",
            "--clients",
            "2",
            "--visits",
            "2",
        ])
        .args(["--duration", "300ms", "--warmup", "0s", "--seed", "3"])
        .args(["--settle", "off", "--quiet-threshold", "10%"])
        .arg("--out")
        .arg(dir.path())
        .timeout(Duration::from_secs(180))
        .output()
        .expect("bytepath ran");
    running.store(false, Ordering::Relaxed);
    hog.join().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let visits: Vec<Value> = std::fs::read_to_string(dir.path().join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The busy loop takes one of the run's CPUs whole: far above 10 % of them.
    for v in &visits {
        let block = &v["visit"]["interference"];
        assert!(block["others_cpu_share"].as_f64().unwrap() > 0.1, "{block}");
        assert_eq!(block["disturbed"], true, "{block}");
    }
    // Each round: the disturbed visit and its redo, both kept.
    assert_two_visits_in_each_of_two_rounds(&visits);
    let canaries = std::fs::read_to_string(dir.path().join("canary.jsonl")).unwrap();
    assert_eq!(canaries.lines().count(), 2, "one canary per round");
    let report = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(
        report.contains("4 of 4 visits were disturbed")
            && report.contains("2 of them were made again"),
        "{report}"
    );
}
