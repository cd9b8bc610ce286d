//! `--netns`: flows across two network namespaces joined by a veth pair (`veth`). A socket
//! keeps the namespace it was created in whichever thread uses it later (network_namespaces(7)),
//! so these connectors only create each socket inside the right namespace, on a short-lived
//! thread (`in_netns`): the receiving (server) ends in the receiver's namespace, the sending
//! (client) ends in the sender's. After that the engine, `ipc` and `file` use the flows as they
//! use loopback ones; the socket options code is the loopback connectors'.
use super::datagram::udp_flows;
use super::tcp::{self, tcp_flows};
use super::veth::VethPair;
use super::{FlowConnector, FlowEnds, SocketOptions};
use crate::sys::netns::in_netns;
use std::io;
use std::net::{TcpListener, UdpSocket};

/// TCP across the veth pair: the listener (and so every accepted end) in the receiver's
/// namespace, each connecting end in the sender's.
pub struct NetnsTcp<'a>(pub &'a VethPair);

impl FlowConnector for NetnsTcp<'_> {
    fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowEnds>> {
        let pair = self.0;
        let listener = in_netns(&pair.receiver_ns, || {
            TcpListener::bind((pair.names.receiver_addr, 0))
        })?;
        tcp_flows(flows, options, &listener, |addr| {
            in_netns(&pair.sender_ns, || tcp::connect(addr, options))
        })
    }

    fn describe(&self) -> String {
        format!(
            "TCP across {}, both sides in one process",
            self.0.describe()
        )
    }
}

/// UDP across the veth pair: each flow's sending socket in the sender's namespace, its
/// receiving socket in the receiver's.
pub struct NetnsUdp<'a>(pub &'a VethPair);

impl FlowConnector for NetnsUdp<'_> {
    fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowEnds>> {
        let pair = self.0;
        udp_flows(
            flows,
            &options,
            || {
                in_netns(&pair.sender_ns, || {
                    UdpSocket::bind((pair.names.sender_addr, 0))
                })
            },
            || {
                in_netns(&pair.receiver_ns, || {
                    UdpSocket::bind((pair.names.receiver_addr, 0))
                })
            },
        )
    }

    fn describe(&self) -> String {
        format!(
            "two connected UDP sockets across {}, both sides in one process",
            self.0.describe()
        )
    }
}
