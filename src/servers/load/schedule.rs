//! The open-loop schedule of the load generator (`--rate`): when each request of each
//! connection is intended, so latency counts from the intended time (no coordinated omission).

/// The open-loop schedule: request `seq` of a connection is intended at
/// `start + seq * period + offset`; offsets spread the connections evenly over a period.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    pub period_ns: u64,
    pub start_ns: u64,
}

impl Schedule {
    pub fn new(rate: f64, clients: usize, start_ns: u64) -> Schedule {
        let period_ns = (clients as f64 * 1e9 / rate).round().max(1.0) as u64;
        Schedule {
            period_ns,
            start_ns,
        }
    }

    pub fn offset_ns(&self, id: usize, clients: usize) -> u64 {
        (self.period_ns as u128 * id as u128 / clients as u128) as u64
    }

    pub fn intended_ns(&self, seq: u64, offset_ns: u64) -> u64 {
        self.start_ns + seq * self.period_ns + offset_ns
    }
}
