//! Every mechanism x pattern over loopback with --verify: bytes received equal bytes sent,
//! every byte checked, zero-copy completions accounted for; the stream-socket paths over unix
//! too. A mechanism this kernel lacks is skipped with its probe's reason.
mod common;
use bytepath::mechanism::{self, MechanismKind};
use common::{assert_delivered, run_json, u};
use serde_json::Value;

/// Every mechanism this kernel runs; the others are skipped with the probe's reason (as a
/// sweep skips their points).
fn mechanisms() -> Vec<MechanismKind> {
    MechanismKind::ALL
        .iter()
        .copied()
        .filter(|&m| match mechanism::supported(m) {
            Ok(()) => true,
            Err(reason) => {
                common::skip_part(m.name(), reason);
                false
            }
        })
        .collect()
}

fn assert_zerocopy_accounted(r: &Value, what: &str) {
    let z = &r["zerocopy"];
    assert!(u(&z["send_calls"]) > 0, "{what}: no zero-copy send");
    assert_eq!(
        z["completions"], z["send_calls"],
        "{what}: every send completes exactly once"
    );
    assert_eq!(z["outstanding_at_end"], 0, "{what}");
    assert_eq!(z["bad_ranges"], 0, "{what}");
    let pct = z["copied_anyway_percent"]
        .as_f64()
        .expect("copied share reported");
    assert!((0.0..=100.0).contains(&pct), "{what}: {pct}");
    assert!(
        z["summary"].as_str().unwrap().starts_with("copied anyway:"),
        "{what}"
    );
    if pct >= 99.95 {
        let summary = z["summary"].as_str().unwrap();
        assert!(
            summary.contains("no send avoided its copy"),
            "{what}: {summary}"
        );
    }
}

#[test]
fn every_mechanism_delivers_every_byte_in_stream_and_rr() {
    // The datagram-only sender (sendmmsg) is checked over udp in udp_mechanisms.rs.
    let on_tcp = |&m: &MechanismKind| {
        bytepath::config::check_transport(bytepath::transport::Transport::Tcp, m).is_ok()
    };
    for kind in mechanisms().into_iter().filter(on_tcp) {
        let mechanism = kind.name();
        for pattern in ["stream", "rr"] {
            let what = format!("{mechanism}/{pattern}");
            let (r, code) = run_json(&[
                "-m", mechanism, "-p", pattern, "-s", "24K", "-t", "2", "--verify",
            ]);
            assert_eq!(code, 0, "{what}");
            assert_delivered(&r, &what);
            assert_eq!(r["config"]["mechanism"], mechanism);
            // uring-zc always sets TCP_NODELAY (its buffers come back on ACK); others only for rr.
            let nodelay = kind == MechanismKind::URING_ZC || pattern == "rr";
            assert_eq!(r["config"]["tcp_nodelay"], nodelay, "{what}");
            if [MechanismKind::ZEROCOPY, MechanismKind::URING_ZC].contains(&kind) {
                assert_zerocopy_accounted(&r, &what);
            } else {
                assert!(r["zerocopy"].is_null(), "{what}");
            }
        }
    }
}

#[test]
fn the_stream_socket_paths_deliver_every_byte_over_unix_too() {
    let over_unix = [
        MechanismKind::URING,
        MechanismKind::URING_GATHER,
        MechanismKind::SPLICE,
        MechanismKind::SENDFILE,
    ];
    for kind in mechanisms().into_iter().filter(|k| over_unix.contains(k)) {
        for pattern in ["stream", "rr"] {
            let what = format!("{}/unix/{pattern}", kind.name());
            let (r, code) = run_json(&[
                "-m",
                kind.name(),
                "--transport",
                "unix",
                "-p",
                pattern,
                "-s",
                "24K",
                "-t",
                "2",
                "--verify",
            ]);
            assert_eq!(code, 0, "{what}: {}", r["errors"]);
            assert_delivered(&r, &what);
            assert_eq!(r["config"]["transport"], "unix", "{what}");
        }
    }
}

#[test]
fn odd_sizes_and_chunked_receives_keep_message_boundaries() {
    // 8-byte messages (1-byte fields), and a receive size that cuts messages mid-way.
    for (size, recv) in [("8", None), ("1000", Some("333")), ("64K", Some("128K"))] {
        let mut args = vec!["-m", "gather", "-s", size, "--verify"];
        if let Some(recv) = recv {
            args.extend(["--recv-size", recv]);
        }
        let (r, code) = run_json(&args);
        assert_eq!(code, 0, "size {size}");
        assert_delivered(&r, size);
        let expected = recv.map_or(u(&r["config"]["message_size_bytes"]), |_| {
            bytepath::config::parse_bytes(recv.unwrap()).unwrap()
        });
        assert_eq!(u(&r["config"]["recv_size_bytes"]), expected);
    }
}

#[test]
fn pin_same_puts_both_sides_of_a_flow_on_one_cpu() {
    let (r, code) = run_json(&["-m", "send", "-p", "rr", "-s", "64", "--pin", "same"]);
    assert_eq!(code, 0, "{}", r["errors"]);
    let p = &r["config"]["placement"][0];
    assert!(p["sender_cpu"].is_u64());
    assert_eq!(p["sender_cpu"], p["receiver_cpu"]);
}

#[test]
fn zerocopy_survives_enobufs_without_losing_or_double_counting() {
    use std::process::Command;
    if !common::is_root() || !common::has_command("ip") {
        common::skip("needs root and ip(8) to make a namespace with a tiny optmem_max");
        return;
    }
    let ns = format!("bytepath-test-enobufs-{}", std::process::id());
    let ip = |args: &[&str]| {
        Command::new("ip")
            .args(args)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    assert!(ip(&["netns", "add", &ns]), "ip netns add");
    let ok = ip(&["-n", &ns, "link", "set", "lo", "up"])
        && ip(&[
            "netns",
            "exec",
            &ns,
            "sysctl",
            "-q",
            "-w",
            "net.core.optmem_max=1024",
        ]);
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns,
            env!("CARGO_BIN_EXE_bytepath"),
            "run",
            "-m",
            "zerocopy",
        ])
        .args([
            "-s", "4K", "-d", "500ms", "--warmup", "100ms", "--verify", "--json",
        ])
        .output();
    ip(&["netns", "del", &ns]);
    assert!(ok, "namespace setup");
    let out = out.expect("bytepath ran in the namespace");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_delivered(&r, "enobufs");
    assert_zerocopy_accounted(&r, "enobufs");
    assert!(
        u(&r["zerocopy"]["enobufs_retries"]) > 0,
        "optmem_max=1024 forces ENOBUFS"
    );
}
