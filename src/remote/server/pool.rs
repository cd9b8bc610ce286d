//! Connections that have proved nothing yet (a control connection before its token, a health
//! probe before its answer), held so that no stranger can keep a newcomer out: each source
//! holds at most a few at once and the pool a bounded number, and when either is full the
//! OLDEST such connection is shut down (shutdown(2) on a clone of its socket: the session's
//! blocked read returns at once and it ends) instead of refusing the newcomer. A stranger then
//! only churns its own connections, and one that holds many sources must open connections
//! faster than a driver completes its handshake to keep it out (slowloris defences: evict the
//! oldest unauthenticated connection).
use std::collections::VecDeque;
use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a connection comes from, as far as any budget is concerned: an IPv4 address (an
/// IPv4-mapped IPv6 one as that IPv4 address), or an IPv6 address's /64, which one host
/// usually holds whole (it can use any of its 2^64 addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Source(IpAddr);

impl Source {
    pub(super) fn of(ip: IpAddr) -> Source {
        match ip {
            IpAddr::V4(_) => Source(ip),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Source(IpAddr::V4(v4)),
                None => Source(IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into())),
            },
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/64"),
        }
    }
}

/// One held connection: a handle on its socket for eviction.
struct Held {
    ticket: u64,
    source: Source,
    socket: TcpStream,
}

#[derive(Default)]
struct Inner {
    next_ticket: u64,
    /// Oldest first.
    held: VecDeque<Held>,
}

pub(super) struct Pool {
    capacity: usize,
    per_source: usize,
    inner: Mutex<Inner>,
}

impl Pool {
    /// A pool of `capacity` connections, `per_source` of them from one source at most.
    pub(super) fn new(capacity: usize, per_source: usize) -> Pool {
        assert!(capacity >= per_source && per_source >= 1);
        Pool {
            capacity,
            per_source,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Holds `socket` (through a clone of it) from `source`, first shutting down its source's
    /// oldest held connection when that source holds its share, then the pool's oldest when
    /// the pool is full; the ticket lets go of it later. Fails only when the socket cannot be
    /// cloned (no descriptor left): the caller then turns the connection away.
    pub(super) fn hold(
        self: &Arc<Self>,
        source: Source,
        socket: &TcpStream,
    ) -> std::io::Result<Place> {
        let socket = socket.try_clone()?;
        let mut inner = self.lock();
        let mine = inner.held.iter().filter(|h| h.source == source).count();
        if mine >= self.per_source {
            let oldest = inner.held.iter().position(|h| h.source == source);
            evict(&mut inner, oldest);
        }
        if inner.held.len() >= self.capacity {
            evict(&mut inner, Some(0));
        }
        inner.next_ticket += 1;
        let ticket = inner.next_ticket;
        inner.held.push_back(Held {
            ticket,
            source,
            socket,
        });
        Ok(Place {
            pool: self.clone(),
            ticket: Some(ticket),
        })
    }

    /// Lets go of `ticket`'s connection: `true` when it was still held, `false` when it had
    /// been evicted meanwhile.
    fn release(&self, ticket: u64) -> bool {
        let mut inner = self.lock();
        let at = inner.held.iter().position(|h| h.ticket == ticket);
        at.and_then(|at| inner.held.remove(at)).is_some()
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().held.len()
    }
}

/// A connection's place in the pool, let go of by `leave` or when dropped (a session that
/// fails, panics, or whose thread never starts gives it back).
pub(super) struct Place {
    pool: Arc<Pool>,
    ticket: Option<u64>,
}

impl Place {
    /// Lets go of the place: `true` when the connection still held it, `false` when it had
    /// been evicted meanwhile (or already let go).
    pub(super) fn leave(&mut self) -> bool {
        self.ticket.take().is_some_and(|t| self.pool.release(t))
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Shuts down the connection at `at` and forgets it; its session sees its reads fail.
fn evict(inner: &mut Inner, at: Option<usize>) {
    if let Some(held) = at.and_then(|at| inner.held.remove(at)) {
        let _ = held.socket.shutdown(Shutdown::Both);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// A connected pair over loopback: (the server's end, the client's end).
    pub(in crate::remote::server) fn pair(listener: &TcpListener) -> (TcpStream, TcpStream) {
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (server, client)
    }

    /// Whether the server's end of a connection was shut down: its read returns at once.
    pub(in crate::remote::server) fn was_shut(server: &TcpStream) -> bool {
        server
            .set_read_timeout(Some(std::time::Duration::from_millis(200)))
            .unwrap();
        matches!((&*server).read(&mut [0u8; 1]), Ok(0))
    }

    #[test]
    fn an_ipv6_address_counts_by_its_64_and_a_mapped_ipv4_as_itself() {
        let of = |s: &str| Source::of(s.parse().unwrap());
        assert_eq!(
            of("2001:db8:1:2::1"),
            of("2001:db8:1:2:ffff:ffff:ffff:ffff")
        );
        assert_ne!(of("2001:db8:1:2::1"), of("2001:db8:1:3::1"));
        assert_eq!(of("::ffff:192.0.2.7"), of("192.0.2.7"));
        assert_ne!(of("192.0.2.7"), of("192.0.2.8"));
        assert_eq!(of("2001:db8:1:2::1").to_string(), "2001:db8:1:2::/64");
        assert_eq!(of("::ffff:192.0.2.7").to_string(), "192.0.2.7");
    }

    #[test]
    fn a_full_pool_evicts_its_oldest_and_a_full_source_its_own_oldest() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let pool = Arc::new(Pool::new(3, 2));
        let (a, b, c) = (
            Source::of("192.0.2.1".parse().unwrap()),
            Source::of("192.0.2.2".parse().unwrap()),
            Source::of("192.0.2.3".parse().unwrap()),
        );
        let ends: Vec<_> = (0..5).map(|_| pair(&listener)).collect();
        let mut first = pool.hold(a, &ends[0].0).unwrap();
        let _second = pool.hold(b, &ends[1].0).unwrap();
        let mut third = pool.hold(a, &ends[2].0).unwrap();
        // Full: c's newcomer evicts the oldest of all, a's first.
        let _fourth = pool.hold(c, &ends[3].0).unwrap();
        assert!(was_shut(&ends[0].0));
        assert!(!first.leave(), "evicted, so no longer held");
        assert_eq!(pool.len(), 3);
        // b's newcomer is within its share, but the pool is full: the oldest of all goes.
        let _fifth = pool.hold(b, &ends[4].0).unwrap();
        assert!(was_shut(&ends[1].0));
        assert!(!was_shut(&ends[2].0), "a's second was not the oldest");
        assert!(third.leave());
        assert!(!third.leave(), "let go of once");
        assert_eq!(pool.len(), 2);
    }

    #[test]
    fn a_source_at_its_share_evicts_its_own_oldest_not_anyone_elses() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let pool = Arc::new(Pool::new(8, 1));
        let (a, b) = (
            Source::of("192.0.2.1".parse().unwrap()),
            Source::of("192.0.2.2".parse().unwrap()),
        );
        let ends: Vec<_> = (0..3).map(|_| pair(&listener)).collect();
        let mut b_place = pool.hold(b, &ends[0].0).unwrap();
        let _a_first = pool.hold(a, &ends[1].0).unwrap();
        let a_second = pool.hold(a, &ends[2].0).unwrap();
        assert!(was_shut(&ends[1].0));
        assert!(!was_shut(&ends[0].0));
        assert!(b_place.leave());
        assert_eq!(pool.len(), 1);
        drop(a_second);
        assert_eq!(pool.len(), 0, "a dropped place is let go of");
    }
}
