//! A fleet for the mesh tests: a "switch" network namespace holding a bridge (the driver runs
//! there, on the bridge's address), and one namespace per host joined to the bridge by a veth
//! pair with an MTU of its own. Names carry the test process's pid and a tag per test, so
//! parallel runs never collide; everything is removed when the fleet drops. Needs root and ip.
#![allow(dead_code)]
use std::process::{Child, Command, Stdio};

/// The fleet's subnet; private to its namespaces, so every fleet may use the same one.
pub const SUBNET: &str = "10.77.0.0/24";
pub const PORT: u16 = 5301;

/// Why namespaces cannot be made here, if they cannot.
pub fn cannot_create() -> Option<&'static str> {
    let root = std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false);
    if !root {
        Some("not root")
    } else if Command::new("ip").arg("-V").output().is_err() {
        Some("the ip command (iproute2) is missing")
    } else {
        None
    }
}

pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip runs");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub struct Fleet {
    pub switch: String,
    pub hosts: Vec<String>,
    pub servers: Vec<Option<Child>>,
    pub token: tempfile::NamedTempFile,
}

impl Fleet {
    /// One namespace per entry of `mtus`, each joined to the bridge with that MTU.
    pub fn new(tag: &str, mtus: &[u32]) -> Fleet {
        let prefix = format!("bpm{}{tag}", std::process::id());
        let mut fleet = Fleet {
            switch: format!("{prefix}-sw"),
            hosts: Vec::new(),
            servers: Vec::new(),
            token: tempfile::NamedTempFile::new().unwrap(),
        };
        std::fs::write(fleet.token.path(), "0123456789abcdef0123456789abcdef\n").unwrap();
        ip(&["netns", "add", &fleet.switch]);
        let sw = fleet.switch.clone();
        ip(&["-n", &sw, "link", "add", "br0", "type", "bridge"]);
        ip(&["-n", &sw, "link", "set", "br0", "up"]);
        ip(&["-n", &sw, "addr", "add", "10.77.0.254/24", "dev", "br0"]);
        ip(&["-n", &sw, "link", "set", "lo", "up"]);
        for (i, mtu) in mtus.iter().enumerate() {
            let ns = format!("{prefix}-h{i}");
            ip(&["netns", "add", &ns]);
            fleet.hosts.push(ns.clone());
            fleet.servers.push(None);
            let (port, mtu) = (format!("p{i}"), mtu.to_string());
            ip(&[
                "link", "add", "v0", "netns", &ns, "mtu", &mtu, "type", "veth", "peer", "name",
                &port, "netns", &sw, "mtu", &mtu,
            ]);
            ip(&["-n", &sw, "link", "set", &port, "master", "br0"]);
            ip(&["-n", &sw, "link", "set", &port, "up"]);
            ip(&["-n", &ns, "link", "set", "v0", "up"]);
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{}/24", addr(i)),
                "dev",
                "v0",
            ]);
        }
        fleet
    }

    /// The host list as `mesh --hosts` takes it.
    pub fn host_list(&self) -> String {
        (0..self.hosts.len())
            .map(|i| format!("{}:{PORT}", addr(i)))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Starts host `i`'s server (allowing the fleet's subnet as peers, with the token), and
    /// waits until it listens.
    pub fn start_server(&mut self, i: usize) {
        let mut child = Command::new("ip")
            .args(["netns", "exec", &self.hosts[i]])
            .arg(env!("CARGO_BIN_EXE_bytepath"))
            .args(["server", "--bind", &addr(i), "--port", &PORT.to_string()])
            .args(["--allow-peers", SUBNET, "--timeout", "5s", "--token-file"])
            .arg(self.token.path())
            .stdout(Stdio::piped())
            // Not piped: a long mesh's session lines would fill a pipe nobody reads.
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        wait_listening(&mut child, &format!("host {i}"));
        self.servers[i] = Some(child);
    }

    pub fn start_all(&mut self) {
        (0..self.hosts.len()).for_each(|i| self.start_server(i));
    }

    /// Kills host `i`'s server (SIGKILL: no goodbye to anyone).
    pub fn kill_server(&mut self, i: usize) {
        if let Some(mut child) = self.servers[i].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A command run in the switch namespace (where the driver runs).
    pub fn in_switch(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.switch, program]);
        c
    }

    /// The mesh driver in the switch namespace, with the fleet's token.
    pub fn mesh(&self) -> Command {
        let mut c = self.in_switch(env!("CARGO_BIN_EXE_bytepath"));
        c.args(["mesh", "--token-file"]).arg(self.token.path());
        c
    }

    /// Processes still running in host `i`'s namespace.
    pub fn pids_in(&self, i: usize) -> Vec<String> {
        let out = Command::new("ip")
            .args(["netns", "pids", &self.hosts[i]])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(String::from)
            .collect()
    }
}

/// Host `i`'s address on the bridge.
pub fn addr(i: usize) -> String {
    format!("10.77.0.{}", i + 1)
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for i in 0..self.servers.len() {
            self.kill_server(i);
        }
        for ns in self.hosts.iter().chain([&self.switch]) {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// The records of a results folder.
pub fn records(dir: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Fails if any host was in two runs at once, judged from the records' own start and end
/// times (the driver's clock, taken around each run); returns how many pairs of runs
/// overlapped in time at all (only with --concurrent).
pub fn assert_no_host_overlaps(records: &[serde_json::Value]) -> usize {
    let span = |r: &serde_json::Value| {
        (
            r["mesh"]["started_unix_ms"].as_u64().unwrap(),
            r["mesh"]["ended_unix_ms"].as_u64().unwrap(),
        )
    };
    let mut overlapping = 0;
    for (i, a) in records.iter().enumerate() {
        for b in &records[i + 1..] {
            let ((a0, a1), (b0, b1)) = (span(a), span(b));
            if a0 >= b1 || b0 >= a1 {
                continue;
            }
            overlapping += 1;
            let hosts = |r: &serde_json::Value| [r["src"].clone(), r["dst"].clone()];
            let shared = hosts(a).iter().any(|h| hosts(b).contains(h));
            assert!(
                !shared,
                "a host in two runs at once: {} and {}",
                a["sweep_point"]["key"], b["sweep_point"]["key"]
            );
        }
    }
    overlapping
}

/// A token file of 128 bits every loopback mesh server and driver of this test process share.
pub fn token() -> &'static str {
    static TOKEN: std::sync::OnceLock<tempfile::NamedTempFile> = std::sync::OnceLock::new();
    let file = TOKEN.get_or_init(|| {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "0123456789abcdef0123456789abcdef\n").unwrap();
        file
    });
    file.path().to_str().unwrap()
}

/// A process killed when dropped.
pub struct Spawned(pub Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `bytepath server` on `addr:port` in this namespace with `extra`, once it listens.
pub fn server_at(addr: &str, port: &str, extra: &[&str]) -> Spawned {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bytepath"))
        .args(["server", "--bind", addr, "--port", port, "--timeout", "5s"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    wait_listening(&mut child, &format!("{addr}:{port}"));
    Spawned(child)
}

/// Reads a server's first line: it names the address once the server listens.
fn wait_listening(child: &mut Child, what: &str) {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("listening on"), "{what}: {line:?}");
}
