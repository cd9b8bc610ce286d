//! The `tcp_info` block of run records as OpenMetrics families: per flow and side, the
//! retransmits of the measured phase, the mean round-trip time, congestion window and delivery
//! rate over the readings, and the busy and limited shares. A figure the kernel did not give
//! has no sample (the record names the missing field).
use super::point_labels;
use crate::record::tcp::TcpSide;
use crate::record::view::RunView;
use crate::report::openmetrics::point::{labels, text};
use crate::report::openmetrics::{Family, Sample};

const RETRANSMITS: Family = Family {
    name: "tcp_retransmits",
    unit: "segments",
    help: "Segments this socket retransmitted in the measured phase (tcpi_total_retrans, last reading minus first)",
};
const RTT: Family = Family {
    name: "tcp_rtt",
    unit: "seconds",
    help: "Mean over this socket's TCP_INFO readings of its smoothed round-trip time (tcpi_rtt); for a point measured in visits, the mean over its headline visits",
};
const CWND: Family = Family {
    name: "tcp_cwnd",
    unit: "segments",
    help: "Mean over this socket's TCP_INFO readings of its congestion window (tcpi_snd_cwnd); for a point measured in visits, its first headline visit's readings",
};
const DELIVERY: Family = Family {
    name: "tcp_delivery_rate",
    unit: "bytes_per_second",
    help: "Mean over this socket's TCP_INFO readings of its delivery rate (tcpi_delivery_rate); for a point measured in visits, its first headline visit's readings",
};
const BUSY: Family = Family {
    name: "tcp_busy",
    unit: "ratio",
    help: "Share of the measured phase this socket had data in flight (tcpi_busy_time)",
};
const RWND_LIMITED: Family = Family {
    name: "tcp_rwnd_limited",
    unit: "ratio",
    help: "Share of this socket's busy time limited by the receiver's window (tcpi_rwnd_limited)",
};
const SNDBUF_LIMITED: Family = Family {
    name: "tcp_sndbuf_limited",
    unit: "ratio",
    help: "Share of this socket's busy time limited by the send buffer (tcpi_sndbuf_limited)",
};

/// A figure of one side, and the scale that makes it the family's unit.
type Figure = (Family, fn(&TcpSide) -> Option<f64>, f64);

const FIGURES: [Figure; 7] = [
    (RETRANSMITS, |s| Some(s.measured.retransmits? as f64), 1.0),
    (RTT, |s| s.measured.rtt_us_mean, 1e-6),
    (CWND, |s| mean(&s.series.snd_cwnd), 1.0),
    (DELIVERY, |s| mean(&s.series.delivery_rate_bytes_per_s), 1.0),
    (BUSY, |s| s.measured.busy_share, 1.0),
    (RWND_LIMITED, |s| s.measured.rwnd_limited_share, 1.0),
    (SNDBUF_LIMITED, |s| s.measured.sndbuf_limited_share, 1.0),
];

fn mean(readings: &Option<Vec<u64>>) -> Option<f64> {
    let v = readings.as_ref().filter(|v| !v.is_empty())?;
    Some(v.iter().sum::<u64>() as f64 / v.len() as f64)
}

/// The TCP_INFO samples of `records` (none for records without the block).
pub fn samples(records: &[RunView], extra: &[(&'static str, String)]) -> Vec<Sample> {
    let mut out = Vec::new();
    for (family, figure, scale) in FIGURES {
        for r in records {
            let Some(report) = &r.tcp_info else {
                continue;
            };
            for side in &report.flows {
                let Some(value) = figure(side) else {
                    continue;
                };
                let mut pairs: Vec<(&str, String)> = extra.to_vec();
                pairs.extend(point_labels(records, r));
                pairs.push(("flow", text(&Some(side.flow))));
                pairs.push(("side", side.side.clone()));
                out.push(Sample {
                    family,
                    labels: labels(&pairs),
                    value: value * scale,
                });
            }
        }
    }
    out
}
