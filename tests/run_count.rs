//! `--messages` and `--bytes`: each flow measures exactly its share, then the run stops (as
//! iperf3 -k / -n), with the stop reason recorded.
mod common;
use common::{bytepath, u};
use serde_json::Value;

fn counted(args: &[&str]) -> Value {
    let out = bytepath()
        .args(["run", "--warmup", "100ms", "--json"])
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn rr_measures_exactly_the_requested_round_trips() {
    let r = counted(&[
        "-m",
        "copy",
        "-p",
        "rr",
        "-s",
        "64",
        "--messages",
        "3000",
        "--verify",
    ]);
    assert_eq!(u(&r["sides"][0]["messages"]), 3000);
    assert_eq!(r["statistics"]["stop_reason"], "count_reached");
    assert_eq!(r["config"]["messages_per_flow"], 3000);
    assert_eq!(r["transfer"]["all_delivered"], true);
    assert!(
        r["measured_s"].as_f64().unwrap() < 60.0,
        "stopped by the count, not the 10 min cap"
    );
}

#[test]
fn a_stream_share_between_two_batches_is_met_exactly_with_one_sample_per_message() {
    // The receiver stamps batches of 64 messages; 1001 ends inside one.
    let r = counted(&["-m", "send", "-s", "256", "--messages", "1001"]);
    let receiver = &r["sides"][1];
    assert_eq!(u(&receiver["messages"]), 1001);
    assert_eq!(u(&receiver["payload_bytes"]), 1001 * 256);
    assert_eq!(u(&receiver["latency_ns"]["count"]), 1001);
    let definition = receiver["latency_definition"].as_str().unwrap();
    assert!(definition.contains("batch of up to 64"), "{definition}");
    assert_eq!(r["statistics"]["stop_reason"], "count_reached");
}

#[test]
fn bytes_are_shared_among_flows_and_received_exactly() {
    let r = counted(&[
        "-m",
        "gather",
        "-s",
        "64K",
        "-t",
        "2",
        "--bytes",
        "20M",
        "--transport",
        "unix",
    ]);
    // 10 MiB per flow = 160 messages of 64 KiB each.
    assert_eq!(r["config"]["messages_per_flow"], 160);
    assert_eq!(u(&r["sides"][1]["payload_bytes"]), 20 << 20);
    assert_eq!(u(&r["sides"][1]["messages"]), 320);
    assert_eq!(r["statistics"]["stop_reason"], "count_reached");
}

#[test]
fn bad_counts_are_refused() {
    for (args, needle) in [
        (vec!["--messages", "0"], "--messages \"0\""),
        (vec!["--bytes", "lots"], "--bytes \"lots\""),
        (
            vec!["--messages", "5", "--bytes", "1M"],
            "cannot be used with",
        ),
    ] {
        let out = bytepath()
            .args(["run", "-m", "copy"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}
