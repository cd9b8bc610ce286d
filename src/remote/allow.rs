//! `bytepath server --allow-peers CIDR,…`: the addresses a server may send test traffic to
//! when a mesh driver asks it to run a point against another server, and `--peer-ports`: the
//! control ports it may connect to there. Without `--allow-peers` no peer run is accepted at
//! all, so a server is never a traffic reflector for whoever holds the token, nor a port
//! scanner of its neighbours. Prefixes follow RFC 4632 (IPv4) and RFC 4291 (IPv6); an IPv4-mapped IPv6 address
//! (`::ffff:a.b.c.d`) is judged as the IPv4 address it carries.
use std::net::IpAddr;

/// One prefix: an address and how many leading bits of it must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl Cidr {
    /// `10.0.0.0/8`, `fd00::/64`, or a bare address (a /32 or /128).
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let text = text.trim();
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("{text:?} is not an address or prefix"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|&p| p <= max)
                .ok_or_else(|| format!("{text:?}: the prefix length must be 0 to {max}"))?,
        };
        Ok(Cidr {
            addr: canonical(addr),
            prefix,
        })
    }

    /// Whether `addr` lies inside this prefix.
    pub fn contains(&self, addr: IpAddr) -> bool {
        let bits = |a: IpAddr| -> u128 {
            match a {
                IpAddr::V4(v4) => u32::from(v4) as u128,
                IpAddr::V6(v6) => u128::from(v6),
            }
        };
        let addr = canonical(addr);
        if addr.is_ipv4() != self.addr.is_ipv4() {
            return false;
        }
        let width = if addr.is_ipv4() { 32 } else { 128 };
        if self.prefix == 0 {
            return true;
        }
        let shift = width - u32::from(self.prefix);
        bits(addr) >> shift == bits(self.addr) >> shift
    }
}

impl Cidr {
    /// Whether every address of this prefix (its first and its last) is of `kind`.
    fn is_all(&self, kind: &str) -> bool {
        let last = match self.addr {
            IpAddr::V4(v4) => {
                let host = u32::MAX.checked_shr(u32::from(self.prefix)).unwrap_or(0);
                IpAddr::V4((u32::from(v4) | host).into())
            }
            IpAddr::V6(v6) => {
                let host = u128::MAX.checked_shr(u32::from(self.prefix)).unwrap_or(0);
                IpAddr::V6((u128::from(v6) | host).into())
            }
        };
        special(self.addr) == Some(kind) && special(last) == Some(kind)
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is; any other address unchanged.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    }
}

/// The special kind of an address a wide prefix must not let through, if it is one.
fn special(addr: IpAddr) -> Option<&'static str> {
    match canonical(addr) {
        a if a.is_loopback() => Some("loopback"),
        a if a.is_unspecified() => Some("unspecified"),
        a if a.is_multicast() => Some("multicast"),
        IpAddr::V4(v4) if v4.is_link_local() => Some("link-local"),
        IpAddr::V6(v6) if v6.segments()[0] & 0xffc0 == 0xfe80 => Some("link-local"),
        _ => None,
    }
}

/// The prefixes a server may run peer tests toward; empty: none (peer runs are refused).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowPeers(pub Vec<Cidr>);

impl AllowPeers {
    /// `--allow-peers` as given (`None`: the flag was left out).
    pub fn parse(text: Option<&str>) -> Result<AllowPeers, String> {
        let Some(text) = text else {
            return Ok(AllowPeers::default());
        };
        let allowed = "allowed: comma-separated addresses or prefixes such as 10.0.0.0/8,fd00::/64";
        if text.trim().is_empty() {
            return Err(format!("--allow-peers {text:?}: empty; {allowed}"));
        }
        let list: Vec<Cidr> = text
            .split(',')
            .map(|part| Cidr::parse(part).map_err(|e| format!("--allow-peers: {e}; {allowed}")))
            .collect::<Result<_, _>>()?;
        if let Some(all) = list.iter().find(|c| c.prefix == 0) {
            return Err(format!(
                "--allow-peers: {all} allows every address; {allowed} (narrower than /0)"
            ));
        }
        Ok(AllowPeers(list))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a peer run toward `addr` is allowed: inside a listed prefix, and when `addr` is
    /// of a special kind (loopback, unspecified, link-local, multicast) only by a prefix that
    /// lies inside that kind itself (`127.0.0.0/8`, `::1`, `fe80::/64`), never by a wider one
    /// that merely covers it.
    pub fn allows(&self, addr: IpAddr) -> bool {
        let addr = canonical(addr);
        self.0
            .iter()
            .any(|c| c.contains(addr) && special(addr).is_none_or(|kind| c.is_all(kind)))
    }
}

impl std::fmt::Display for AllowPeers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list: Vec<String> = self.0.iter().map(Cidr::to_string).collect();
        f.write_str(&list.join(","))
    }
}

/// `--peer-ports`: the control ports a peer run may connect to, as inclusive ranges; empty:
/// this server's own control port only (a fleet runs its servers on one port). The list bounds
/// the one connection the driver chooses, to the peer's control port: the run's data
/// connections go to the ports the peer's server names itself, once it has proved the token.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerPorts(pub Vec<(u16, u16)>);

