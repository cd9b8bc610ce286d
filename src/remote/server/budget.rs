//! `--max-bytes` held by the server itself: what a run's flows moved is read from the kernel
//! every `POLL` by the session's watchdog thread (tcp: TCP_INFO's bytes acknowledged and received; udp: the
//! datagrams this side sent, which the engine counts anyway), never on the per-message path,
//! and a run whose flows move more than the limit allows is stopped, whatever its client
//! declared. The count starts with the flows themselves: the warm-up and whatever a client
//! pushed before its `Go` are in it (a warm-up lasts a time, not a count, so a run under
//! `--max-bytes` is asked without one: `limits`). The allowance is the limit plus a margin for
//! what is in flight when a client's own count completes and its `Stop` is on its way: a
//! quarter of the limit, or what the flows' socket buffers hold, if more. A udp flow's intake
//! is counted through what this side sends for it: an rr server reads one request per answer
//! (what a flooding client sends beyond that the kernel drops before this process reads it).
//! The one udp side that receives without answering, a `--reverse` stream, never runs under
//! `--max-bytes`: a reverse run is bounded by time, and this limit asks for a count.
use crate::transport::Endpoint;
use std::sync::Arc;
use std::time::Duration;

/// How often the flows' counts are read: what a run moves past its limit before it is
/// stopped is at most what its flows carry in one such poll.
pub(super) const POLL: Duration = Duration::from_millis(20);

/// Why the server stopped a run, told to its client in `Done` and kept in its samples.
pub(super) const BYTES_REACHED: &str =
    "the run moved more than this server's --max-bytes allows; the server stopped its side";

pub(super) struct ByteBudget {
    allowance: u64,
    message_size: u64,
}

impl ByteBudget {
    /// The budget for a run when `--max-bytes` is set: `in_flight` is what the flows' socket
    /// buffers hold.
    pub(super) fn new(
        max_bytes: Option<u64>,
        message_size: usize,
        in_flight: u64,
    ) -> Option<ByteBudget> {
        let limit = max_bytes?;
        Some(ByteBudget {
            allowance: limit.saturating_add((limit / 4).max(in_flight)),
            message_size: message_size as u64,
        })
    }

    /// Whether the flows have moved more than the allowance since they were opened.
    pub(super) fn exceeded(&self, endpoints: &[Arc<Endpoint>]) -> bool {
        moved(endpoints, self.message_size) > self.allowance
    }
}

/// Bytes the flows moved so far, the larger direction (a stream moves one way, a round trip
/// the same both ways), as the kernel and the datagram counters know them.
fn moved(endpoints: &[Arc<Endpoint>], message_size: u64) -> u64 {
    let (mut sent, mut received) = (0u64, 0u64);
    for endpoint in endpoints {
        if let Some(datagrams) = endpoint.datagrams_sent() {
            sent += datagrams * message_size;
        } else if let Some(fd) = endpoint.socket_fd() {
            if let Ok(Some((acked, got))) = crate::sys::tcp_info::tcp_bytes(fd) {
                sent += acked;
                received += got;
            }
        }
    }
    sent.max(received)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// One tcp flow seen from this side, and its peer's end.
    fn flow() -> ([Arc<Endpoint>; 1], std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (here, _) = listener.accept().unwrap();
        ([Arc::new(Endpoint::socket(here))], peer)
    }

    #[test]
    fn a_flow_past_the_limit_and_its_margin_exceeds_it_and_one_within_does_not() {
        let (endpoints, mut peer) = flow();
        // 1000 bytes allowed, a margin of 250: in_flight below that.
        let budget = ByteBudget::new(Some(1000), 100, 10).unwrap();
        assert!(!budget.exceeded(&endpoints), "nothing moved yet");
        peer.write_all(&[0u8; 1200]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!budget.exceeded(&endpoints), "1200 is within 1250");
        peer.write_all(&[0u8; 100]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(budget.exceeded(&endpoints), "1300 is past 1250");
        assert!(ByteBudget::new(None, 100, 10).is_none());
    }

    #[test]
    fn what_moved_before_the_budget_was_made_is_counted() {
        let (endpoints, mut peer) = flow();
        // A warm-up, or a client pushing before its `Go`: the flow moved before any poll.
        peer.write_all(&[0u8; 5000]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let budget = ByteBudget::new(Some(1000), 100, 0).unwrap();
        assert!(budget.exceeded(&endpoints), "5000 bytes is past 1250");
    }
}
