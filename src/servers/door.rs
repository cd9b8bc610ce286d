//! Who a server model lets in. On one host, anyone: the load generator is this process. A
//! point forked by `bytepath server` for a remote driver lets in only the driver's address
//! (its control connection's peer): any other connection is closed right after accept, before
//! the model makes a thread or a buffer for it, and is not counted as accepted. With a count
//! (`most`), the model stops listening once that many are in: its listener is shut and later
//! connections are refused by the kernel.
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

/// Who may connect, as a point's setup says it: plain data, copied into the forked child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Door {
    /// Only connections from this address (compared canonical: an IPv4 peer seen on a dual
    /// stack socket as ::ffff:a.b.c.d is a.b.c.d); `None`: any.
    pub peer: Option<IpAddr>,
    /// Connections let in before the listener is shut; `None`: no count.
    pub most: Option<u64>,
}

impl Door {
    /// A point on one host: anyone, no count.
    pub const ANYONE: Door = Door {
        peer: None,
        most: None,
    };

    /// Only `peer`, at most `most` connections when given.
    pub fn only(peer: IpAddr, most: Option<u64>) -> Door {
        Door {
            peer: Some(peer.to_canonical()),
            most,
        }
    }
}

/// What the model does with a connection it has just accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// Serve it.
    In,
    /// Serve it, and shut the listener: the count is reached.
    Last,
    /// Close it now: another address, or past the count.
    Away,
}

/// A door as the running model keeps it: its count of connections let in.
#[derive(Debug)]
pub struct Doorkeeper {
    door: Door,
    admitted: AtomicU64,
}

impl Doorkeeper {
    pub fn new(door: Door) -> Doorkeeper {
        Doorkeeper {
            door,
            admitted: AtomicU64::new(0),
        }
    }

    /// What to do with a connection from `from` (once per accepted connection: an `In` or
    /// `Last` is counted).
    pub fn entry(&self, from: IpAddr) -> Entry {
        if self.door.peer.is_some_and(|p| p != from.to_canonical()) {
            return Entry::Away;
        }
        let Some(most) = self.door.most else {
            return Entry::In;
        };
        let n = self.admitted.fetch_add(1, Ordering::AcqRel) + 1;
        match n.cmp(&most) {
            std::cmp::Ordering::Less => Entry::In,
            std::cmp::Ordering::Equal => Entry::Last,
            std::cmp::Ordering::Greater => Entry::Away,
        }
    }

    /// Whether the count is reached (the listener is, or is about to be, shut).
    pub fn is_shut(&self) -> bool {
        self.door
            .most
            .is_some_and(|most| self.admitted.load(Ordering::Acquire) >= most)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_driver_is_let_in_and_the_count_shuts_the_door() {
        let driver: IpAddr = "127.0.0.1".parse().unwrap();
        let keeper = Doorkeeper::new(Door::only(driver, Some(2)));
        // The driver as a dual-stack socket sees it.
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(keeper.entry("127.0.0.2".parse().unwrap()), Entry::Away);
        assert!(!keeper.is_shut(), "a stranger is not counted");
        assert_eq!(keeper.entry(mapped), Entry::In);
        assert_eq!(keeper.entry(driver), Entry::Last);
        assert!(keeper.is_shut());
        assert_eq!(keeper.entry(driver), Entry::Away, "past the count");
    }

    #[test]
    fn on_one_host_anyone_is_let_in_without_a_count() {
        let keeper = Doorkeeper::new(Door::ANYONE);
        for from in ["127.0.0.2", "::1", "10.1.2.3"] {
            assert_eq!(keeper.entry(from.parse().unwrap()), Entry::In);
        }
        assert!(!keeper.is_shut());
    }
}
