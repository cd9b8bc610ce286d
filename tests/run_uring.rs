//! The io_uring senders' queue depth end to end (stream and rr delivery of every mechanism is
//! in run_mechanisms.rs): the smallest and a large depth deliver every byte, checked, and
//! `uring-zc` accounts for its notifications like `zerocopy`; bad depths are refused. Skipped,
//! with the probe's reason, where the kernel lacks io_uring or the opcode.
mod common;
use bytepath::mechanism::{self, MechanismKind};
use common::{assert_delivered, bytepath, run_json, u};
use serde_json::Value;

const MECHANISMS: [MechanismKind; 3] = [
    MechanismKind::URING,
    MechanismKind::URING_GATHER,
    MechanismKind::URING_ZC,
];

fn available(kind: MechanismKind) -> bool {
    match mechanism::supported(kind) {
        Ok(()) => true,
        Err(reason) => {
            common::skip_part(kind.name(), reason);
            false
        }
    }
}

fn assert_notifications_accounted(r: &Value, what: &str) {
    let z = &r["zerocopy"];
    assert!(u(&z["send_calls"]) > 0, "{what}: no SEND_ZC");
    assert_eq!(
        z["completions"], z["send_calls"],
        "{what}: every send is notified exactly once"
    );
    assert_eq!(z["outstanding_at_end"], 0, "{what}");
    assert!(u(&z["pool_messages"]) > 0, "{what}");
    let pct = z["copied_anyway_percent"]
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: copied share reported: {z}"));
    assert!((0.0..=100.0).contains(&pct), "{what}: {pct}");
}

#[test]
fn the_smallest_and_a_large_queue_depth_both_deliver() {
    for kind in MECHANISMS.into_iter().filter(|&k| available(k)) {
        for depth in ["1", "64"] {
            let what = format!("{} --queue-depth {depth}", kind.name());
            let (r, code) = run_json(&[
                "-m",
                kind.name(),
                "-s",
                "24K",
                "--queue-depth",
                depth,
                "--verify",
            ]);
            assert_eq!(code, 0, "{what}: {}", r["errors"]);
            assert_delivered(&r, &what);
            assert_eq!(r["config"]["queue_depth"].to_string(), depth, "{what}");
            if kind == MechanismKind::URING_ZC {
                assert_notifications_accounted(&r, &what);
                assert!(u(&r["zerocopy"]["pool_messages"]) >= 64 || depth == "1");
            }
        }
    }
}

#[test]
fn queue_depths_out_of_range_are_refused_in_one_line() {
    for depth in ["0", "5000"] {
        let out = bytepath()
            .args(["run", "-m", "uring", "--queue-depth", depth])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{depth}: {err}");
        assert!(out.stdout.is_empty(), "{depth}: nothing measured");
        assert_eq!(err.trim_end().lines().count(), 1, "{depth}: {err}");
        assert!(
            err.contains(&format!("--queue-depth \"{depth}\"")) && err.contains("1 to 4096"),
            "{err}"
        );
    }
}

#[test]
fn a_queue_depth_whose_buffers_cannot_fit_is_refused_before_allocating() {
    // uring-zc keeps at least one 64 MiB buffer per queue-depth entry: 256 GiB here.
    for mechanism in ["uring", "uring-zc"] {
        let out = bytepath()
            .args(["run", "-m", mechanism, "-s", "64M", "--queue-depth", "4096"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{mechanism}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{mechanism}: {err}");
        assert!(err.contains("needs about"), "{mechanism}: {err}");
    }
}
