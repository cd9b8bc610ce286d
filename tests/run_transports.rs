//! The same engine over other transports: AF_UNIX socket pairs and pipe pairs carry every
//! copying mechanism in stream and rr with every byte verified; zero copy stays TCP-only.
mod common;
use common::{bytepath, run_json, u};

#[test]
fn unix_and_pipe_flows_deliver_every_byte_for_every_copying_mechanism() {
    for transport in ["unix", "pipe", "shm"] {
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
                    "24K",
                    "-t",
                    "2",
                    "--verify",
                ]);
                assert_eq!(code, 0, "{what}: {}", r["errors"]);
                assert_eq!(r["config"]["transport"], transport);
                let t = &r["transfer"];
                assert!(u(&t["sender_sent_bytes"]) > 0, "{what}");
                assert_eq!(t["all_delivered"], true, "{what}");
                assert_eq!(r["verify"]["mismatched_bytes"], 0, "{what}");
                let received = u(&t["receiver_received_bytes"]) + u(&t["sender_received_bytes"]);
                assert_eq!(u(&r["verify"]["checked_bytes"]), received, "{what}");
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
fn zerocopy_off_tcp_and_unknown_transports_are_refused() {
    let out = bytepath()
        .args(["run", "-m", "zerocopy", "--transport", "pipe"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MSG_ZEROCOPY works on TCP sockets only"),
        "{err}"
    );
    let out = bytepath()
        .args(["run", "-m", "copy", "--transport", "carrier-pigeon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("allowed: tcp, unix, pipe, shm"));
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
