//! What carries bytes between the two sides. The engine asks a `FlowConnector` for connected
//! flows and does not care where the sides live (loopback today; namespaces and remote hosts
//! plug in here later).
pub mod tcp;

use std::io;
use std::net::TcpStream;

/// Socket options a run needs on its flows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketOptions {
    /// TCP_NODELAY on both ends (request/response must not wait for Nagle).
    pub nodelay: bool,
    /// SO_ZEROCOPY on the sender (client) end.
    pub zerocopy_sender: bool,
    /// SO_ZEROCOPY on the receiver (server) end, which answers in `rr`.
    pub zerocopy_receiver: bool,
}

/// One flow: the connecting (sender / client) end and the accepting (receiver / server) end.
pub struct FlowSockets {
    pub sender: TcpStream,
    pub receiver: TcpStream,
}

pub trait FlowConnector {
    /// Opens `flows` connected flows with `options` applied.
    fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowSockets>>;
    /// Where the flows run, as the output states it.
    fn describe(&self) -> String;
}
