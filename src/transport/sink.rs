//! `--sink`: a sending side with no receiver, on one machine, as the kernel's own zero-copy
//! selftests send. The sender's namespace (`bytepath-<pid>-a`) holds one end of a veth pair,
//! addressed; the peer namespace (`-b`) holds the other end, up and bare: no address, no
//! route, forwarding off, no socket. Each flow is a UDP socket in the sender's namespace
//! connected to the pair's other address, which no namespace owns, through a permanent
//! neighbour entry for the peer end's MAC; the peer end takes every datagram in, finds it is
//! for no local address and drops it. Nothing is delivered to a socket, so nothing is copied
//! for a receiver: a zero-copy send's pages are released when the datagram is dropped. Neither
//! namespace has a default route or anything else attached, so nothing can leave the machine.
//! IPv6 is off on both ends, so the kernel sends nothing of its own (neighbour discovery,
//! MLD) and the peer end's receive counters count the run's datagrams alone.
use super::datagram::{self, RECEIVE_TIMEOUT};
use super::veth::{ip, Building, Shape, VethError, VethNames, VethPair};
use super::{Endpoint, SendingEnd, SinkConnector, SocketOptions};
use crate::sys::netns::{in_netns, NetnsHandle};
use std::io;
use std::net::UdpSocket;
use std::os::fd::AsFd;

/// The port every sink datagram is addressed to: discard (RFC 863), though nothing listens.
pub const DISCARD_PORT: u16 = 9;
/// Bytes a veth counts for a packet beyond its IP payload: the 14-byte Ethernet header.
pub const ETHERNET_HEADER: u64 = 14;
/// An IPv4 header without options.
pub const IPV4_HEADER: u64 = 20;
/// A UDP header.
pub const UDP_HEADER: u64 = 8;

/// The sink's link: the pair of namespaces and their veth, deleted when it drops.
#[derive(Debug)]
pub struct SinkLink {
    pub pair: VethPair,
}

impl SinkLink {
    /// Checks root and `ip`, removes leftovers of crashed runs, then builds the sink.
    pub fn create(mtu: u32) -> Result<SinkLink, VethError> {
        let shape = Shape::Other {
            flag: "--sink",
            build,
        };
        Ok(SinkLink {
            pair: VethPair::create_shaped(mtu, shape)?,
        })
    }

    pub fn mtu(&self) -> u32 {
        self.pair.mtu
    }

    /// As every record states it.
    pub fn describe(&self) -> String {
        let n = &self.pair.names;
        format!(
            "a sink: the sending side in network namespace {} ({}), its datagrams to {}:{DISCARD_PORT} cross a veth pair, MTU {}, into namespace {}, where no socket listens, nothing forwards and no route leads anywhere: dropped there",
            n.sender_netns,
            n.sender_addr,
            n.receiver_addr,
            self.pair.mtu,
            n.receiver_netns
        )
    }

    /// The counters of both veth ends now: the peer's receive side (what reached the sink)
    /// and the sender's transmit side (what the veth could not pass on).
    pub fn counters(&self) -> io::Result<SinkCounters> {
        let n = &self.pair.names;
        let peer = in_netns(&self.pair.receiver_ns, || {
            device_counters(&n.receiver_device)
        })?;
        let sender = in_netns(&self.pair.sender_ns, || device_counters(&n.sender_device))?;
        Ok(SinkCounters { peer, sender })
    }

    /// Routes in either namespace that could lead off this machine (a default route, IPv4 or
    /// IPv6), as `ip route` lists them: none, by construction.
    pub fn routes_off_host(&self) -> Result<Vec<String>, VethError> {
        routes_off_host(&self.pair.names)
    }
}

/// Builds the sink inside the two namespaces just added.
fn build(pair: &mut Building, mtu: u32) -> Result<(), VethError> {
    pair.add_namespaces()?;
    let n = pair.names.clone();
    let mac = peer_mac(std::process::id());
    let (a, b) = (&n.sender_netns, &n.receiver_netns);
    let (dev_a, dev_b) = (&n.sender_device, &n.receiver_device);
    ip(&[
        "link", "add", dev_a, "netns", a, "type", "veth", "peer", "name", dev_b, "netns", b,
        "address", &mac,
    ])?;
    quiet_namespaces(&n)?;
    let mtu = mtu.to_string();
    ip(&[
        "-n",
        a,
        "addr",
        "add",
        &format!("{}/30", n.sender_addr),
        "dev",
        dev_a,
    ])?;
    ip(&["-n", a, "link", "set", dev_a, "mtu", &mtu, "up"])?;
    ip(&["-n", b, "link", "set", dev_b, "mtu", &mtu, "up"])?;
    let dest = n.receiver_addr.to_string();
    ip(&[
        "-n",
        a,
        "neigh",
        "add",
        &dest,
        "lladdr",
        &mac,
        "dev",
        dev_a,
        "nud",
        "permanent",
    ])?;
    let off_host = routes_off_host(&n)?;
    if !off_host.is_empty() {
        return Err(VethError::Failed(format!(
            "the sink's namespaces have a route off this machine ({}); refusing to send",
            off_host.join("; ")
        )));
    }
    Ok(())
}

