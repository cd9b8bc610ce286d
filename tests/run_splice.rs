//! The page-referencing senders end to end (stream and rr delivery over tcp and unix is in
//! run_mechanisms.rs): `splice` (vmsplice + splice) and `sendfile` (from a memfd) deliver
//! messages larger than one pipe piece whole; other transports are refused in one line.
mod common;
use common::{assert_delivered, bytepath, run_json};

const MECHANISMS: [&str; 2] = ["splice", "sendfile"];

#[test]
fn messages_larger_than_a_piece_arrive_whole() {
    // 2 MiB is 32 pieces of splice's 64 KiB pipe, and twice the default pipe-max-size.
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

#[test]
fn the_record_says_how_pages_were_handed_over() {
    // splice with --verify: whole pages, so every message is gifted, and each new message is
    // written into fresh pages; vmsplice + splice is at least two calls a message.
    let (r, code) = run_json(&["-m", "splice", "-s", "64K", "--verify"]);
    assert_eq!(code, 0, "{}", r["errors"]);
    let p = &r["page_refs"];
    let messages = p["messages"].as_u64().unwrap();
    assert!(messages > 0, "{p}");
    assert_eq!(p["gifted_messages"], messages, "{p}");
    assert_eq!(p["fresh_page_messages"], messages, "{p}");
    assert!(p["calls_per_message"].as_f64().unwrap() >= 2.0, "{p}");
    // sendfile without --verify: the memfd is written once, one call a message at least.
    let (r, code) = run_json(&["-m", "sendfile", "-s", "24K"]);
    assert_eq!(code, 0, "{}", r["errors"]);
    let p = &r["page_refs"];
    assert_eq!(p["fresh_page_messages"], 0, "{p}");
    assert_eq!(p["gifted_messages"], 0, "{p}");
    assert!(p["calls_per_message"].as_f64().unwrap() >= 1.0, "{p}");
    let (r, _) = run_json(&["-m", "send", "-s", "24K"]);
    assert!(
        r["page_refs"].is_null(),
        "only the page-referencing senders have the block"
    );
}
