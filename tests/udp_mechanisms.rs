//! The senders over UDP on loopback, on the real binary: zerocopy, uring-zc and sendmmsg
//! deliver every byte they send (loopback copies every zero-copy send, reported as 100 %
//! copied), sendmmsg's datagram count is the receiver's, `--gso` cuts every message into
//! segment-sized datagrams, and its bounds are refused with one line and exit 2. Exact
//! delivery is checked in rr, where one request is in flight at a time (a counted stream run
//! stops its receiver at the count while the sender still sends, so the rest reads as lost).
//! io_uring parts are skipped, with the probe's reason, where the kernel lacks io_uring.
mod common;
use bytepath::mechanism::{self, MechanismKind};
use common::{bytepath, u};
use serde_json::Value;

/// `bytepath run` over UDP with no warm-up and `messages` messages, as JSON, and its exit.
fn udp_run(mechanism: &str, size: &str, messages: &str, extra: &[&str]) -> (Value, i32) {
    let out = bytepath()
        .args([
            "run",
            "--json",
            "--transport",
            "udp",
            "--warmup",
            "0s",
            "--counters",
            "none",
        ])
        .args(["-m", mechanism, "-s", size, "--messages", messages])
        .args(extra)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("bytepath ran");
    let text = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): stdout {text} stderr {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (json, out.status.code().unwrap_or(-1))
}

/// An rr run of `--verify`: every byte sent each way arrived and was checked (all but each
/// datagram's 4-byte number), and each receiving side counted every datagram sent to it.
fn assert_all_arrived(r: &Value, what: &str) {
    assert_eq!(r["status"], "completed", "{what}: {}", r["errors"]);
    let t = &r["transfer"];
    let sent = u(&t["sender_sent_bytes"]);
    assert!(sent > 0, "{what}: nothing sent");
    assert_eq!(sent, u(&t["receiver_received_bytes"]), "{what}");
    assert_eq!(
        t["receiver_sent_bytes"], t["sender_received_bytes"],
        "{what}"
    );
    let d = &r["datagrams"];
    let mut datagrams = 0;
    for way in [&d["forward"], &d["back"]] {
        assert_eq!(way["sent"], way["received"], "{what}: {way}");
        assert_eq!(u(&way["lost"]), 0, "{what}");
        datagrams += u(&way["received"]);
    }
    assert_eq!(r["verify"]["mismatched_bytes"], 0, "{what}");
    let received = u(&t["receiver_received_bytes"]) + u(&t["sender_received_bytes"]);
    assert_eq!(
        u(&r["verify"]["checked_bytes"]),
        received - 4 * datagrams,
        "{what}"
    );
}

const RR: [&str; 3] = ["--pattern", "rr", "--verify"];

fn available(kind: MechanismKind) -> bool {
    match mechanism::supported(kind) {
        Ok(()) => true,
        Err(reason) => {
            common::skip_part(kind.name(), reason);
            false
        }
    }
}

#[test]
fn zerocopy_uring_zc_and_sendmmsg_over_udp_deliver_every_byte_they_send() {
    let kinds = [
        MechanismKind::ZEROCOPY,
        MechanismKind::URING_ZC,
        MechanismKind::SENDMMSG,
    ];
    for kind in kinds.into_iter().filter(|&k| available(k)) {
        let what = format!("{} over udp", kind.name());
        let (r, code) = udp_run(kind.name(), "1K", "32", &RR);
        assert_eq!(code, 0, "{what}: {}", r["errors"]);
        assert_all_arrived(&r, &what);
        assert!(u(&r["datagrams"]["forward"]["sent"]) >= 32, "{what}");
        if let Some(z) = r["zerocopy"].as_object() {
            // Loopback delivers to a local socket: the kernel copies every zero-copy send.
            assert_eq!(z["completions"], z["send_calls"], "{what}");
            assert_eq!(z["copied_anyway_percent"].as_f64(), Some(100.0), "{what}");
        } else {
            assert_eq!(kind, MechanismKind::SENDMMSG, "{what}: no zero-copy block");
        }
    }
}

