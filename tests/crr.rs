//! `--pattern crr`: a connection per transaction. Both sides count the same transactions, the
//! server accepts one connection per request, every response byte is verified, the client's
//! ports last through 50,000 transactions, and what crr cannot carry is refused in one line.
mod common;
use common::{bytepath, u};
use serde_json::Value;

fn crr(args: &[&str]) -> Value {
    let out = bytepath()
        .args(["run", "-p", "crr", "--warmup", "100ms", "--json"])
        .args(args)
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    common::assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Both sides saw `n` or more transactions (the count closes the client's window at `n`; the
/// warm-up's come on top), one accepted connection each, and every byte arrived and matched.
fn assert_counts_agree(r: &Value, n: u64) {
    assert_eq!(r["status"], "completed", "{}", r["errors"]);
    let c = &r["crr"];
    assert!(u(&c["client_transactions"]) >= n, "{c}");
    assert_eq!(c["client_transactions"], c["server_transactions"], "{c}");
    assert_eq!(c["server_accepts"], c["server_transactions"], "{c}");
    assert_eq!(u(&r["sides"][0]["messages"]), n);
    assert_eq!(r["transfer"]["all_delivered"], true, "{}", r["transfer"]);
}

#[test]
fn tcp_transactions_agree_on_both_sides_and_every_response_byte_is_verified() {
    let r = crr(&["-m", "gather", "-s", "1K", "--messages", "2000", "--verify"]);
    assert_counts_agree(&r, 2000);
    let v = &r["verify"];
    // Requests and responses, all phases: at least 2 × 2000 × 1 KiB checked.
    assert!(u(&v["checked_bytes"]) >= 2 * 2000 * 1024, "{v}");
    assert_eq!(u(&v["mismatched_bytes"]), 0);
    let c = &r["crr"];
    assert_eq!(u(&c["timed_transactions"]), 2000);
    for part in [
        "connect_us_mean",
        "first_byte_us_mean",
        "response_us_mean",
        "close_us_mean",
    ] {
        assert!(c[part].as_f64().unwrap() > 0.0, "{part}: {c}");
    }
    // The first response bytes come no later than the whole response.
    let first = u(&c["first_byte_ns_total"]);
    assert!(first > 0 && first <= u(&c["response_ns_total"]), "{c}");
    assert!(c["client_cpu_us_per_transaction"].as_f64().unwrap() > 0.0);
    assert_eq!(c["client_close"], "fin");
    assert!(c["time_wait_at_end"].is_u64(), "{c}");
    assert!(c["ephemeral_port_range"].is_array(), "{c}");
}

#[test]
fn unix_transactions_agree_and_say_there_is_no_time_wait() {
    let r = crr(&[
        "--transport",
        "unix",
        "-m",
        "copy",
        "-s",
        "256",
        "--messages",
        "2000",
        "--verify",
    ]);
    assert_counts_agree(&r, 2000);
    assert_eq!(u(&r["verify"]["mismatched_bytes"]), 0);
    assert!(r["crr"]["time_wait_at_end"].is_null());
    let why = r["crr"]["time_wait_unavailable_reason"].as_str().unwrap();
    assert!(why.contains("no TIME_WAIT"), "{why}");
}

#[test]
fn ports_do_not_run_out_in_50000_transactions() {
    let r = crr(&["-m", "send", "-s", "64", "--messages", "50000"]);
    assert_counts_agree(&r, 50_000);
    let [lo, hi] = [0, 1].map(|i| u(&r["crr"]["ephemeral_port_range"][i]));
    // More transactions than ports: connect(2) reused TIME_WAIT ports (or the range is wide).
    eprintln!(
        "range {lo}-{hi}, TIME_WAIT at end {}",
        r["crr"]["time_wait_at_end"]
    );
}

#[test]
fn linger_zero_closes_by_reset_and_leaves_no_time_wait() {
    let r = crr(&[
        "-m",
        "send",
        "-s",
        "64",
        "--messages",
        "2000",
        "--linger-zero",
    ]);
    assert_counts_agree(&r, 2000);
    assert_eq!(r["crr"]["client_close"], "reset (SO_LINGER 0)");
    assert_eq!(u(&r["crr"]["time_wait_at_end"]), 0);
}

#[test]
fn what_crr_cannot_carry_is_refused_in_one_line_with_exit_2() {
    let cases: [(&[&str], &str); 4] = [
        (&["-m", "splice"], "--mechanism splice with --pattern crr: "),
        (
            &["-m", "zerocopy"],
            "--mechanism zerocopy with --pattern crr: ",
        ),
        (
            &["-m", "send", "--transport", "pipe"],
            "--pattern crr with --transport pipe: ",
        ),
        (
            &["-m", "send", "--remote", "127.0.0.1:9"],
            "--remote with --pattern crr: ",
        ),
    ];
    for (args, start) in cases {
        let out = bytepath()
            .args(["run", "-p", "crr"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("bytepath: {start}")), "{err}");
        assert!(
            err.contains("allowed") || err.contains("not supported yet"),
            "{err}"
        );
    }
    let out = bytepath()
        .args(["run", "-p", "stream", "-m", "send", "--linger-zero"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("applies to --pattern crr only"));
    let out = bytepath()
        .args(["run", "-p", "crq", "-m", "send"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("allowed: stream, rr, crr"));
}

#[test]
fn a_crr_sweep_exports_its_figures_with_units_to_openmetrics_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let out = bytepath()
        .args([
            "sweep",
            "--patterns",
            "rr,crr",
            "--mechanisms",
            "send",
            "--sizes",
            "64",
        ])
        .args([
            "--threads",
            "1",
            "--visit",
            "200ms",
            "--visits",
            "2",
            "--budget",
            "1s",
        ])
        .arg("--out")
        .arg(&out_dir)
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    common::assert_success(&out);
    // The report answers what a connection costs, pairing the crr point with its rr twin, and
    // carries the transaction's split.
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(report.contains("What does a connection cost"), "{report}");
    let line = report
        .lines()
        .find(|l| l.contains("send 64 B ×1: a crr transaction takes"))
        .unwrap_or_else(|| panic!("no paired line:\n{report}"));
    assert!(line.contains(" µs, first byte "), "{line}");
    let export = |format: &str| {
        let out = bytepath()
            .arg("export")
            .arg(&out_dir)
            .args(["--format", format])
            .output()
            .unwrap();
        common::assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let metrics = export("openmetrics");
    for family in [
        "bytepath_crr_connect_seconds{",
        "bytepath_crr_first_byte_seconds{",
        "bytepath_crr_response_seconds{",
        "bytepath_crr_close_seconds{",
        "bytepath_time_wait_at_end_sockets{",
    ] {
        assert!(metrics.contains(family), "{family} missing:\n{metrics}");
    }
    for side in ["client", "server"] {
        let line = metrics
            .lines()
            .find(|l| {
                l.starts_with("bytepath_cpu_per_transaction_seconds{")
                    && l.contains(&format!("side=\"{side}\""))
            })
            .unwrap_or_else(|| panic!("no {side} CPU per transaction:\n{metrics}"));
        let value: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(value > 0.0, "{line}");
    }
    let csv = export("csv");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2, "one rr and one crr point");
    let row = rows.iter().find(|r| &r[at("pattern")] == "crr").unwrap();
    let col = |name: &str| row[at(name)].to_string();
    assert_eq!(col("crr_client_transactions"), col("crr_server_accepts"));
    assert!(col("crr_client_transactions").parse::<u64>().unwrap() > 0);
}

#[test]
fn the_probe_says_whether_a_long_crr_run_can_keep_finding_ports() {
    let out = bytepath()
        .args(["probe", "--quick", "--json"])
        .output()
        .unwrap();
    common::assert_success(&out);
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ports = &p["crr_ports"];
    let [lo, hi] = [0, 1].map(|i| u(&ports["ephemeral_port_range"][i]));
    assert_eq!(u(&ports["ephemeral_ports"]), hi - lo + 1);
    assert!(ports["ip_bind_address_no_port"].is_boolean(), "{ports}");
    assert_eq!(u(&ports["time_wait_s"]), 60);
    let verdict = ports["long_crr_run"].as_str().unwrap();
    assert!(
        verdict.starts_with("yes")
            || verdict.starts_with("only below")
            || verdict.starts_with("unknown"),
        "{verdict}"
    );
}

#[test]
fn the_json_stream_point_carries_the_crr_block() {
    let out = bytepath()
        .args([
            "run",
            "-p",
            "crr",
            "-m",
            "send",
            "-s",
            "64",
            "--duration",
            "300ms",
        ])
        .args(["--warmup", "0s", "--json-stream"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let point: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["type"] == "point")
        .expect("a point line");
    let c = &point["record"]["crr"];
    assert!(u(&c["client_transactions"]) > 0, "{c}");
    assert_eq!(c["client_transactions"], c["server_accepts"]);
    assert!(text
        .lines()
        .any(|l| l.contains("\"type\":\"slice\"") && l.contains("\"side\":\"client\"")));
}