/// The peer end's MAC: locally administered and unicast (02:…), from the pid (at most 22
/// bits), so the neighbour entry needs nothing read back from the kernel.
pub fn peer_mac(pid: u32) -> String {
    format!(
        "02:62:70:{:02x}:{:02x}:{:02x}",
        (pid >> 16) & 0xff,
        (pid >> 8) & 0xff,
        pid & 0xff
    )
}

/// IPv6 off on both veth ends before they come up (no neighbour discovery or MLD of the
/// kernel's own), and forwarding off in the peer namespace, so what reaches it is dropped.
fn quiet_namespaces(n: &VethNames) -> Result<(), VethError> {
    let failed = |e: io::Error| VethError::Failed(format!("setting up --sink: {e}"));
    for (ns, dev) in [
        (&n.sender_netns, &n.sender_device),
        (&n.receiver_netns, &n.receiver_device),
    ] {
        let handle = NetnsHandle::open(ns).map_err(failed)?;
        in_netns(&handle, || {
            set_sysctl(&format!("ipv6/conf/{dev}/disable_ipv6"), "1", true)?;
            set_sysctl("ipv4/ip_forward", "0", false)
        })
        .map_err(failed)?;
    }
    Ok(())
}

/// Writes a networking sysctl of the calling thread's namespace (/proc/sys/net follows the
/// namespace of the thread that opens it); `absent_ok` for IPv6, which a kernel may lack.
fn set_sysctl(name: &str, value: &str, absent_ok: bool) -> io::Result<()> {
    let path = format!("/proc/sys/net/{name}");
    match std::fs::write(&path, value) {
        Err(e) if absent_ok && e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io::Error::new(e.kind(), format!("writing {path}: {e}"))),
        Ok(()) => Ok(()),
    }
}

/// Default routes (IPv4 and IPv6) in the two namespaces, one line each.
fn routes_off_host(n: &VethNames) -> Result<Vec<String>, VethError> {
    let mut found = Vec::new();
    for ns in [&n.sender_netns, &n.receiver_netns] {
        for family in ["-4", "-6"] {
            let listed = ip(&["-n", ns, family, "route", "show", "default"])?;
            found.extend(
                listed
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| format!("{ns}: {}", l.trim())),
            );
        }
    }
    Ok(found)
}

/// One device's counters, as `/sys/class/net/<dev>/statistics` gives them (both read
/// dev_get_stats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeviceCounters {
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub rx_dropped: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_dropped: u64,
}

impl DeviceCounters {
    /// What grew from `before` to `self`.
    pub fn since(&self, before: &DeviceCounters) -> DeviceCounters {
        DeviceCounters {
            rx_bytes: self.rx_bytes.wrapping_sub(before.rx_bytes),
            rx_packets: self.rx_packets.wrapping_sub(before.rx_packets),
            rx_dropped: self.rx_dropped.wrapping_sub(before.rx_dropped),
            tx_bytes: self.tx_bytes.wrapping_sub(before.tx_bytes),
            tx_packets: self.tx_packets.wrapping_sub(before.tx_packets),
            tx_dropped: self.tx_dropped.wrapping_sub(before.tx_dropped),
        }
    }
}

/// Both veth ends' counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkCounters {
    /// The peer (sink) end, in the peer namespace: its receive side counts what reached it.
    pub peer: DeviceCounters,
    /// The sending end: its transmit drops count what the veth could not pass on.
    pub sender: DeviceCounters,
}

impl SinkCounters {
    pub fn since(&self, before: &SinkCounters) -> SinkCounters {
        SinkCounters {
            peer: self.peer.since(&before.peer),
            sender: self.sender.since(&before.sender),
        }
    }
}

/// `dev`'s counters in the calling thread's network namespace, from /proc/thread-self/net/dev
/// (the thread's own namespace; /sys/class/net shows the namespace sysfs was mounted in).
fn device_counters(dev: &str) -> io::Result<DeviceCounters> {
    let table = std::fs::read_to_string("/proc/thread-self/net/dev")?;
    parse_net_dev(&table, dev).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("device {dev} is not in /proc/net/dev of its namespace"),
        )
    })
}

/// One device's line of /proc/net/dev: `name: rx bytes packets errs drop fifo frame compressed
/// multicast, tx bytes packets errs drop …`.
pub fn parse_net_dev(table: &str, dev: &str) -> Option<DeviceCounters> {
    table.lines().find_map(|line| {
        let (name, rest) = line.split_once(':')?;
        if name.trim() != dev {
            return None;
        }
        let v: Vec<u64> = rest
            .split_whitespace()
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        (v.len() >= 12).then(|| DeviceCounters {
            rx_bytes: v[0],
            rx_packets: v[1],
            rx_dropped: v[3],
            tx_bytes: v[8],
            tx_packets: v[9],
            tx_dropped: v[11],
        })
    })
}

