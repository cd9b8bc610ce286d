//! `run --remote` with TCP_INFO and `--rcvbuf` / `--sndbuf`: the run request carries the
//! buffers, the server sets them on its data sockets and samples its own side per slice, and
//! the record holds both hosts' sides; with `--tcp-info off` neither is sampled.
mod common;
use common::{bytepath, u, Server};
use serde_json::Value;
use std::time::Duration;

fn remote(server: &Server, token: &std::path::Path, args: &[&str]) -> Value {
    let out = bytepath()
        .args(["run", "--json", "--duration", "300ms", "--warmup", "100ms"])
        .args(["--remote", &server.address()])
        .args(["--token-file", token.to_str().unwrap()])
        .args(["-m", "send", "-p", "stream", "-s", "64K"])
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    common::assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn series(side: &Value, field: &str) -> Vec<u64> {
    let v = side["series"][field].as_array();
    v.unwrap_or_else(|| panic!("{field}: {side}"))
        .iter()
        .map(u)
        .collect()
}

#[test]
fn the_record_holds_the_servers_sampled_side_with_the_buffers_it_was_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    common::write_token(&token, "0123456789abcdef0123456789abcdef");
    let server = Server::start("2s", &["--token-file", token.to_str().unwrap()]);
    let r = remote(&server, &token, &["--rcvbuf", "16K", "--sndbuf", "64K"]);
    assert_eq!(u(&r["config"]["socket_buffers"]["rcvbuf"]), 16 << 10);
    assert_eq!(u(&r["config"]["socket_buffers"]["sndbuf"]), 64 << 10);
    assert!(r["tcp_info_unavailable_reason"].is_null(), "{r}");
    let block = &r["tcp_info"];
    assert!(block["server_unavailable_reason"].is_null(), "{block}");
    let flows = block["flows"].as_array().expect("a tcp_info block");
    let sides: Vec<(&str, &str)> = flows
        .iter()
        .map(|f| (f["side"].as_str().unwrap(), f["host"].as_str().unwrap()))
        .collect();
    // Without --reverse the server sends and this host receives and measures.
    assert_eq!(sides, [("sender", "server"), ("receiver", "driver")]);
    for side in flows {
        // The kernel doubles what is asked, on the server's sockets as on this host's.
        assert_eq!(u(&side["rcvbuf_bytes"]), 32 << 10, "{side}");
        assert_eq!(u(&side["sndbuf_bytes"]), 128 << 10, "{side}");
        let at = side["series"]["at_ms"].as_array().unwrap();
        // 300 ms in 100 ms slices: the start, the boundaries, the stop; at most one a slice.
        assert!((3..=8).contains(&at.len()), "{side}");
        for field in ["total_retrans", "bytes_acked", "busy_time_us"] {
            let v = series(side, field);
            assert_eq!(v.len(), at.len(), "{field}");
            assert!(v.windows(2).all(|w| w[0] <= w[1]), "{field} fell: {v:?}");
        }
    }
    // The server's sender moved the bytes this host received.
    let acked = series(&flows[0], "bytes_acked");
    assert!(acked.last() > acked.first(), "{acked:?}");
    assert!(u(&flows[0]["measured"]["busy_us"]) > 0, "{}", flows[0]);
}

#[test]
fn tcp_info_off_samples_neither_host() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    common::write_token(&token, "0123456789abcdef0123456789abcdef");
    let server = Server::start("2s", &["--token-file", token.to_str().unwrap()]);
    let r = remote(&server, &token, &["--tcp-info", "off"]);
    assert!(r.get("tcp_info").is_none(), "{r}");
    let why = r["tcp_info_unavailable_reason"].as_str().unwrap();
    assert!(why.contains("--tcp-info off"), "{why}");
}
