//! The page-referencing senders end to end (stream and rr delivery over tcp and unix is in
//! run_mechanisms.rs): `splice` (vmsplice + splice) and `sendfile` (from a memfd) deliver
//! messages above pipe-max-size whole; other transports are refused in one line.
mod common;
use common::{assert_delivered, bytepath, run_json};

const MECHANISMS: [&str; 2] = ["splice", "sendfile"];

#[test]
fn messages_above_pipe_max_size_arrive_whole() {
    // 2 MiB is twice the default pipe-max-size: splice sends each message in pieces.
    for mechanism in MECHANISMS {
        for transport in ["tcp", "unix"] {
            let what = format!("{mechanism}/{transport}/2M");
            let (r, code) = run_json(&[
                "-m",
                mechanism,
                "--transport",
                transport,
                "-s",
                "2M",
                "--verify",
            ]);
            assert_eq!(code, 0, "{what}: {}", r["errors"]);
            assert_delivered(&r, &what);
        }
    }
}

#[test]
fn splice_and_sendfile_on_a_pipe_transport_are_refused_in_one_line() {
    for mechanism in MECHANISMS {
        let out = bytepath()
            .args(["run", "-m", mechanism, "--transport", "pipe"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{mechanism}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{mechanism}: {err}");
        assert!(
            err.contains(&format!("--mechanism {mechanism} with --transport pipe"))
                && err.contains("allowed only with tcp and unix"),
            "{mechanism}: {err}"
        );
        assert!(out.stdout.is_empty(), "{mechanism}: nothing measured");
    }
}
