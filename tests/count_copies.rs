//! `--count-copies` on the real binary: the kernel's own count of the bytes copied to user
//! space per byte delivered (1 for `recv`, 1 − the mapped share for `zc-recv`), the block in
//! a sweep's record and reports, the one line a user without root gets, and tracefs left
//! mounted or not as it was found.
mod common;

use serde_json::Value;
use std::path::Path;
use std::sync::Mutex;

/// One test at a time: each may mount and unmount tracefs, which the others' before/after
/// look at /proc/mounts would see.
static TURN: Mutex<()> = Mutex::new(());

fn tracefs_mounted() -> bool {
    std::fs::read_to_string("/proc/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(2) == Some("tracefs"))
}

/// `run --count-copies` with `args`, as JSON; tracefs as mounted after as before.
fn counted_run(args: &[&str]) -> Value {
    let before = tracefs_mounted();
    let out = common::bytepath()
        .args(["run", "-d", "500ms", "--warmup", "100ms"])
        .args(["--pin", "cross", "--count-copies", "--json"])
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    assert_eq!(
        tracefs_mounted(),
        before,
        "bytepath left tracefs {} (it was {} before)",
        if before { "unmounted" } else { "mounted" },
        if before { "mounted" } else { "not mounted" }
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Why this machine cannot count, if it cannot (and the test is skipped).
fn cannot_count() -> Option<&'static str> {
    if !common::is_root() {
        return Some("the tracepoints of every task need root");
    }
    if !Path::new("/sys/kernel/tracing").is_dir() {
        return Some("this kernel has no tracefs");
    }
    None
}

fn copies(r: &Value) -> &Value {
    let c = &r["copies"];
    assert!(c.is_object(), "no copies block: {r}");
    assert_eq!(c["lost_samples"], 0, "{c}");
    c
}

#[test]
fn recv_copies_every_byte_it_delivers() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_count() {
        return common::skip(why);
    }
    let r = counted_run(&["-m", "copy", "-s", "64K"]);
    let c = copies(&r);
    let ratio = c["copied_per_byte_delivered"].as_f64().unwrap_or_else(|| {
        panic!("no ratio: {c}");
    });
    eprintln!("tcp recv: copied per byte delivered {ratio:.4}");
    assert!(
        (ratio - 1.0).abs() <= 0.01,
        "copied per byte delivered {ratio}: {c}"
    );
    assert!(common::u(&c["delivered_bytes"]) > 0);
    // Loopback TCP leaves through lo, and only through lo.
    let devices: Vec<&str> = c["transmit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    assert!(devices.contains(&"lo"), "{devices:?}");
    assert!(c["counted_in"]
        .as_str()
        .unwrap()
        .contains("a run of its own"));
    // The headline figures come from the run with nothing open; the counted run's own
    // figure is given beside them.
    assert!(
        r["sides"][1]["throughput_gbps"].as_f64().unwrap() > 0.0,
        "{r}"
    );
    assert!(c["headline_value"].as_f64().unwrap() > 0.0, "{c}");
}

#[test]
fn zc_recv_copies_one_minus_what_it_mapped() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_count() {
        return common::skip(why);
    }
    // MSG_ZEROCOPY's pages are ones TCP_ZEROCOPY_RECEIVE maps on loopback; with plain copy it
    // maps none, and the equality holds at 0 mapped too.
    for mechanism in ["zerocopy", "copy"] {
        let r = counted_run(&["-m", mechanism, "-s", "64K", "--recv", "zc-recv"]);
        let c = copies(&r);
        let ratio = c["copied_per_byte_delivered"].as_f64().unwrap();
        let mapped = c["mapped_share"].as_f64().unwrap_or_else(|| panic!("{c}"));
        eprintln!(
            "tcp zc-recv, -m {mechanism}: copied per byte delivered {ratio:.4}, mapped share \
             {mapped:.4}"
        );
        assert!(
            (ratio - (1.0 - mapped)).abs() <= 0.01,
            "-m {mechanism}: copied per byte delivered {ratio}, 1 - mapped {}: {c}",
            1.0 - mapped
        );
        if mechanism == "zerocopy" && mapped == 0.0 {
            common::skip_part(
                "zerocopy mapped",
                "zc-recv mapped nothing here; the equality was asserted at 0 mapped only",
            );
        }
    }
}

#[test]
fn udp_gets_a_block_with_its_drops_and_says_which_copies_it_cannot_see() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_count() {
        return common::skip(why);
    }
    // 1 KiB datagrams sit in one linear buffer: UDP copies them where the tracepoint does
    // not fire. 32 KiB ones are paged: every copy is seen.
    let small = counted_run(&["-m", "copy", "--transport", "udp", "-s", "1K"]);
    let c = copies(&small);
    assert!(c["copied_per_byte_delivered"].is_null(), "{c}");
    let why = c["copied_per_byte_delivered_unavailable_reason"]
        .as_str()
        .unwrap();
    assert!(why.contains("copy_linear_skb()"), "{why}");
    assert!(c["drops"].is_array() && c["transmit"].is_array(), "{c}");
    let large = counted_run(&["-m", "copy", "--transport", "udp", "-s", "32K"]);
    let c = copies(&large);
    let ratio = c["copied_per_byte_delivered"]
        .as_f64()
        .unwrap_or_else(|| panic!("{c}"));
    eprintln!("udp 32 KiB: copied per byte delivered {ratio:.4}");
    assert!((ratio - 1.0).abs() <= 0.01, "{c}");
}

