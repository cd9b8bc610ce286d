//! `bytepath mesh` on loopback servers (no root needed): a mesh with two pairs at once never
//! puts a host in two runs, and says so in its records and CSV; a host that is not there fails
//! only its own pairs, named with the reason; Ctrl-C keeps every finished run and `--resume`
//! measures the rest; every bad input is one line and exit 2. As root, `--hosts-from-dns`
//! takes every address a name resolves to (from a hosts file the test mounts in a private
//! mount namespace).
mod common;
mod mesh_common;

use common::{bytepath, Server};
use mesh_common::{assert_no_host_overlaps, records, token};
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Loopback servers that allow each other as peers (each on a port of its own: every port).
fn servers(n: usize) -> Vec<Server> {
    (0..n)
        .map(|_| {
            Server::start(
                "5s",
                &[
                    "--allow-peers",
                    "127.0.0.0/8",
                    "--peer-ports",
                    "1-65535",
                    "--token-file",
                    token(),
                ],
            )
        })
        .collect()
}

fn hosts(servers: &[Server]) -> String {
    servers
        .iter()
        .map(Server::address)
        .collect::<Vec<_>>()
        .join(",")
}

const SHORT: [&str; 8] = [
    "--duration",
    "200ms",
    "--warmup",
    "50ms",
    "--sizes",
    "4K",
    "--patterns",
    "stream",
];

#[test]
fn two_pairs_at_once_never_share_a_host_and_the_records_say_so() {
    let servers = servers(4);
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("mesh");
    let out = bytepath()
        .args(["mesh", "--token-file", token()])
        .args(["--hosts", &hosts(&servers), "--concurrent", "2"])
        .args(["--visits", "2"])
        .args(SHORT)
        .arg("--out")
        .arg(&out_dir)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("[visit 2/2, round 6/6]"), "{stdout}");
    let records = records(&out_dir);
    assert_eq!(records.len(), 12 * 2);
    let names: Vec<String> = servers.iter().map(Server::address).collect();
    for r in &records {
        assert_eq!(r["status"], "completed", "{}", r["errors"]);
        assert!(names.contains(&r["src"].as_str().unwrap().to_string()));
        assert!(names.contains(&r["dst"].as_str().unwrap().to_string()));
        assert_ne!(r["src"], r["dst"]);
        assert_eq!(r["mesh"]["concurrent"], 2);
        // Four hosts: every round holds two pairs, each measured alongside the other.
        assert_eq!(
            r["mesh"]["alongside"].as_array().unwrap().len(),
            1,
            "{}",
            r["mesh"]
        );
    }
    // A canary on each host's server before each of the 12 rounds (6 per visit), measured
    // there.
    let canaries: Vec<serde_json::Value> = std::fs::read_to_string(out_dir.join("canary.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(canaries.len(), 12 * 4, "{canaries:?}");
    for c in &canaries {
        assert!(
            names.contains(&c["host"].as_str().unwrap().to_string()),
            "{c}"
        );
        assert!(c["canary"]["getpid_ns"].as_f64().unwrap() > 0.0, "{c}");
    }
    let overlapping = assert_no_host_overlaps(&records);
    assert!(
        overlapping > 0,
        "with --concurrent 2 some runs must overlap in time"
    );
    // The CSV carries src and dst in its first two columns.
    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("src,dst,visit,round,concurrent,"));
    let first = lines.next().unwrap();
    assert!(first.starts_with(&format!(
        "{},{},",
        records[0]["src"].as_str().unwrap(),
        records[0]["dst"].as_str().unwrap()
    )));
    // `bytepath report` renders the mesh's own report again: one heatmap, 16 cells.
    std::fs::remove_file(out_dir.join("report.html")).unwrap();
    let again = bytepath().arg("report").arg(&out_dir).output().unwrap();
    common::assert_success(&again);
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    let doc = common::parse_xhtml(&html);
    let cells = doc
        .descendants()
        .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("cell")))
        .count();
    assert_eq!(cells, 16);
    assert!(
        html.contains("data-plot=\"canary\""),
        "the canary plot is drawn"
    );
    assert!(
        html.contains("2 pairs of a round were measured at once"),
        "the report says so"
    );
    // `bytepath export`: one sample per ordered pair, point and side (the visits averaged).
    let text = bytepath().arg("export").arg(&out_dir).output().unwrap();
    common::assert_success(&text);
    let text = String::from_utf8(text.stdout).unwrap();
    let parsed = openmetrics_parser::openmetrics::parse_openmetrics(&text).unwrap();
    let family = &parsed.families["bytepath_throughput_gbit_per_second"];
    let mut seen = std::collections::BTreeSet::new();
    for sample in family.iter_samples() {
        let labels = sample.get_labelset().unwrap();
        let get = |k: &str| labels.get_label_value(k).unwrap().to_string();
        assert_ne!(get("src"), get("dst"));
        assert!(seen.insert((get("src"), get("dst"), get("size"), get("side"))));
    }
    assert_eq!(
        seen.len(),
        12 * 2,
        "12 ordered pairs of 4 hosts, 2 sides: {text}"
    );
}

