//! `--profile` end to end on the real binary: `run`'s profile blocks (both sides, shares that
//! add up, copies where the mechanism copies), sendfile against send, the unavailable path as
//! an unprivileged user, and the sweep report's stacked-bar figure. Sampling kernel code needs
//! root here (perf_event_paranoid=2); those tests skip with the reason otherwise.
mod common;

use serde_json::Value;
use std::process::Command;

/// Profiles that share two CPUs with another profiled run measure each other: the share of a
/// category (copies, above all) is diluted by whatever else the sampled threads waited on. The
/// tests that sample take turns.
static ONE_PROFILE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_PROFILE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// `run --profile --json` of a 64 KiB stream with `mechanism`: the record.
fn profiled_run(mechanism: &str) -> Value {
    let out = common::bytepath()
        .args(["run", "-m", mechanism, "-s", "64K", "--duration", "1s"])
        .args([
            "--warmup",
            "200ms",
            "--counters",
            "none",
            "--profile",
            "--json",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The side's measured profile block, or the reason it has none.
fn block(record: &Value, side: usize) -> Result<&Value, String> {
    let p = &record["sides"][side]["profile"];
    match p["status"].as_str() {
        Some("measured") => Ok(p),
        _ => Err(p["reason"]
            .as_str()
            .unwrap_or("no profile block")
            .to_string()),
    }
}

fn share(block: &Value, category: &str) -> f64 {
    block["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == category)
        .and_then(|c| c["share"].as_f64())
        .unwrap_or_else(|| panic!("no category {category}"))
}

#[test]
fn a_copy_run_profiles_both_sides_with_copies_and_shares_that_add_up() {
    if !common::is_root() {
        return common::skip("sampling kernel code needs root here");
    }
    let _alone = alone();
    let r = profiled_run("copy");
    let visit = &r["profiled_visit"];
    assert!(
        visit["description"]
            .as_str()
            .unwrap()
            .contains("second run"),
        "{visit}"
    );
    // The headline comes from the first run: the profiled run's figure is kept apart.
    assert!(visit["headline_value"].as_f64().unwrap() > 0.0);
    let (sender, receiver) = (block(&r, 0).unwrap(), block(&r, 1).unwrap());
    for b in [sender, receiver] {
        let total: f64 = b["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["share"].as_f64().unwrap())
            .sum();
        assert!((total - 1.0).abs() < 1e-6, "shares sum to {total}");
        assert!(b["samples"].as_u64().unwrap() > 100, "{}", b["samples"]);
        let ns: f64 = b["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["cpu_ns_per_byte"].as_f64().unwrap())
            .sum();
        assert!(ns > 0.0, "CPU-ns per byte per category is filled");
    }
    assert!(share(sender, "copy_user_to_kernel") > 0.0, "{sender}");
    assert!(share(receiver, "copy_kernel_to_user") > 0.0, "{receiver}");
    // A memcpy cost was measured on this host, so both sides say their copies' worth.
    assert!(visit["memcpy_ns_per_byte"].as_f64().unwrap() > 0.0);
    for b in [sender, receiver] {
        let label = b["copies_per_byte"]["label"].as_str().unwrap();
        assert!(label.contains("copies' worth"), "{label}");
    }
}

#[test]
fn sendfile_copies_less_from_user_space_than_send() {
    if !common::is_root() {
        return common::skip("sampling kernel code needs root here");
    }
    let _alone = alone();
    let send = profiled_run("send");
    let file = profiled_run("sendfile");
    let send_in = share(block(&send, 0).unwrap(), "copy_user_to_kernel");
    let file_in = share(block(&file, 0).unwrap(), "copy_user_to_kernel");
    // send copies every byte in (_copy_from_iter: 15-30 % of the sender here); sendfile hands
    // page-cache pages over. The gap is over ten points with intervals a few points wide, so
    // halving is a margin noise does not cross.
    // The floor only says the copy is seen at all: the share read 15-30 % when this test was
    // written and 3-5 % (send, readsend) in a later session on the same VM, so the claim
    // tested is the relative one below.
    assert!(send_in > 0.02, "send copies in: {send_in:.3}");
    assert!(
        file_in < send_in / 2.0,
        "sendfile {file_in:.3} vs send {send_in:.3}"
    );
}

/// A copy of the binary where an unprivileged user can run it.
fn binary_for_anyone(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("bytepath");
    std::fs::copy(env!("CARGO_BIN_EXE_bytepath"), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn an_unprivileged_run_goes_on_with_each_profile_unavailable_and_why() {
    if !common::is_root() || !common::has_command("setpriv") {
        return common::skip("needs root (to drop to nobody) and setpriv");
    }
    let paranoid = bytepath::measure::counters::perf_event_paranoid().unwrap_or(2);
    if paranoid < 2 {
        return common::skip(format!(
            "perf_event_paranoid={paranoid} lets unprivileged users sample"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = binary_for_anyone(dir.path());
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&binary)
        .args(["run", "-m", "copy", "-s", "64K", "--duration", "300ms"])
        .args([
            "--warmup",
            "100ms",
            "--counters",
            "none",
            "--profile",
            "--json",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    common::assert_success(&out);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "completed");
    assert!(r["sides"][1]["throughput_gbps"].as_f64().unwrap() > 0.0);
    for side in 0..2 {
        let reason = block(&r, side).unwrap_err();
        assert!(reason.starts_with("permission:"), "{reason}");
        assert!(reason.contains("perf_event_paranoid"), "{reason}");
    }
}

#[test]
fn a_profiled_sweep_report_draws_a_stacked_bar_per_side_and_size() {
    if !common::is_root() {
        return common::skip("sampling kernel code needs root here");
    }
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let out = common::bytepath()
        .args(["sweep", "--mechanisms", "copy", "--sizes", "4K,64K"])
        .args(["--threads", "1", "--visits", "2", "--visit", "200ms"])
        .args(["--warmup", "50ms", "--budget", "1s", "--counters", "none"])
        .args(["--seed", "1", "--profile", "--out"])
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let doc = common::parse_xhtml(&html);
    let svg = doc
        .descendants()
        .find(|n| n.has_tag_name("svg") && n.attribute("class") == Some("breakdown"))
        .expect("a stacked-bar figure");
    let bars: std::collections::HashSet<&str> = svg
        .descendants()
        .filter(|n| n.attribute("class") == Some("segment"))
        .map(|n| n.attribute("x").unwrap())
        .collect();
    assert_eq!(bars.len(), 4, "two sizes × two sides");
    let answer = html.contains("how does the copy share change with size?");
    assert!(answer, "the Answers section asks where the CPU goes");
    // A change across sizes is tested on batch means over time blocks of each profiled window
    // (never read off overlapping intervals), its autocorrelation stated beside it.
    assert!(
        html.contains("tested on batch means"),
        "the method is stated"
    );
    let tested = html.contains("time blocks; lag-1 autocorrelation of the block shares");
    let untested = html.contains("a change not tested: the profiles hold no time blocks");
    assert!(
        tested || untested,
        "each side's change is tested or said not to be"
    );
    assert!(
        !html.contains("one profiled visit per point)"),
        "the old wording is gone"
    );
    // The CSV carries the per-category columns, filled for the profiled points.
    let mut csv = csv::Reader::from_path(dir.path().join("results.csv")).unwrap();
    let col = csv
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "sender_profile_copy_user_to_kernel_share")
        .expect("a per-category column");
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert!(row[col].parse::<f64>().unwrap() > 0.0, "{row:?}");
    }
}

#[test]
fn a_profiled_file_study_keeps_the_profiled_transfer_out_of_its_figures() {
    if !common::is_root() {
        return common::skip("sampling kernel code needs root here");
    }
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let out = common::bytepath()
        .args(["file", "--sizes", "4M", "--mechanisms", "readsend,sendfile"])
        .args(["--reps", "2", "--counters", "none", "--profile", "--out"])
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    let lines: Vec<Value> = std::fs::read_to_string(dir.path().join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let profiled: Vec<&Value> = lines.iter().filter(|r| r["profiled"].is_object()).collect();
    assert_eq!(
        (lines.len(), profiled.len()),
        (6, 2),
        "two reps and one profiled each"
    );
    for r in &profiled {
        assert!(r["profiled"]["repeats"].as_u64().unwrap() >= 1);
        for side in ["server", "client"] {
            assert_eq!(
                r[side]["profile"]["status"], "measured",
                "{}",
                r[side]["profile"]
            );
        }
    }
    // readsend reads the file into user memory and sends it: it copies in; sendfile does not.
    // The floor only says a copy is seen: the share read 1.8 % on a loaded two-CPU machine
    // (15-30 % when this test was written), so the claim that matters is the relative one.
    let copy_in = |m: &str| {
        let r = profiled.iter().find(|r| r["mechanism"] == m).unwrap();
        share(&r["server"]["profile"], "copy_user_to_kernel")
    };
    let (readsend, sendfile) = (copy_in("readsend"), copy_in("sendfile"));
    assert!(
        readsend > 0.01 && sendfile < readsend / 2.0,
        "copies in: readsend {readsend:.3}, sendfile {sendfile:.3}"
    );
    // The summaries count the two measured transfers only.
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("2/2"), "{table}");
    let figures = breakdown_figures(&dir.path().join("report.html"));
    assert_eq!(figures, 2, "a stacked-bar figure per mechanism");
}

#[test]
fn profile_with_a_remote_file_server_is_refused_in_one_line() {
    let out = common::bytepath()
        .args(["file", "--remote", "127.0.0.1:9", "--profile"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--profile with --remote"), "{err}");
}

#[test]
fn a_profiled_servers_study_samples_each_model_in_a_window_of_its_own() {
    if !common::is_root() {
        return common::skip("sampling kernel code needs root here");
    }
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let out = common::bytepath()
        .args(["servers", "--models", "threaded,epoll", "--clients", "5"])
        .args(["--duration", "500ms", "--profile", "--out"])
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    let records: Vec<Value> = std::fs::read_to_string(dir.path().join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Four visits per point (the default); only the last round's visit of each point is
    // followed by a profile window.
    assert_eq!(records.len(), 8);
    let records: Vec<Value> = records
        .into_iter()
        .filter(|r| !r["profile"].is_null())
        .collect();
    assert_eq!(records.len(), 2, "one profiled visit per point");
    for r in &records {
        assert_eq!(r["visit"]["round"], 3, "the last round's visit is profiled");
        assert_eq!(r["profile"]["status"], "measured", "{}", r["profile"]);
        assert!(r["profiled_window"]
            .as_str()
            .unwrap()
            .contains("window of its own"));
        let total: f64 = r["profile"]["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["share"].as_f64().unwrap())
            .sum();
        assert!((total - 1.0).abs() < 1e-6, "{total}");
    }
    // A thread per client wakes and sleeps per request: more of its CPU is scheduling.
    let sched = |model: &str| {
        let r = records
            .iter()
            .find(|r| r["config"]["model"] == model)
            .unwrap();
        share(&r["profile"], "scheduler")
    };
    assert!(sched("threaded") > 0.0 && sched("epoll") >= 0.0);
    let figures = breakdown_figures(&dir.path().join("report.html"));
    assert_eq!(figures, 2, "a stacked-bar figure per model");
}

#[test]
fn a_remote_server_samples_its_own_side_and_sends_the_block_back() {
    if !common::is_root() {
        return common::skip("sampling kernel code needs root here");
    }
    let _alone = alone();
    let server = common::Server::start("5s", &[]);
    let out = common::bytepath()
        .args([
            "run",
            "--remote",
            &server.address(),
            "-m",
            "copy",
            "-s",
            "64K",
        ])
        .args([
            "--duration",
            "1s",
            "--warmup",
            "200ms",
            "--counters",
            "none",
        ])
        .args(["--profile", "--json"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    // stream: the server sends, this host receives; each sampled where it ran.
    let (sender, receiver) = (block(&r, 0).unwrap(), block(&r, 1).unwrap());
    assert!(share(sender, "copy_user_to_kernel") > 0.0, "{sender}");
    assert!(share(receiver, "copy_kernel_to_user") > 0.0, "{receiver}");
    // This host's memcpy cost is not the server's: copies' worth only on this host's side.
    assert!(
        sender["copies_per_byte"].is_null(),
        "{}",
        sender["copies_per_byte"]
    );
    assert!(receiver["copies_per_byte"]["copies"].as_f64().unwrap() > 0.0);
    let source = r["profiled_visit"]["memcpy_source"].as_str().unwrap();
    assert!(source.contains("this host's side only"), "{source}");
}

/// How many stacked-bar (breakdown) figures a report page holds, parsed as XML.
fn breakdown_figures(report: &std::path::Path) -> usize {
    let html = std::fs::read_to_string(report).unwrap();
    let doc = common::parse_xhtml(&html);
    doc.descendants()
        .filter(|n| n.has_tag_name("svg") && n.attribute("class") == Some("breakdown"))
        .count()
}
