//! The same engine over other transports: AF_UNIX socket pairs, pipe pairs, shared-memory
//! rings and datagram sockets carry every copying mechanism in stream and rr with every byte
//! verified; datagrams are numbered and their loss counted; zero copy is refused off TCP and UDP.
mod common;
use common::{assert_delivered, bytepath, run_json, u};

#[test]
fn unix_and_pipe_flows_deliver_every_byte_for_every_copying_mechanism() {
    every_copying_point(&["unix", "pipe", "shm"], "24K", |r, what, transport, _| {
        assert_eq!(r["config"]["transport"], transport);
        assert_delivered(r, what);
    });
}

/// Runs every copying mechanism in stream and rr over each transport, 2 flows, --verify, and
/// hands each successful record to `check` with (what, transport, pattern).
fn every_copying_point(
    transports: &[&str],
    size: &str,
    check: impl Fn(&serde_json::Value, &str, &str, &str),
) {
    for &transport in transports {
        for mechanism in ["send", "copy", "gather"] {
            for pattern in ["stream", "rr"] {
                let what = format!("{transport}/{mechanism}/{pattern}");
                let (r, code) = run_json(&[
                    "--transport",
                    transport,
                    "-m",
                    mechanism,
                    "-p",
                    pattern,
                    "-s",
                    size,
                    "-t",
                    "2",
                    "--verify",
                ]);
                assert_eq!(code, 0, "{what}: {}", r["errors"]);
                check(&r, &what, transport, pattern);
            }
        }
    }
}

#[test]
fn spinning_reads_work_on_pipes_and_rings_too() {
    for transport in ["pipe", "shm"] {
        let (r, code) = run_json(&[
            "--transport",
            transport,
            "-m",
            "copy",
            "-p",
            "rr",
            "-s",
            "64",
            "--spin",
            "--pin",
            "cross",
            "--verify",
        ]);
        assert_eq!(code, 0, "{transport}: {}", r["errors"]);
        assert_eq!(r["transfer"]["all_delivered"], true, "{transport}");
        assert!(u(&r["sides"][0]["messages"]) > 0, "{transport}");
    }
}

#[test]
fn zerocopy_off_tcp_and_udp_and_unknown_transports_are_refused() {
    let out = bytepath()
        .args(["run", "-m", "zerocopy", "--transport", "pipe"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MSG_ZEROCOPY works on TCP and UDP sockets only"),
        "{err}"
    );
    let out = bytepath()
        .args(["run", "-m", "copy", "--transport", "carrier-pigeon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("allowed: tcp, unix, pipe, shm, udp, unix-dgram"));
}

#[test]
fn the_pipe_buffer_is_settable_and_the_granted_size_is_recorded() {
    let (r, code) = run_json(&[
        "--transport",
        "pipe",
        "-m",
        "send",
        "-s",
        "64K",
        "--pipe-size",
        "1M",
        "--verify",
    ]);
    assert_eq!(code, 0, "{}", r["errors"]);
    assert_eq!(r["config"]["channel_buffer_bytes"], 1 << 20);
    assert_eq!(r["transfer"]["all_delivered"], true);
    let (r, _) = run_json(&["--transport", "pipe", "-m", "send", "-s", "4K"]);
    assert_eq!(
        r["config"]["channel_buffer_bytes"], 65536,
        "the kernel's default"
    );
    let out = bytepath()
        .args(["run", "-m", "send", "--pipe-size", "1M"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("applies to --transport pipe and shm only")
    );
    let out = bytepath()
        .args([
            "run",
            "-m",
            "send",
            "--transport",
            "pipe",
            "--pipe-size",
            "1G",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pipe-max-size"));
}

/// Bytes the receiving sides checked: everything received except each datagram's number.
fn checked_payload(r: &serde_json::Value) -> u64 {
    let t = &r["transfer"];
    let d = &r["datagrams"];
    let datagrams = u(&d["forward"]["received"]) + d["back"]["received"].as_u64().unwrap_or(0);
    u(&t["receiver_received_bytes"]) + u(&t["sender_received_bytes"]) - 4 * datagrams
}

#[test]
fn datagram_flows_number_every_datagram_and_verify_every_byte_received() {
    every_copying_point(
        &["udp", "unix-dgram"],
        "1K",
        |r, what, transport, pattern| {
            assert_eq!(r["verify"]["mismatched_bytes"], 0, "{what}");
            assert_eq!(
                u(&r["verify"]["checked_bytes"]),
                checked_payload(r),
                "{what}"
            );
            let d = &r["datagrams"];
            assert_eq!(d["datagrams_per_message"], 1, "{what}");
            let forward = &d["forward"];
            assert!(u(&forward["received"]) > 0, "{what}");
            assert_eq!(
                u(&forward["received"]) + u(&forward["lost"]),
                u(&forward["sent"]),
                "{what}"
            );
            if pattern == "rr" {
                assert_eq!(
                    u(&d["back"]["sent"]),
                    u(&forward["received"]),
                    "{what}: every request that arrived was answered"
                );
            }
            if transport == "unix-dgram" {
                // AF_UNIX datagram senders block on a full receiver instead of dropping.
                assert_eq!(u(&forward["lost"]), 0, "{what}");
                assert_eq!(r["transfer"]["all_delivered"], true, "{what}");
            }
        },
    );
}

#[test]
fn a_message_above_the_datagram_limit_is_split_into_numbered_datagrams_or_refused() {
    let (r, code) = run_json(&[
        "--transport",
        "udp",
        "-m",
        "gather",
        "-s",
        "100K",
        "--udp-split",
        "--verify",
    ]);
    assert_eq!(code, 0, "{}", r["errors"]);
    let d = &r["datagrams"];
    assert_eq!(d["datagrams_per_message"], 2);
    assert_eq!(d["datagram_bytes"], 51_200);
    assert_eq!(r["verify"]["mismatched_bytes"], 0);
    assert_eq!(u(&r["verify"]["checked_bytes"]), checked_payload(&r));
    let out = bytepath()
        .args(["run", "-m", "gather", "--transport", "udp", "-s", "100K"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("one datagram carries at most 65507 B") && err.contains("--udp-split"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
