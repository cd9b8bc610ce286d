//! The link `--netns` measures across: two network namespaces joined by a veth pair, set up
//! with the iproute2 commands (ip-netns(8), ip-link(8), veth(4), tc-netem(8)) and removed when
//! the `VethPair` drops. Names carry this process's pid, so a later run recognises the
//! leftovers of one that was killed before it could clean up and removes them. `--sink` builds
//! its own shape of the same pair (`sink`), and so shares the names, the clean-up and the
//! one-pair-per-process rule.
use crate::sys::netns::NetnsHandle;
use std::io;
use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

/// Every namespace this program creates starts with this.
pub const NETNS_PREFIX: &str = "bytepath-";
/// /30 blocks in 10.201.0.0/16: one per run, chosen by pid.
const BLOCKS: u32 = 1 << 14;
/// One pair per process at a time: the names are per pid.
static PAIR_EXISTS: AtomicBool = AtomicBool::new(false);

/// Why the link could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum VethError {
    /// Something the user has to provide (root, a command, a kernel module): exit 2.
    #[error("{0}")]
    Missing(String),
    /// A setup command failed: exit 1.
    #[error("{0}")]
    Failed(String),
}

/// The names and addresses of one run's pair, all derived from its pid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VethNames {
    /// The sending (client) side's namespace and the receiving (server) side's.
    pub sender_netns: String,
    pub receiver_netns: String,
    pub sender_device: String,
    pub receiver_device: String,
    pub sender_addr: Ipv4Addr,
    pub receiver_addr: Ipv4Addr,
}

impl VethNames {
    pub fn for_pid(pid: u32) -> VethNames {
        let base = (pid % BLOCKS) * 4;
        let addr =
            |host: u32| Ipv4Addr::new(10, 201, (base >> 8) as u8, (base & 0xff) as u8 + host as u8);
        VethNames {
            sender_netns: format!("{NETNS_PREFIX}{pid}-a"),
            receiver_netns: format!("{NETNS_PREFIX}{pid}-b"),
            // Interface names hold at most 15 bytes (IFNAMSIZ - 1); a pid has at most 7 digits.
            sender_device: format!("bpv{pid}a"),
            receiver_device: format!("bpv{pid}b"),
            sender_addr: addr(1),
            receiver_addr: addr(2),
        }
    }
}

/// The pid in a namespace name this program made (`bytepath-<pid>-a` or `-b`), if it is one.
pub fn leftover_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(NETNS_PREFIX)?;
    let (pid, side) = rest.split_once('-')?;
    let digits = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    if !digits || !matches!(side, "a" | "b") {
        return None;
    }
    pid.parse().ok()
}

/// Whether `pid` is a running bytepath: a reused pid of another program does not count, nor
/// a killed one its parent has not reaped yet (a zombie keeps its name).
fn is_live_bytepath(pid: u32) -> bool {
    let named = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|comm| comm.starts_with("bytepath"));
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    // The state letter follows the name in parentheses: "pid (comm) S ...".
    let running = state
        .as_deref()
        .and_then(|s| s.rsplit_once(')'))
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|state| !matches!(state, "Z" | "X"));
    named && running
}

/// Names from `ip netns list` output (one per line, maybe followed by " (id: N)").
pub fn listed_names(list: &str) -> Vec<&str> {
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

/// The names in `list` left behind by a bytepath that is no longer running.
pub fn leftovers(list: &str, is_live: impl Fn(u32) -> bool) -> Vec<&str> {
    listed_names(list)
        .into_iter()
        .filter(|name| leftover_pid(name).is_some_and(|pid| !is_live(pid)))
        .collect()
}

/// Removes the namespaces (and with them their veth ends) of earlier runs that died before
/// cleaning up; returns their names.
pub fn cleanup_leftovers() -> Result<Vec<String>, VethError> {
    let list = ip(&["netns", "list"])?;
    let stale: Vec<String> = leftovers(&list, is_live_bytepath)
        .into_iter()
        .map(String::from)
        .collect();
    for name in &stale {
        ip(&["netns", "del", name])?;
    }
    Ok(stale)
}

/// Sets up the veth pair inside two namespaces already added (`Building::add_namespaces`).
pub(super) type Build = fn(&mut Building, u32) -> Result<(), VethError>;

/// What is built between the two namespaces.
#[derive(Clone, Copy)]
pub(super) enum Shape<'a> {
    /// `--netns`: an address on each end, both `lo` up, and netem on both ends when asked.
    Pair { netem: Option<&'a str> },
    /// Another link over the same namespaces and names (`--sink`'s, built by `sink`), named
    /// by the flag that asks for it.
    Other { flag: &'static str, build: Build },
}

impl Shape<'_> {
    /// The flag that asked for it, as refusals name it.
    fn flag(self) -> &'static str {
        match self {
            Shape::Pair { .. } => "--netns",
            Shape::Other { flag, .. } => flag,
        }
    }
}