#[test]
fn a_host_that_is_not_there_fails_only_its_pairs_with_the_reason() {
    let servers = servers(2);
    // A port nobody listens on: bound, then released.
    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone_host = gone.local_addr().unwrap().to_string();
    drop(gone);
    let dir = tempfile::tempdir().unwrap();
    let list = format!("{},{gone_host}", hosts(&servers));
    let out = bytepath()
        .args(["mesh", "--token-file", token()])
        .args(["--hosts", &list, "--visits", "1"])
        .args(SHORT)
        .arg("--out")
        .arg(dir.path().join("m"))
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("host {gone_host} is down")) && err.contains("onnection refused"),
        "{err}"
    );
    let records = records(&dir.path().join("m"));
    assert_eq!(records.len(), 6);
    for r in &records {
        let involved = r["src"] == gone_host.as_str() || r["dst"] == gone_host.as_str();
        if involved {
            assert_eq!(r["status"], "failed");
            let why = r["errors"][0].as_str().unwrap();
            assert!(why.contains(&format!("host {gone_host} is down")), "{why}");
        } else {
            assert_eq!(r["status"], "completed", "{}", r["errors"]);
        }
    }
}

#[test]
fn ctrl_c_keeps_every_finished_run_and_resume_measures_the_rest() {
    let servers = servers(3);
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("mesh");
    let mesh = |resume: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_bytepath"));
        c.args(["mesh", "--token-file", token()])
            .args(["--hosts", &hosts(&servers), "--visits", "2"])
            .args(SHORT)
            .arg("--out")
            .arg(&out_dir);
        if resume {
            c.arg("--resume");
        }
        c
    };
    let mut driver = mesh(false).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = std::io::BufReader::new(driver.stdout.take().unwrap()).lines();
    let mut seen = 0;
    for line in lines.by_ref() {
        if line.unwrap().starts_with("[visit") {
            seen += 1;
            if seen == 2 {
                break;
            }
        }
    }
    let sent = Command::new("kill")
        .args(["-INT", &driver.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert_eq!(driver.wait().unwrap().code(), Some(130), "{rest:?}");
    let kept = records(&out_dir);
    assert!(kept.len() >= 2 && kept.len() < 12, "{} records", kept.len());
    let completed = kept.iter().filter(|r| r["status"] == "completed").count();
    assert!(completed >= 2);
    assert!(kept
        .iter()
        .all(|r| matches!(r["status"].as_str(), Some("completed" | "interrupted"))));
    let out = mesh(true).output().unwrap();
    common::assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let measured = stdout.lines().filter(|l| l.starts_with("[visit")).count();
    assert_eq!(measured, 12 - completed, "{stdout}");
    let all = records(&out_dir);
    assert_eq!(all.len(), 12);
    assert!(all.iter().all(|r| r["status"] == "completed"));
}

#[test]
fn bad_input_is_one_line_naming_the_value_and_exit_2() {
    let cases: [(&[&str], &str); 7] = [
        (
            &["mesh", "--hosts", "a"],
            "--hosts: 1 host; a mesh needs at least two",
        ),
        (
            &["mesh", "--hosts", "a,b", "--visits", "zero"],
            "--visits \"zero\": allowed: a whole number from 1 to 100",
        ),
        (
            &["mesh", "--hosts", "a,b", "--launch", "telnet"],
            "--launch \"telnet\": allowed: ssh",
        ),
        (
            &["mesh", "--hosts", "a,b", "--pairs", "star:z"],
            "z:5301 is not one of the hosts",
        ),
        (
            &["mesh", "--hosts", "a,b", "--mechanisms", "carrier-pigeon"],
            "--mechanisms",
        ),
        (
            &["mesh", "--hosts-from-dns", "no-such-host.invalid"],
            "--hosts-from-dns \"no-such-host.invalid\": does not resolve",
        ),
        (
            &["server", "--allow-peers", "10.0.0.0/40"],
            "--allow-peers: \"10.0.0.0/40\": the prefix length must be 0 to 32",
        ),
    ];
    for (args, expected) in cases {
        let out = bytepath()
            .args(args)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    let none = bytepath().arg("mesh").output().unwrap();
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("--hosts"));
}

#[test]
fn hosts_from_dns_takes_every_address_the_name_resolves_to() {
    if !common::is_root() || !common::has_command("unshare") {
        common::skip("needs root and unshare to mount a hosts file of its own");
        return;
    }
    // Three servers on three loopback addresses, one port: what a headless Service gives.
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port().to_string();
    drop(probe);
    let addrs = ["127.0.0.1", "127.0.0.2", "127.0.0.3"];
    let _servers: Vec<mesh_common::Spawned> = addrs
        .iter()
        .map(|a| {
            mesh_common::server_at(
                a,
                &port,
                &["--allow-peers", "127.0.0.0/8", "--token-file", token()],
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let hosts_file = dir.path().join("hosts");
    let lines: String = addrs
        .iter()
        .map(|a| format!("{a} bytepath-mesh-test\n"))
        .collect();
    std::fs::write(&hosts_file, lines).unwrap();
    let out_dir = dir.path().join("mesh");
    let script = format!(
        "mount --bind {} /etc/hosts && exec {} mesh --token-file {} --hosts-from-dns bytepath-mesh-test:{port} --visits 1 --duration 200ms --warmup 50ms --sizes 4K --patterns stream --out {}",
        hosts_file.display(),
        env!("CARGO_BIN_EXE_bytepath"),
        token(),
        out_dir.display()
    );
    let out = Command::new("unshare")
        .args(["--mount", "sh", "-c", &script])
        .output()
        .unwrap();
    common::assert_success(&out);
    let marker: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    let expected: Vec<String> = addrs.iter().map(|a| format!("{a}:{port}")).collect();
    assert_eq!(marker["spec"]["hosts"], serde_json::json!(expected));
    let records = records(&out_dir);
    assert_eq!(records.len(), 6);
    assert!(records.iter().all(|r| r["status"] == "completed"));
}
