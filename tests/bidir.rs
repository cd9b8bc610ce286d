//! `run --bidir`: every stream flow carries data both ways at once; each direction's bytes
//! arrive whole and verified, both directions' figures are in the record, and what --bidir
//! cannot carry is refused in one line.
mod common;
use common::{bytepath, run_json, u};

#[test]
fn each_direction_receives_every_byte_it_was_sent_over_tcp_and_unix() {
    for transport in ["tcp", "unix"] {
        let (r, code) = run_json(&[
            "--bidir",
            "--transport",
            transport,
            "-m",
            "gather",
            "-s",
            "4K",
            "--threads",
            "2",
            "--verify",
        ]);
        assert_eq!(code, 0, "{transport}: {}", r["errors"]);
        let b = &r["bidir"];
        assert!(
            u(&b["forward_sent_bytes"]) > 0 && u(&b["reverse_sent_bytes"]) > 0,
            "{b}"
        );
        assert_eq!(
            b["forward_sent_bytes"], b["forward_received_bytes"],
            "{transport}"
        );
        assert_eq!(
            b["reverse_sent_bytes"], b["reverse_received_bytes"],
            "{transport}"
        );
        assert_eq!(b["all_delivered_each_way"], true);
        // Both directions' bytes were checked, none wrong.
        let both = u(&b["forward_received_bytes"]) + u(&b["reverse_received_bytes"]);
        assert_eq!(u(&r["verify"]["checked_bytes"]), both, "{transport}");
        assert_eq!(u(&r["verify"]["mismatched_bytes"]), 0);
        // Both directions' figures, per side.
        let reverse = b["reverse_sides"].as_array().unwrap();
        assert_eq!(reverse.len(), 2);
        assert!(reverse[1]["throughput_gbps"].as_f64().unwrap() > 0.0, "{b}");
        assert!(r["sides"][1]["throughput_gbps"].as_f64().unwrap() > 0.0);
        let sum = b["forward_gbps"].as_f64().unwrap() + b["reverse_gbps"].as_f64().unwrap();
        assert!((b["sum_gbps"].as_f64().unwrap() - sum).abs() < 1e-9);
        assert_eq!(b["forward_gbps"], r["sides"][1]["throughput_gbps"]);
    }
}

#[test]
fn a_one_way_run_has_no_bidir_block() {
    let (r, code) = run_json(&["-m", "send", "-s", "4K"]);
    assert_eq!(code, 0);
    assert!(r.get("bidir").is_none(), "{}", r["bidir"]);
}

#[test]
fn what_bidir_cannot_carry_is_refused_in_one_line_with_exit_2() {
    let cases: [(&[&str], &str); 4] = [
        (&["-p", "rr", "-m", "send"], "--bidir with --pattern rr: "),
        (
            &["--transport", "pipe", "-m", "send"],
            "--bidir with --transport pipe: ",
        ),
        (&["-m", "zerocopy"], "--mechanism zerocopy with --bidir: "),
        (&["-m", "send", "--processes"], "--processes with --bidir: "),
    ];
    for (args, start) in cases {
        let out = bytepath()
            .args(["run", "--bidir"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("bytepath: {start}")), "{err}");
    }
}