/// Two namespaces joined by a veth pair; dropping it deletes both namespaces, which removes
/// the veth pair with them.
#[derive(Debug)]
pub struct VethPair {
    pub names: VethNames,
    pub mtu: u32,
    pub netem: Option<String>,
    pub sender_ns: NetnsHandle,
    pub receiver_ns: NetnsHandle,
    /// Namespaces this process created that are still there.
    created: Vec<String>,
}

impl VethPair {
    /// Checks root and `ip`, removes leftovers of crashed runs, then builds the link: addresses
    /// on a /30, MTU, both ends and both `lo` up, and netem on both veth ends when asked.
    pub fn create(mtu: u32, netem: Option<&str>) -> Result<VethPair, VethError> {
        VethPair::create_shaped(mtu, Shape::Pair { netem })
    }

    /// As `create`, for the link `shape` names.
    pub(super) fn create_shaped(mtu: u32, shape: Shape<'_>) -> Result<VethPair, VethError> {
        let flag = shape.flag();
        if !crate::sys::is_root() {
            return Err(VethError::Missing(format!(
                "{flag} needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) to create network namespaces; run as root"
            )));
        }
        ip(&["-V"]).map_err(|e| match e {
            VethError::Missing(_) => {
                VethError::Missing(format!("{flag} needs the ip command (iproute2)"))
            }
            failed => failed,
        })?;
        if PAIR_EXISTS.swap(true, Ordering::SeqCst) {
            return Err(VethError::Failed(format!(
                "one {flag} link per process at a time: its names carry the pid"
            )));
        }
        let made = VethPair::build(mtu, shape);
        if made.is_err() {
            PAIR_EXISTS.store(false, Ordering::SeqCst);
        }
        made
    }

    fn build(mtu: u32, shape: Shape<'_>) -> Result<VethPair, VethError> {
        let mut pair = Building {
            names: VethNames::for_pid(std::process::id()),
            created: Vec::new(),
        };
        for name in cleanup_leftovers()? {
            eprintln!("bytepath: removed network namespace {name} left by an earlier run that did not finish");
        }
        let netem = match shape {
            Shape::Pair { netem } => {
                pair.build(mtu)?;
                netem
            }
            Shape::Other { build, .. } => {
                build(&mut pair, mtu)?;
                None
            }
        };
        if let Some(netem) = netem {
            pair.apply_netem(netem)?;
        }
        let open =
            |name: &str| NetnsHandle::open(name).map_err(|e| VethError::Failed(e.to_string()));
        Ok(VethPair {
            sender_ns: open(&pair.names.sender_netns)?,
            receiver_ns: open(&pair.names.receiver_netns)?,
            names: pair.names.clone(),
            mtu,
            netem: netem.map(String::from),
            created: std::mem::take(&mut pair.created),
        })
    }

    /// As every record states it.
    pub fn describe(&self) -> String {
        let netem = match &self.netem {
            Some(n) => format!(", netem {n}"),
            None => String::new(),
        };
        format!(
            "two network namespaces ({} → {}) joined by a veth pair, MTU {}{netem}: {} → {}",
            self.names.sender_netns,
            self.names.receiver_netns,
            self.mtu,
            self.names.sender_addr,
            self.names.receiver_addr
        )
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        delete(&self.created);
        PAIR_EXISTS.store(false, Ordering::SeqCst);
    }
}

/// A pair being set up: whatever exists is deleted if a step fails.
pub(super) struct Building {
    pub(super) names: VethNames,
    created: Vec<String>,
}

impl Building {
    /// The two namespaces, each remembered as soon as it exists.
    pub(super) fn add_namespaces(&mut self) -> Result<(), VethError> {
        let n = self.names.clone();
        for ns in [&n.sender_netns, &n.receiver_netns] {
            ip(&["netns", "add", ns])?;
            self.created.push(ns.clone());
        }
        Ok(())
    }

