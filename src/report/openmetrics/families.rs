//! The families more than one study's samples use: the same name, unit and help wherever a
//! figure means the same (a sweep's throughput and a file transfer's; a run's latency and a
//! servers point's). A family only one study has stays with that study.
use super::Family;

pub const THROUGHPUT: Family = Family {
    name: "throughput",
    unit: "gbit_per_second",
    help: "Payload moved per second by this side, in 10^9 bits (received whole, for the receiving side)",
};
pub const CPU_PER_BYTE: Family = Family {
    name: "cpu",
    unit: "nanoseconds_per_byte",
    help: "CPU time (user and system) of this side per payload byte",
};
pub const LATENCY_P50: Family = Family {
    name: "latency_p50",
    unit: "seconds",
    help: "Median latency on this side, as the record defines it for the pattern",
};
pub const LATENCY_P99: Family = Family {
    name: "latency_p99",
    unit: "seconds",
    help: "99th percentile latency on this side, as the record defines it for the pattern",
};