/// The sink's flows: each a UDP socket in the sender's namespace, bound to the sending end's
/// address and connected to the address past the veth that nobody owns.
pub struct SinkFlows<'a>(pub &'a SinkLink);

impl SinkConnector for SinkFlows<'_> {
    fn connect_senders(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<SendingEnd>> {
        let framing = options.framing.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a sink's datagrams need the run's framing",
            )
        })?;
        let n = &self.0.pair.names;
        (0..flows)
            .map(|_| {
                let sock = in_netns(&self.0.pair.sender_ns, || {
                    UdpSocket::bind((n.sender_addr, 0))
                })?;
                sock.connect((n.receiver_addr, DISCARD_PORT))?;
                sock.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
                // SO_ZEROCOPY and UDP_SEGMENT (`--gso`) as every placement's UDP flows get them.
                datagram::udp_options(sock.as_fd(), &options, options.zerocopy_sender)?;
                Ok(SendingEnd {
                    send_buffer: datagram::send_buffer(sock.as_fd())?,
                    sender: Endpoint::datagram(sock, framing),
                })
            })
            .collect()
    }

    fn describe(&self) -> String {
        format!(
            "one connected UDP socket per flow in {}; no receiving side",
            self.0.describe()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_mac_is_local_unicast_and_carries_the_pid() {
        assert_eq!(peer_mac(4242), "02:62:70:00:10:92");
        assert_eq!(peer_mac(4_194_303), "02:62:70:3f:ff:ff");
        let first = u8::from_str_radix(&peer_mac(1)[..2], 16).unwrap();
        assert_eq!(first & 0b11, 0b10, "locally administered, not multicast");
    }

    #[test]
    fn a_device_line_of_proc_net_dev_reads_as_its_counters() {
        let table = "Inter-|   Receive                                                |  Transmit\n \
             face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    \
             lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0\n\
             bpv7b: 65549 1 0 3 0 0 0 0 0 0 0 5 0 0 0 0\n";
        let c = parse_net_dev(table, "bpv7b").unwrap();
        assert_eq!(
            (
                c.rx_bytes,
                c.rx_packets,
                c.rx_dropped,
                c.tx_bytes,
                c.tx_dropped
            ),
            (65_549, 1, 3, 0, 5)
        );
        assert_eq!(parse_net_dev(table, "bpv7"), None);
        let later = DeviceCounters {
            rx_bytes: 70_000,
            ..c
        };
        assert_eq!(later.since(&c).rx_bytes, 70_000 - 65_549);
    }

    /// Why the sink cannot be built here, if it cannot (not root, no `ip`).
    fn cannot_build() -> Option<&'static str> {
        if !crate::sys::is_root() {
            return Some("a sink needs root to create network namespaces");
        }
        std::process::Command::new("ip")
            .arg("-V")
            .output()
            .is_err()
            .then_some("a sink needs the ip command (iproute2)")
    }

    #[test]
    fn every_datagram_reaches_the_peer_end_with_its_headers_and_no_route_leads_away() {
        if let Some(reason) = cannot_build() {
            crate::skip_test(None, reason);
            return;
        }
        let sink = SinkLink::create(SINK_TEST_MTU).unwrap();
        assert_eq!(sink.routes_off_host().unwrap(), Vec::<String>::new());
        let n = &sink.pair.names;
        let sock = in_netns(&sink.pair.sender_ns, || UdpSocket::bind((n.sender_addr, 0))).unwrap();
        sock.connect((n.receiver_addr, DISCARD_PORT)).unwrap();
        let before = sink.counters().unwrap();
        let sizes = [0usize, 1, 1400, 8192, 65_507];
        for &len in &sizes {
            assert_eq!(sock.send(&vec![7u8; len]).unwrap(), len);
        }
        let grew = sink.counters().unwrap().since(&before);
        let headers = ETHERNET_HEADER + IPV4_HEADER + UDP_HEADER;
        let payload: u64 = sizes.iter().map(|&l| l as u64).sum();
        assert_eq!(grew.peer.rx_packets, sizes.len() as u64, "{grew:?}");
        assert_eq!(grew.peer.rx_bytes, payload + headers * sizes.len() as u64);
        assert_eq!((grew.sender.tx_dropped, grew.peer.tx_packets), (0, 0));
        let names = [n.sender_netns.clone(), n.receiver_netns.clone()];
        drop(sock);
        drop(sink);
        let listed = String::from_utf8(
            std::process::Command::new("ip")
                .args(["netns", "list"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        for name in names {
            assert!(!listed.contains(&name), "{name} outlived its link");
        }
    }

    const SINK_TEST_MTU: u32 = super::super::network::SINK_MTU;
}