    fn build(&mut self, mtu: u32) -> Result<(), VethError> {
        let n = self.names.clone();
        self.add_namespaces()?;
        ip(&[
            "link",
            "add",
            &n.sender_device,
            "netns",
            &n.sender_netns,
            "type",
            "veth",
            "peer",
            "name",
            &n.receiver_device,
            "netns",
            &n.receiver_netns,
        ])?;
        let mtu = mtu.to_string();
        for (ns, dev, addr) in [
            (&n.sender_netns, &n.sender_device, n.sender_addr),
            (&n.receiver_netns, &n.receiver_device, n.receiver_addr),
        ] {
            ip(&["-n", ns, "addr", "add", &format!("{addr}/30"), "dev", dev])?;
            ip(&["-n", ns, "link", "set", dev, "mtu", &mtu, "up"])?;
            // Sockets bound to the namespace's own addresses need lo up.
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(())
    }

    /// netem on both veth ends, so both directions see it.
    fn apply_netem(&self, netem: &str) -> Result<(), VethError> {
        let n = &self.names;
        for (ns, dev) in [
            (&n.sender_netns, &n.sender_device),
            (&n.receiver_netns, &n.receiver_device),
        ] {
            let mut args = vec!["-n", ns, "qdisc", "add", "dev", dev, "root", "netem"];
            args.extend(netem.split_whitespace());
            run("tc", &args).map_err(|e| match e {
                VethError::Failed(text) if text.contains("qdisc kind is unknown") => {
                    VethError::Missing(format!(
                        "--netem {netem:?}: netem is not available in this kernel (module sch_netem missing); leave out --netem or load sch_netem"
                    ))
                }
                VethError::Failed(text) => VethError::Missing(format!(
                    "--netem {netem:?}: tc refused it ({text}); allowed: tc netem parameters such as \"delay 1ms rate 10gbit loss 0.1%\" (see tc-netem(8))"
                )),
                missing => missing,
            })?;
        }
        Ok(())
    }
}

impl Drop for Building {
    fn drop(&mut self) {
        delete(&self.created);
    }
}

/// Deleting a namespace removes the veth end inside it, and with it the peer. Where `ip`
/// cannot even start (a process out of file descriptors), the name is unmounted directly.
fn delete(names: &[String]) {
    for name in names {
        let removed = ip(&["netns", "del", name]).map(drop).or_else(|e| {
            crate::sys::netns::remove_named(name)
                .map_err(|direct| format!("{e}; unmounting it directly: {direct}"))
        });
        if let Err(e) = removed {
            eprintln!("bytepath: could not remove network namespace {name} ({e}); remove it with `ip netns del {name}`");
        }
    }
}

pub(super) fn ip(args: &[&str]) -> Result<String, VethError> {
    run("ip", args)
}

/// Runs one iproute2 command; its stderr's first line becomes the error.
fn run(program: &str, args: &[&str]) -> Result<String, VethError> {
    let out = Command::new(program).args(args).output().map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            VethError::Missing(format!("--netns needs the {program} command (iproute2)"))
        } else {
            VethError::Failed(format!("running {program}: {e}"))
        }
    })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let why = stderr.lines().next().unwrap_or("no message").trim();
    Err(VethError::Failed(format!(
        "`{program} {}` failed: {why}",
        args.join(" ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_interface_limit_and_addresses_share_one_slash_30() {
        for pid in [1, 4242, 4_194_304] {
            let n = VethNames::for_pid(pid);
            assert!(
                n.sender_device.len() <= 15 && n.receiver_device.len() <= 15,
                "{n:?}"
            );
            assert_eq!(leftover_pid(&n.sender_netns), Some(pid));
            assert_eq!(leftover_pid(&n.receiver_netns), Some(pid));
            let (a, b) = (u32::from(n.sender_addr), u32::from(n.receiver_addr));
            assert_eq!((a & !3, a & 3, b), (a & !3, 1, a + 1), "{n:?}");
            assert_eq!(n.sender_addr.octets()[..2], [10, 201]);
        }
        let n = VethNames::for_pid(4242);
        assert_eq!(n.sender_netns, "bytepath-4242-a");
        assert_eq!(n.receiver_device, "bpv4242b");
        // 4242 % 16384 = 4242; 4242 * 4 = 16968 = 66 * 256 + 72.
        assert_eq!(n.sender_addr, Ipv4Addr::new(10, 201, 66, 73));
    }

    #[test]
    fn only_our_names_with_a_dead_pid_are_leftovers() {
        let list = "bytepath-100-a (id: 3)\nbytepath-100-b (id: 4)\nbytepath-200-a\n\
                    bytepath-x-a\nbytepath-test-enobufs-77\nbytepath-300-c\nother-100-a\nbytepath--a\nbytepath-100-ab\n";
        let live = |pid: u32| pid == 200;
        assert_eq!(
            leftovers(list, live),
            vec!["bytepath-100-a", "bytepath-100-b"]
        );
        assert_eq!(leftover_pid("bytepath-12-b"), Some(12));
        assert_eq!(leftover_pid("bytepath-12"), None);
    }

    #[test]
    fn this_test_process_counts_as_a_live_bytepath_and_pid_zero_does_not() {
        // The test binary is named bytepath-<hash>, as the program is bytepath.
        assert!(is_live_bytepath(std::process::id()));
        assert!(!is_live_bytepath(0));
    }
}
