//! `--netns`, `--mtu`, `--netem` -> a validated `Network`: where the two sides of every flow
//! run. One parser for every command (run, sweep, ipc, file), so the flags mean the same
//! everywhere and each refusal is the same one line.
use super::ConfigError;
use crate::cli::NetworkArgs;
use crate::transport::Transport;

/// The veth MTU when `--mtu` is not given: a real Ethernet link's.
pub const DEFAULT_MTU: u32 = 1500;
/// The smallest MTU IPv4 allows (RFC 791) and the largest an interface can carry.
pub const MTU_RANGE: std::ops::RangeInclusive<u32> = 68..=65_535;

/// Where the sides run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Both sides in this process's own network namespace, over loopback (or a socket pair).
    #[default]
    Loopback,
    /// Each side in its own network namespace, joined by a veth pair.
    Netns,
    /// The other side on `bytepath server` on another host (`--remote`); what joins the two
    /// hosts is theirs, not bytepath's.
    Remote,
}

/// The network the flows cross, as every record states it (`config.network`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Network {
    pub placement: Placement,
    /// The veth MTU (netns only; loopback keeps the machine's own).
    pub mtu: Option<u32>,
    /// `tc netem` parameters applied to both veth ends (netns only).
    pub netem: Option<String>,
}

impl Network {
    pub fn from_args(args: &NetworkArgs) -> Result<Network, ConfigError> {
        if !args.netns {
            let given = [("--mtu", &args.mtu), ("--netem", &args.netem)];
            if let Some((flag, Some(value))) = given.iter().find(|(_, v)| v.is_some()) {
                return Err(ConfigError(format!(
                    "{flag} {value:?}: applies to the veth pair of --netns only; add --netns or leave it out"
                )));
            }
            return Ok(Network::default());
        }
        let mtu = match &args.mtu {
            None => DEFAULT_MTU,
            Some(text) => parse_mtu(text)?,
        };
        let netem = match &args.netem {
            None => None,
            Some(text) => Some(parse_netem(text)?),
        };
        Ok(Network {
            placement: Placement::Netns,
            mtu: Some(mtu),
            netem,
        })
    }

    pub fn is_netns(&self) -> bool {
        self.placement == Placement::Netns
    }

    /// Refuses a transport that cannot cross a veth pair: only IP sockets can.
    pub fn check_transport(&self, transport: Transport) -> Result<(), ConfigError> {
        match self.carries(transport) {
            Ok(()) => Ok(()),
            Err(why) => Err(ConfigError(format!(
                "--transport {} with --netns: {why}; allowed with --netns: tcp, udp",
                transport.name()
            ))),
        }
    }

    /// Whether `transport` can run in this placement, or why not (for commands that leave such
    /// transports out instead of refusing them).
    pub fn carries(&self, transport: Transport) -> Result<(), String> {
        if !self.is_netns() || matches!(transport, Transport::Tcp | Transport::Udp) {
            return Ok(());
        }
        Err(format!(
            "{} never reaches a network device, so a veth pair would not be on its path",
            transport.name()
        ))
    }
}

fn parse_mtu(text: &str) -> Result<u32, ConfigError> {
    match text.trim().parse::<u32>() {
        Ok(n) if MTU_RANGE.contains(&n) => Ok(n),
        _ => Err(ConfigError(format!(
            "--mtu {text:?}: allowed: a whole number of bytes from {} to {} (1500 is Ethernet, 9000 jumbo frames)",
            MTU_RANGE.start(),
            MTU_RANGE.end()
        ))),
    }
}

/// netem's own grammar is checked by `tc` when the link is set up; here only what would break
/// the command line handed to it: nothing empty, no control characters.
fn parse_netem(text: &str) -> Result<String, ConfigError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() || text.chars().any(char::is_control) {
        return Err(ConfigError(format!(
            "--netem {text:?}: allowed: tc netem parameters such as \"delay 1ms rate 10gbit loss 0.1%\" (see tc-netem(8))"
        )));
    }
    Ok(words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(netns: bool, mtu: Option<&str>, netem: Option<&str>) -> NetworkArgs {
        NetworkArgs {
            netns,
            mtu: mtu.map(String::from),
            netem: netem.map(String::from),
        }
    }

    #[test]
    fn netns_defaults_to_an_ethernet_mtu_and_loopback_records_none() {
        let n = Network::from_args(&args(true, None, None)).unwrap();
        assert_eq!(
            (n.placement, n.mtu, n.netem),
            (Placement::Netns, Some(1500), None)
        );
        let n = Network::from_args(&args(false, None, None)).unwrap();
        assert_eq!((n.placement, n.mtu), (Placement::Loopback, None));
    }

    #[test]
    fn mtu_outside_what_ipv4_allows_is_refused_with_the_range() {
        for text in ["5", "67", "65536", "big", ""] {
            let e = Network::from_args(&args(true, Some(text), None))
                .unwrap_err()
                .0;
            assert!(e.starts_with("--mtu") && e.contains("68 to 65535"), "{e}");
        }
        let n = Network::from_args(&args(true, Some("65520"), None)).unwrap();
        assert_eq!(n.mtu, Some(65520));
    }

    #[test]
    fn mtu_and_netem_without_netns_are_refused_naming_the_flag() {
        let e = Network::from_args(&args(false, Some("9000"), None))
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("--mtu \"9000\"") && e.contains("add --netns"),
            "{e}"
        );
        let e = Network::from_args(&args(false, None, Some("delay 1ms")))
            .unwrap_err()
            .0;
        assert!(e.starts_with("--netem \"delay 1ms\""), "{e}");
    }

    #[test]
    fn netem_is_kept_as_words_and_an_empty_one_is_refused() {
        let n = Network::from_args(&args(true, None, Some("  delay 1ms   loss 0.1% "))).unwrap();
        assert_eq!(n.netem.as_deref(), Some("delay 1ms loss 0.1%"));
        let e = Network::from_args(&args(true, None, Some(" ")))
            .unwrap_err()
            .0;
        assert!(e.contains("tc-netem(8)"), "{e}");
    }

    #[test]
    fn only_ip_transports_cross_namespaces() {
        let netns = Network::from_args(&args(true, None, None)).unwrap();
        assert!(netns.check_transport(Transport::Tcp).is_ok());
        assert!(netns.check_transport(Transport::Udp).is_ok());
        for t in [
            Transport::Unix,
            Transport::UnixDgram,
            Transport::Pipe,
            Transport::Shm,
        ] {
            let e = netns.check_transport(t).unwrap_err().0;
            assert!(e.contains("allowed with --netns: tcp, udp"), "{e}");
            assert!(Network::default().check_transport(t).is_ok());
        }
    }
}