#[test]
fn sendmmsg_sends_exactly_the_datagrams_the_receiver_counts() {
    // rr: 20 requests of 3 datagrams each, each answered in kind: nothing may go missing.
    let split = ["--udp-split", "--pattern", "rr", "--verify"];
    let (r, code) = udp_run("sendmmsg", "100K", "20", &split);
    assert_eq!(code, 0, "{}", r["errors"]);
    assert_all_arrived(&r, "sendmmsg rr --udp-split");
    let d = &r["datagrams"];
    assert_eq!(d["datagrams_per_message"], 2);
    let requests = u(&d["forward"]["sent"]);
    assert!(
        requests >= 20 * 2 && requests % 2 == 0,
        "{requests} datagrams"
    );
    // stream in batches of 8: the sender's datagrams are its messages' (whole batches only),
    // and every one of them is either received or counted lost after the receiver stopped.
    let (r, code) = udp_run("sendmmsg", "3000", "20", &["--queue-depth", "8"]);
    assert_eq!(code, 0, "{}", r["errors"]);
    assert_eq!(r["config"]["queue_depth"], 8);
    let forward = &r["datagrams"]["forward"];
    let sender = r["sides"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["side"] == "sender")
        .unwrap();
    assert_eq!(u(&forward["sent"]), u(&sender["messages"]), "{forward}");
    assert_eq!(
        u(&forward["sent"]),
        u(&forward["received"]) + u(&forward["lost"]),
        "{forward}"
    );
    assert!(u(&forward["received"]) >= 20, "{forward}");
}

#[test]
fn with_gso_every_message_arrives_as_segment_sized_datagrams() {
    for kind in [
        MechanismKind::SEND,
        MechanismKind::ZEROCOPY,
        MechanismKind::SENDMMSG,
        MechanismKind::URING_ZC,
    ]
    .into_iter()
    .filter(|&k| available(k))
    {
        let what = format!("{} --gso 1000", kind.name());
        let (r, code) = udp_run(
            kind.name(),
            "4200",
            "8",
            &["--gso", "1000", "--pattern", "rr", "--verify"],
        );
        assert_eq!(code, 0, "{what}: {}", r["errors"]);
        assert_all_arrived(&r, &what);
        let d = &r["datagrams"];
        assert_eq!(
            d["datagrams_per_message"], 5,
            "{what}: 4 x 1000 B and 200 B"
        );
        assert_eq!(d["datagram_bytes"], 1000, "{what}");
        assert_eq!(d["gso_sends_per_message"], 1, "{what}");
        let (requests, answers) = (u(&d["forward"]["sent"]), u(&d["back"]["sent"]));
        assert!(requests >= 8 * 5 && requests % 5 == 0, "{what}: {requests}");
        assert_eq!(answers, requests, "{what}: answers are cut alike");
        assert_eq!(r["config"]["gso_segment_bytes"], 1000, "{what}");
    }
}

#[test]
fn gso_bounds_are_refused_in_one_line_with_the_reason() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["--transport", "tcp", "--gso", "1472"],
            "allowed only with udp",
        ),
        (
            &["--transport", "udp", "--gso", "65508"],
            "allowed: 4 to 65507 B",
        ),
        (
            &["--transport", "udp", "--gso", "1472", "-s", "1M"],
            "--udp-split",
        ),
        (
            &["--transport", "udp", "--gso", "8", "-s", "2048"],
            "segments",
        ),
        (
            &["--transport", "udp", "--gso", "1003", "-s", "2008"],
            "last datagram would carry 2 B",
        ),
        (
            &[
                "--transport",
                "udp",
                "--gso",
                "1472",
                "--remote",
                "127.0.0.1:9",
            ],
            "protocol does not carry a segment size",
        ),
    ];
    for (args, reason) in cases {
        let out = bytepath()
            .args(["run", "-m", "send"])
            .args(args)
            .output()
            .expect("bytepath ran");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("--gso") && err.contains(reason),
            "{args:?}: {err}"
        );
    }
    let out = bytepath()
        .args(["run", "-m", "zerocopy", "--transport", "udp"])
        .args(["--remote", "127.0.0.1:9"])
        .output()
        .expect("bytepath ran");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("over udp with --remote: zero copy needs"),
        "{err}"
    );
    let out = bytepath()
        .args(["sweep", "--gso", "1472", "--mechanisms", "send"])
        .output()
        .expect("bytepath ran");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--gso 1472 with --transport tcp"), "{err}");
}

#[test]
fn zerocopy_over_udp_refuses_a_send_that_would_pin_more_pages_than_the_kernel_takes() {
    let out = bytepath()
        .args(["run", "-m", "zerocopy", "--transport", "udp", "-s", "40K"])
        .output()
        .expect("bytepath ran");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("may pin 24 pages") && err.contains("MAX_SKB_FRAGS"),
        "{err}"
    );
    // 32 KiB in fields of 4 KiB pins 16 pages at most: the kernel takes it.
    let (r, code) = udp_run("zerocopy", "32K", "16", &RR);
    assert_eq!(code, 0, "{}", r["errors"]);
    assert_all_arrived(&r, "zerocopy 32K over udp");
}