#[test]
fn a_sweep_counts_in_a_visit_of_its_own_and_reports_it() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_count() {
        return common::skip(why);
    }
    let dir = std::env::temp_dir().join(format!("bytepath-count-copies-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let before = tracefs_mounted();
    let out = common::bytepath()
        .args([
            "sweep",
            "--mechanisms",
            "send",
            "--sizes",
            "16K",
            "--threads",
            "1",
        ])
        .args(["--recv", "recv", "--slice", "20ms", "--visit", "200ms"])
        .args([
            "--budget",
            "300ms",
            "--warmup",
            "50ms",
            "--seed",
            "3",
            "--count-copies",
        ])
        .arg("--out")
        .arg(&dir)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    assert_eq!(tracefs_mounted(), before, "tracefs left as it was found");
    let visits = std::fs::read_to_string(dir.join("visits.jsonl")).unwrap();
    let kinds: Vec<Value> = visits
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| v["visit"]["kind"].clone())
        .collect();
    let copies_visits = kinds.iter().filter(|k| *k == "copies").count();
    assert_eq!(copies_visits, 1, "{kinds:?}");
    let results = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let r: Value = serde_json::from_str(results.lines().last().unwrap()).unwrap();
    let c = copies(&r);
    let ratio = c["copied_per_byte_delivered"].as_f64().unwrap();
    eprintln!("sweep send 16 KiB: copied per byte delivered {ratio:.4}");
    assert!((ratio - 1.0).abs() <= 0.01, "{c}");
    assert!(
        c["counted_in"].as_str().unwrap().contains("copies visit"),
        "{c}"
    );
    // The headline statistics are the headline visits' only.
    let headline = kinds.iter().filter(|k| *k == "headline").count();
    assert_eq!(r["statistics"]["visits"]["count"], headline as u64, "{r}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("## Copies counted (--count-copies)"), "{md}");
    assert!(md.contains("B copied to user space per byte delivered over 1 of 1 points"));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("id=\"copies\""));
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains("copies_copied_per_byte_delivered"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bytepath` as nobody (uid and gid 65534, no groups).
fn as_nobody(args: &[&str]) -> std::process::Output {
    std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_bytepath"))
        .args(args)
        .env("BYTEPATH_SETTLE", "off")
        .env("BYTEPATH_QUIET_THRESHOLD", "100%")
        .output()
        .unwrap()
}

#[test]
fn without_root_one_line_says_why_and_the_run_still_measures() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    if !common::is_root() || !common::has_command("setpriv") {
        return common::skip("needs root (to drop to nobody) and setpriv");
    }
    let run = [
        "run", "-m", "copy", "-s", "16K", "-d", "300ms", "--warmup", "0s",
    ];
    let out = as_nobody(&[&run[..], &["--count-copies"]].concat());
    common::assert_success(&out);
    let table = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = table
        .lines()
        .filter(|l| l.contains("copies (kernel"))
        .collect();
    assert_eq!(lines.len(), 1, "{table}");
    let line = lines[0];
    assert!(
        line.starts_with("copies (kernel tracepoints): not counted: "),
        "{line}"
    );
    // Whichever step refused: the mount (tracefs not mounted) or perf_event_open.
    assert!(
        line.contains("mounting it needs root") || line.contains("need root or CAP_PERFMON"),
        "{line}"
    );
    let out = as_nobody(&[&run[..], &["--count-copies", "--json"]].concat());
    common::assert_success(&out);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "completed", "the run still measures");
    assert!(
        r["sides"][1]["throughput_gbps"].as_f64().unwrap() > 0.0,
        "{r}"
    );
    let c = &r["copies"];
    assert!(
        c["copied_per_byte_delivered"].is_null(),
        "never a made-up figure: {c}"
    );
    assert!(c["drops"].is_null() && c["transmit"].is_null(), "{c}");
    assert!(
        c["copied_to_user_bytes_unavailable_reason"].is_string(),
        "{c}"
    );
}

#[test]
fn a_sweep_without_root_says_why_once_and_skips_its_copies_visits() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    if !common::is_root() || !common::has_command("setpriv") {
        return common::skip("needs root (to drop to nobody) and setpriv");
    }
    let dir = std::env::temp_dir().join(format!("bytepath-copies-nobody-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = as_nobody(&[
        "sweep",
        "--mechanisms",
        "send",
        "--sizes",
        "4K",
        "--threads",
        "1",
        "--slice",
        "20ms",
        "--visit",
        "200ms",
        "--budget",
        "300ms",
        "--warmup",
        "50ms",
        "--count-copies",
        "--out",
        dir.to_str().unwrap(),
    ]);
    common::assert_success(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("--count-copies"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].contains("copies not counted: "), "{}", said[0]);
    let visits = std::fs::read_to_string(dir.join("visits.jsonl")).unwrap();
    assert!(
        !visits.contains("\"kind\":\"copies\""),
        "no copies visit was made"
    );
    let results = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let r: Value = serde_json::from_str(results.lines().last().unwrap()).unwrap();
    assert_eq!(r["status"], "completed");
    assert!(r["copies"]["copied_per_byte_delivered"].is_null(), "{r}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("not counted in any of its 1 points"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}
