//! `bytepath mesh` across network namespaces on a bridge, each running `bytepath server
//! --allow-peers` for the bridge's subnet: a full mesh that finds the host whose link has MTU
//! 1500 among hosts at 9000; a server killed mid-mesh failing only its own pairs and `--resume`
//! measuring only those; `--launch ssh` through a wrapper that runs the command inside a
//! host's namespace (and through a real sshd where one is installed). Needs root and ip; each
//! test says so and skips without them. Namespaces carry the pid and are always removed.
mod common;
mod mesh_common;

use mesh_common::{addr, assert_no_host_overlaps, cannot_create, records, Fleet};
use serde_json::Value;
use std::collections::HashSet;
use std::io::BufRead;
use std::process::Stdio;

/// One mesh at a time in this binary: the MTU test's figures are what it judges, and two
/// meshes at once on two CPUs would halve each other's.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

macro_rules! needs_netns {
    () => {
        if let Some(why) = cannot_create() {
            common::skip(format!("the mesh tests need root and ip: {why}"));
            return;
        }
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    };
}

fn pair(r: &Value) -> (String, String) {
    (
        r["src"].as_str().unwrap().to_string(),
        r["dst"].as_str().unwrap().to_string(),
    )
}

fn stderr_of(out: &std::process::Output) -> String {
    format!(
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_full_mesh_finds_the_mtu_1500_host_and_flags_no_pair_without_it() {
    needs_netns!();
    // Host 3's link has MTU 1500; the others 9000 (KERNEL-NOTES: 4 KiB over veth at 1500
    // runs at a fraction of a jumbo MTU's throughput).
    let mut fleet = Fleet::new("mtu", &[9000, 9000, 9000, 1500]);
    fleet.start_all();
    let out_dir = tempfile::tempdir().unwrap();
    let out = fleet
        .mesh()
        .args(["--hosts", &fleet.host_list()])
        .args([
            "--mechanisms",
            "send",
            "--sizes",
            "4K",
            "--patterns",
            "stream",
        ])
        // Ten short visits. On these shared two-CPU machines, with other test suites running,
        // one visit of a pair can read half or twice another (regimes of seconds), and the
        // MTU's handicap shrinks from about 0.5 to 0.75 of the others' figure as the CPUs
        // saturate: the host-level test, on 60 visits a side, resolves that every time.
        .args(["--duration", "250ms", "--warmup", "100ms", "--visits", "10"])
        .arg("--out")
        .arg(out_dir.path().join("mesh"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let dir = out_dir.path().join("mesh");
    let records = records(&dir);
    assert_eq!(records.len(), 12 * 10, "12 ordered pairs, 10 visits");
    let pairs: HashSet<(String, String)> = records.iter().map(pair).collect();
    assert_eq!(pairs.len(), 12);
    for r in &records {
        assert_eq!(r["status"], "completed", "{}", r["errors"]);
        assert_eq!(r["command"], "mesh");
        assert!(r["sides"][1]["payload_bytes"].as_u64().unwrap() > 0);
    }
    assert_no_host_overlaps(&records);
    assert_report_names_the_slow_host(&dir, &records, &pairs, &format!("{}:5301", addr(3)));
}

/// What the report concludes about `slow`, and the figures behind it.
fn assert_report_names_the_slow_host(
    dir: &std::path::Path,
    records: &[Value],
    pairs: &HashSet<(String, String)>,
    slow: &str,
) {
    // What the report concludes. The host-level test (host 4's six pairs' cell means against the
    // six pairs without it) names host 4, and only it, and lists its six pairs as the pairs
    // through a slow host. Pair by pair, the intervals of ten visits are too wide on this
    // loaded machine to flag every one of them alone (sending from MTU 1500 costs less than
    // receiving at it, and the hosts themselves differ), so those flags vary from run to run;
    // but none ever falls outside host 4's pairs, and none blames the other host.
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect()
    };
    let slow_hosts: Vec<String> = report
        .lines()
        .filter(|l| l.starts_with("| 10.77.0.") && l.trim_end().ends_with("| slow |"))
        .map(|l| cells(l)[0].clone())
        .collect();
    assert_records_put_the_slow_host_below(records, slow);
    if slow_hosts.is_empty() {
        if let Some(moved) = machine_moved(&report) {
            // Undecided is the right answer when the machine itself moved severalfold.
            return common::skip_part("the slow-host verdict", moved);
        }
    }
    assert_eq!(slow_hosts, [slow], "{report}");
    let sentence = report
        .lines()
        .find(|l| l.starts_with(&format!("Host {slow} is slow: the pairs through it (")))
        .unwrap_or_else(|| panic!("{report}"));
    let listed: HashSet<String> = sentence
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(list, _)| list.split(", ").map(String::from).collect())
        .unwrap();
    let expected: HashSet<String> = pairs
        .iter()
        .filter(|(s, d)| *s == slow || *d == slow)
        .map(|(s, d)| format!("{s} → {d}"))
        .collect();
    assert_eq!(listed, expected, "{sentence}");
    let flagged: Vec<Vec<String>> = report
        .lines()
        .filter(|l| l.starts_with("| 10.77.0.") && l.contains(" → "))
        .map(cells)
        .collect();
    for row in &flagged {
        let (src, dst) = row[0].split_once(" → ").unwrap();
        assert!(
            src == slow || dst == slow,
            "a pair without host 4 flagged: {row:?}"
        );
        let blamed_other = if dst == slow {
            "the source host"
        } else {
            "the destination host"
        };
        assert!(
            !row[3].starts_with(blamed_other),
            "blames the wrong host: {row:?}"
        );
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert_eq!(
        html.matches("class=\"cell flagged\"").count(),
        flagged.len()
    );
    // The pairs through the slow host not flagged on their own are outlined in the heatmap.
    assert_eq!(
        html.matches("stroke-dasharray=\"5 3\"").count(),
        6 - flagged.len()
    );
}

/// The canary line of a report whose getpid cost moved more than twofold during the study: a
/// machine shared so unevenly that host-level intervals of ten visits cannot decide.
fn machine_moved(report: &str) -> Option<String> {
    let line = report
        .lines()
        .find(|l| l.contains("largest over smallest cost: getpid +"))?;
    let after = line.split("getpid +").nth(1)?;
    let percent: f64 = after.split(' ').next()?.parse().ok()?;
    (percent > 100.0).then(|| format!("the machine moved during the mesh: {line}"))
}

/// The records behind the verdict, read here rather than through the report: the visits of
/// the slow host's pairs are below the others' as a whole (each pair alone is too noisy).
fn assert_records_put_the_slow_host_below(records: &[Value], slow: &str) {
    let geometric_mean = |through: bool| {
        let logs: Vec<f64> = records
            .iter()
            .filter(|r| {
                let (s, d) = pair(r);
                (s == slow || d == slow) == through
            })
            .map(|r| r["sides"][1]["throughput_gbps"].as_f64().unwrap().ln())
            .collect();
        (logs.iter().sum::<f64>() / logs.len() as f64).exp()
    };
    let (slow_pairs, other_pairs) = (geometric_mean(true), geometric_mean(false));
    assert!(
        slow_pairs < other_pairs,
        "{slow_pairs} vs {other_pairs} Gbit/s"
    );
}

#[test]
fn a_server_killed_mid_mesh_fails_only_its_pairs_and_resume_measures_just_those() {
    needs_netns!();
    let mut fleet = Fleet::new("kill", &[9000, 9000, 9000, 9000]);
    fleet.start_all();
    let out_dir = tempfile::tempdir().unwrap();
    let dir = out_dir.path().join("mesh");
    let host_list = fleet.host_list();
    let args = |c: &mut std::process::Command| {
        c.args(["--hosts", &host_list])
            .args(["--sizes", "4K", "--patterns", "stream", "--visits", "1"])
            .args(["--duration", "200ms", "--warmup", "50ms", "--out"])
            .arg(&dir);
    };
    let mut command = fleet.mesh();
    args(&mut command);
    let mut driver = command.stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = std::io::BufReader::new(driver.stdout.take().unwrap()).lines();
    let mut progress = 0;
    for line in lines.by_ref() {
        if line.unwrap().starts_with("[visit") {
            progress += 1;
            if progress == 3 {
                break;
            }
        }
    }
    let killed = format!("{}:5301", addr(2));
    fleet.kill_server(2);
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = driver.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{rest:?}");
    let first = records(&dir);
    assert_eq!(first.len(), 12);
    let failed: Vec<&Value> = first
        .iter()
        .filter(|r| r["status"] != "completed")
        .collect();
    assert!(!failed.is_empty(), "{rest:?}");
    for r in &failed {
        let (s, d) = pair(r);
        assert!(
            s == killed || d == killed,
            "{s} -> {d} failed without the killed host: {}",
            r["errors"]
        );
        let why = r["errors"][0].as_str().unwrap();
        assert!(why.contains(&killed), "the reason names the host: {why}");
    }
    // Every pair without the killed host completed: 6 of the 12.
    let others = first.iter().filter(|r| {
        let (s, d) = pair(r);
        s != killed && d != killed
    });
    assert!(others.clone().all(|r| r["status"] == "completed"));
    assert_eq!(others.count(), 6);
    // Once it is back, --resume measures exactly the failed runs.
    let kept: Vec<String> = std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"status\":\"completed\""))
        .map(String::from)
        .collect();
    fleet.start_server(2);
    let mut command = fleet.mesh();
    args(&mut command);
    let out = command.arg("--resume").output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let measured = stdout.lines().filter(|l| l.starts_with("[visit")).count();
    assert_eq!(measured, failed.len(), "{stdout}");
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    assert!(
        kept.iter().all(|l| text.lines().any(|t| t == l)),
        "kept byte for byte"
    );
    let after = records(&dir);
    assert_eq!(after.len(), 12);
    assert!(after.iter().all(|r| r["status"] == "completed"));
}

/// A stand-in for ssh: `wrapper HOST COMMAND` runs COMMAND in the namespace of the host whose
/// address is HOST, as `ssh HOST COMMAND` would run it on that host.
fn ssh_wrapper(fleet: &Fleet, dir: &std::path::Path) -> std::path::PathBuf {
    let mut map = String::new();
    for (i, ns) in fleet.hosts.iter().enumerate() {
        map += &format!("  {}) ns={ns} ;;\n", addr(i));
    }
    let script = format!(
        "#!/bin/sh\nhost=\"$1\"; shift\ncase \"$host\" in\n{map}  *) echo \"no such host $host\" >&2; exit 255 ;;\nesac\nexec ip netns exec \"$ns\" sh -c \"$*\"\n"
    );
    let path = dir.join("fake-ssh");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn launch_ssh_starts_a_server_on_every_host_waits_for_it_and_stops_it() {
    needs_netns!();
    let fleet = Fleet::new("ssh", &[9000, 9000, 9000]);
    let temp = tempfile::tempdir().unwrap();
    let wrapper = ssh_wrapper(&fleet, temp.path());
    let dir = temp.path().join("mesh");
    let hosts = format!("{},{},{}", addr(0), addr(1), addr(2));
    // No --token-file: the mesh makes a token for the servers it starts.
    let out = fleet
        .in_switch(env!("CARGO_BIN_EXE_bytepath"))
        .args([
            "mesh",
            "--hosts",
            &hosts,
            "--launch",
            "ssh",
            "--ssh-command",
        ])
        .arg(&wrapper)
        .args(["--launch-binary", env!("CARGO_BIN_EXE_bytepath")])
        .args(["--sizes", "4K", "--visits", "1", "--duration", "200ms"])
        .args(["--warmup", "50ms", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let records = records(&dir);
    assert_eq!(records.len(), 6 * 2, "6 ordered pairs, stream and rr");
    assert!(records.iter().all(|r| r["status"] == "completed"));
    for i in 0..3 {
        let log =
            std::fs::read_to_string(dir.join(format!("servers/{}_5301.log", addr(i)))).unwrap();
        assert!(
            log.contains(&format!("listening on {}:5301", addr(i)))
                && log.contains("token required"),
            "{log}"
        );
        assert_eq!(
            log.lines().filter(|l| l.contains(": peer run ")).count(),
            4,
            "two pairs × two points as source: {log}"
        );
        assert!(log.contains("standard input closed; exiting"), "{log}");
        assert!(
            fleet.pids_in(i).is_empty(),
            "host {i} still runs {:?}",
            fleet.pids_in(i)
        );
    }
}

/// An OpenSSH server in each host's namespace, on its address, accepting one key for root.
fn start_sshd(fleet: &Fleet, dir: &std::path::Path) -> Vec<mesh_common::Spawned> {
    let keygen = |name: &str| {
        let out = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(dir.join(name))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    keygen("host_key");
    keygen("id");
    std::fs::copy(dir.join("id.pub"), dir.join("authorized_keys")).unwrap();
    // sshd's privilege separation directory (Debian's package makes it at boot).
    std::fs::create_dir_all("/run/sshd").unwrap();
    (0..fleet.hosts.len())
        .map(|i| {
            let config = dir.join(format!("sshd_config_{i}"));
            std::fs::write(
                &config,
                format!(
                    "ListenAddress {}\nHostKey {}\nAuthorizedKeysFile {}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\n",
                    addr(i),
                    dir.join("host_key").display(),
                    dir.join("authorized_keys").display()
                ),
            )
            .unwrap();
            let child = std::process::Command::new("ip")
                .args(["netns", "exec", &fleet.hosts[i], "/usr/sbin/sshd", "-D", "-e", "-f"])
                .arg(&config)
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let spawned = mesh_common::Spawned(child);
            let ready = (0..100).any(|_| {
                let probe = format!("exec 3<>/dev/tcp/{}/22", addr(i));
                let ok = fleet.in_switch("bash").args(["-c", &probe]).output().unwrap();
                ok.status.success() || {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    false
                }
            });
            assert!(ready, "sshd on host {i} never listened");
            spawned
        })
        .collect()
}

#[test]
fn launch_ssh_through_a_real_sshd() {
    needs_netns!();
    let missing = ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen"]
        .into_iter()
        .find(|p| !std::path::Path::new(p).exists());
    if let Some(missing) = missing {
        common::skip(format!(
            "{missing} is not installed (openssh-server, openssh-client)"
        ));
        return;
    }
    let fleet = Fleet::new("sshd", &[9000, 9000]);
    let temp = tempfile::tempdir().unwrap();
    let _sshd = start_sshd(&fleet, temp.path());
    let ssh = format!(
        "ssh -i {} -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
        temp.path().join("id").display()
    );
    let dir = temp.path().join("mesh");
    let out = fleet
        .in_switch(env!("CARGO_BIN_EXE_bytepath"))
        .args(["mesh", "--hosts", &format!("{},{}", addr(0), addr(1))])
        .args(["--launch", "ssh", "--ssh-command", &ssh])
        .args(["--launch-binary", env!("CARGO_BIN_EXE_bytepath")])
        .args(["--sizes", "4K", "--patterns", "stream", "--visits", "1"])
        .args(["--duration", "200ms", "--warmup", "50ms", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let records = records(&dir);
    assert_eq!(records.len(), 2);
    assert!(records.iter().all(|r| r["status"] == "completed"));
    for i in 0..2 {
        let log =
            std::fs::read_to_string(dir.join(format!("servers/{}_5301.log", addr(i)))).unwrap();
        assert!(
            log.contains("token required") && log.contains("peer run"),
            "{log}"
        );
    }
    // The servers are gone: only sshd is left in each namespace.
    for i in 0..2 {
        let leftover: Vec<String> = fleet
            .pids_in(i)
            .into_iter()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.starts_with("bytepath"))
            })
            .collect();
        assert!(
            leftover.is_empty(),
            "host {i} still runs bytepath: {leftover:?}"
        );
    }
}