impl PeerPorts {
    /// `--peer-ports` as given (`None`: the flag was left out).
    pub fn parse(text: Option<&str>) -> Result<PeerPorts, String> {
        let Some(text) = text else {
            return Ok(PeerPorts::default());
        };
        let allowed =
            "allowed: comma-separated ports or ranges of 1 to 65535 such as 5301,5400-5410";
        let port = |p: &str| p.trim().parse::<u16>().ok().filter(|&p| p > 0);
        let range = |part: &str| match part.split_once('-') {
            Some((low, high)) => port(low).zip(port(high)).filter(|(l, h)| l <= h),
            None => port(part).map(|p| (p, p)),
        };
        let list: Vec<(u16, u16)> = text
            .split(',')
            .map(|part| range(part).ok_or_else(|| format!("--peer-ports: {part:?}; {allowed}")))
            .collect::<Result<_, _>>()?;
        Ok(PeerPorts(list))
    }

    pub fn is_default(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a peer run may connect to `port`, `own` being this server's control port.
    pub fn allows(&self, port: u16, own: u16) -> bool {
        if self.0.is_empty() {
            return port == own;
        }
        self.0
            .iter()
            .any(|&(low, high)| (low..=high).contains(&port))
    }
}

impl std::fmt::Display for PeerPorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("this server's own port");
        }
        let list: Vec<String> = self
            .0
            .iter()
            .map(|&(l, h)| {
                if l == h {
                    l.to_string()
                } else {
                    format!("{l}-{h}")
                }
            })
            .collect();
        f.write_str(&list.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_prefix_holds_its_addresses_and_no_others() {
        let net = Cidr::parse("10.20.0.0/16").unwrap();
        assert!(net.contains(ip("10.20.255.1")));
        assert!(!net.contains(ip("10.21.0.1")));
        assert!(!net.contains(ip("::1")));
        let host = Cidr::parse("192.0.2.7").unwrap();
        assert_eq!(host.prefix, 32);
        assert!(host.contains(ip("192.0.2.7")) && !host.contains(ip("192.0.2.8")));
        let v6 = Cidr::parse("fd00:1::/32").unwrap();
        assert!(v6.contains(ip("fd00:1:ffff::9")) && !v6.contains(ip("fd00:2::1")));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
    }

    #[test]
    fn special_addresses_pass_only_a_prefix_of_their_own_kind() {
        let wide = AllowPeers::parse(Some("0.0.0.0/1,::/1,fe00::/8,224.0.0.0/3")).unwrap();
        for addr in [
            "127.0.0.1",
            "0.0.0.0",
            "::1",
            "::",
            "169.254.1.1",
            "fe80::1",
            "224.0.0.1",
        ] {
            assert!(!wide.allows(ip(addr)), "{addr} through a wide prefix");
        }
        assert!(wide.allows(ip("10.0.0.1")));
        let exact = AllowPeers::parse(Some("127.0.0.0/8,::1,fe80::/64,169.254.0.0/16")).unwrap();
        for addr in [
            "127.0.0.2",
            "::ffff:127.0.0.1",
            "::1",
            "fe80::1",
            "169.254.1.1",
        ] {
            assert!(exact.allows(ip(addr)), "{addr} listed exactly");
        }
    }

    #[test]
    fn a_mapped_ipv6_address_is_judged_as_its_ipv4_address() {
        let net = Cidr::parse("127.0.0.0/8").unwrap();
        assert!(net.contains(ip("::ffff:127.0.0.2")));
        assert!(!net.contains(ip("::ffff:10.0.0.1")));
    }

    #[test]
    fn bad_prefixes_name_the_value_and_what_is_allowed() {
        let e = AllowPeers::parse(Some("10.0.0.0/33")).unwrap_err();
        assert!(
            e.contains("\"10.0.0.0/33\"") && e.contains("0 to 32"),
            "{e}"
        );
        let e = AllowPeers::parse(Some("10.0.0.0/8,nope")).unwrap_err();
        assert!(e.contains("\"nope\"") && e.contains("allowed:"), "{e}");
        assert!(AllowPeers::parse(Some(" ")).unwrap_err().contains("empty"));
        assert!(AllowPeers::parse(None).unwrap().is_empty());
        for all in ["0.0.0.0/0", "::/0"] {
            let e = AllowPeers::parse(Some(all)).unwrap_err();
            assert!(e.contains("every address"), "{e}");
        }
        let list = AllowPeers::parse(Some("10.1.0.0/16, ::1")).unwrap();
        assert_eq!(list.to_string(), "10.1.0.0/16,::1/128");
        assert!(list.allows(ip("10.1.2.3")) && !list.allows(ip("10.2.0.1")));
    }

    #[test]
    fn peer_ports_hold_their_ports_and_ranges_and_default_to_the_servers_own() {
        let own = PeerPorts::parse(None).unwrap();
        assert!(own.is_default() && own.allows(5301, 5301) && !own.allows(5302, 5301));
        let list = PeerPorts::parse(Some("5301, 5400-5410")).unwrap();
        assert_eq!(list.to_string(), "5301,5400-5410");
        for port in [5301, 5400, 5405, 5410] {
            assert!(list.allows(port, 1), "{port}");
        }
        for port in [5300, 5302, 5399, 5411, 22] {
            assert!(!list.allows(port, 22), "{port} (own port 22 is not listed)");
        }
    }

    #[test]
    fn bad_peer_ports_name_the_part_and_what_is_allowed() {
        for bad in ["", "0", "5301,", "70000", "5410-5400", "a-b", "5301-"] {
            let e = PeerPorts::parse(Some(bad)).unwrap_err();
            assert!(
                e.starts_with("--peer-ports: \"") && e.contains("allowed: comma-separated ports"),
                "{bad}: {e}"
            );
        }
    }
}
