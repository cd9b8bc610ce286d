//! Where the two sides of every flow run, as every record states it (`config.network`): this
//! host's loopback, two network namespaces joined by a veth pair, or another host. A `Link` is
//! opened from it; `args` parses it from `--netns`, `--mtu` and `--netem`.
use super::Transport;

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
    pub fn is_netns(&self) -> bool {
        self.placement == Placement::Netns
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

    /// The one line that refuses `transport` in this placement, or `None` if it runs here.
    pub fn refusal(&self, transport: Transport) -> Option<String> {
        self.carries(transport).err().map(|why| {
            format!(
                "--transport {} with --netns: {why}; allowed with --netns: tcp, udp",
                transport.name()
            )
        })
    }
}
