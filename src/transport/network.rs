//! Where the two sides of every flow run, as every record states it (`config.network`): this
//! host's loopback, two network namespaces joined by a veth pair, a sink (the sending side
//! alone, its datagrams dropped past a veth pair), or another host. A `Link` is opened from
//! it; `args` parses it from `--netns`, `--sink`, `--mtu` and `--netem`.
use super::Transport;

/// The veth MTU when `--mtu` is not given: a real Ethernet link's.
pub const DEFAULT_MTU: u32 = 1500;
/// The sink's MTU when `--mtu` is not given: the largest an interface carries, so every UDP
/// datagram (at most 65,507 B of payload) leaves whole, as one packet. A datagram above the
/// MTU is fragmented, and the kernel copies a fragmented zero-copy send.
pub const SINK_MTU: u32 = 65_535;
/// The sink's MTU with UDP GSO (`--gso`): a NIC's, which the kernel's segments then fit.
pub const SINK_MTU_WITH_GSO: u32 = DEFAULT_MTU;
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
    /// The sending side alone, in a network namespace whose datagrams cross a veth pair into
    /// a peer namespace where no socket listens and nothing forwards, and are dropped there
    /// (`--sink`): no receiver, so no local delivery that would copy a zero-copy send.
    Sink,
}

/// The network the flows cross, as every record states it (`config.network`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Network {
    pub placement: Placement,
    /// The veth MTU (netns and sink only; loopback keeps the machine's own).
    pub mtu: Option<u32>,
    /// `tc netem` parameters applied to both veth ends (netns only).
    pub netem: Option<String>,
}

impl Network {
    pub fn is_netns(&self) -> bool {
        self.placement == Placement::Netns
    }

    pub fn is_sink(&self) -> bool {
        self.placement == Placement::Sink
    }

    /// Whether `transport` can run in this placement, or why not (for commands that leave such
    /// transports out instead of refusing them).
    pub fn carries(&self, transport: Transport) -> Result<(), String> {
        match (self.placement, transport) {
            (Placement::Sink, Transport::Udp) => Ok(()),
            (Placement::Sink, Transport::Tcp) => Err(
                "TCP needs a receiver that takes and acknowledges every byte, and a local receiver makes the kernel copy every zero-copy byte; a sink has none".into(),
            ),
            (Placement::Sink, t) => Err(format!(
                "{} never reaches a network device, so nothing would cross the sink's veth pair",
                t.name()
            )),
            (Placement::Netns, Transport::Tcp | Transport::Udp) => Ok(()),
            (Placement::Netns, t) => Err(format!(
                "{} never reaches a network device, so a veth pair would not be on its path",
                t.name()
            )),
            _ => Ok(()),
        }
    }

    /// The one line that refuses `transport` in this placement, or `None` if it runs here.
    pub fn refusal(&self, transport: Transport) -> Option<String> {
        let (flag, allowed) = match self.placement {
            Placement::Sink => ("--sink", "udp"),
            _ => ("--netns", "tcp, udp"),
        };
        self.carries(transport).err().map(|why| {
            format!(
                "--transport {} with {flag}: {why}; allowed with {flag}: {allowed}",
                transport.name()
            )
        })
    }
}
