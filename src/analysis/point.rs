//! One measured point as the report sees it, read from a run record through the readers'
//! view of it (`record::view`: fields added by later versions are ignored, fields older ones
//! lack read as absent).
use crate::record::crr::CrrReport;
use crate::record::view::ZerocopyView;
use crate::record::view::{DatagramCounts, DatagramsView, RunView, SideView, StatisticsView};
use crate::record::Metric;
use crate::stats::Summary;
use serde_json::Number;

/// p50 and p99 of the point's latency, with what the latency means for its pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Latency {
    pub p50_ns: f64,
    pub p99_ns: f64,
    /// The smallest (the seeds' statistic); over visits, the smallest of any visit.
    pub min_ns: Option<f64>,
}

/// MSG_ZEROCOPY completions over a run and how many of them the kernel copied anyway.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZerocopyCounts {
    pub completions: f64,
    pub copied: f64,
    /// Messages in one flow's buffer pool (a buffer waits for its completion before reuse).
    pub pool_messages: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Line of results.jsonl the record came from (1-based).
    pub line: usize,
    /// mechanism/pattern/size/threads, as `bytepath sweep` names points.
    pub key: String,
    pub mechanism: String,
    /// The transport, when it sets this point's series apart (not tcp, or an ipc study where
    /// the transport is the variable).
    pub transport: Option<String>,
    /// An ipc study's pipe buffer or shm ring (bytes the kernel granted): with `--pipe-sizes`
    /// two points differ only in it.
    pub buffer: Option<f64>,
    pub pattern: String,
    pub spin: bool,
    /// `--bidir`: the flows carried data both ways at once; the figures are the forward
    /// direction's (its receiver's), the record's `bidir` block has both.
    pub bidir: bool,
    /// The receive path (`--recv`), when it is not plain recv.
    pub recv: Option<String>,
    pub size: f64,
    pub threads: f64,
    pub status: String,
    /// Why a skipped point was not run (what the kernel lacks).
    pub skipped_reason: Option<String>,
    /// The statistics block's summary: receiver Gbit/s for stream, client round trips/s for rr.
    pub headline: Option<Summary>,
    pub headline_metric: String,
    /// Why `headline` is missing (no statistics block, or its own stated reason).
    pub headline_missing: Option<String>,
    /// Each headline visit's figure with its round (points measured in visits); empty for a
    /// point of one contiguous stretch (schema 1, or `bytepath run`).
    pub visits: Vec<(usize, f64)>,
    /// Each visit's sending-side CPU-ns per payload byte with its round, where the record
    /// kept them (`statistics.visits.sender_cpu_ns_per_byte`).
    pub sender_cpu_visits: Vec<(usize, f64)>,
    /// Receiver (stream) or client (rr) throughput from the side figures.
    pub throughput_gbps: f64,
    /// Receiver (stream) or client (rr) messages per second; for rr, round trips per second.
    pub messages_per_s: f64,
    pub latency: Option<Latency>,
    pub sender_cpu_ns_per_byte: Option<f64>,
    pub receiver_cpu_ns_per_byte: Option<f64>,
    /// Both sides' cycles over the receiver's payload bytes.
    pub cycles_per_byte: Metric,
    pub l1d_misses_per_kib: Metric,
    pub llc_misses_per_kib: Metric,
    /// Voluntary and involuntary switches of both sides per MiB of payload.
    pub context_switches_per_mib: Option<f64>,
    pub zerocopy: Option<ZerocopyCounts>,
    /// Datagram transports: the share of datagrams lost, both ways (percent).
    pub datagrams_lost_percent: Option<f64>,
    /// config.where_sides_run: loopback, veth or across hosts.
    pub where_sides_run: String,
    pub ci_target_met: Option<bool>,
    pub stop_reason: Option<String>,
    /// `--pattern crr`: the record's split of a transaction and its cost per side.
    pub crr: Option<CrrReport>,
    /// Made on a sink (`--sink`): the sender is the only side, and its figures are the point's.
    pub sink: bool,
    /// The sink block (`--sink`): the peer veth's counters against the bytes sent, and the
    /// softirq on the sending CPUs.
    pub sink_report: Option<crate::record::sink::SinkReport>,
    /// `--under-load N`: the load beside the rr flow, and each visit's rr latency.
    pub under_load: UnderLoad,
}

/// What the under-load answer reads of a point.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UnderLoad {
    /// The load flows beside the rr flow; `None` for a point measured without a load.
    pub flows: Option<usize>,
    /// Each visit's rr client latency p50 and p99 (ns) with its round, where kept.
    pub p50_visits: Vec<(usize, f64)>,
    pub p99_visits: Vec<(usize, f64)>,
    /// The load's achieved Gbit/s (the record's `under_load.gbps`); `None` without a load.
    pub gbps: Option<f64>,
}

impl Point {
    /// A point whose figures are a clean result (not failed, not interrupted).
    pub fn completed(&self) -> bool {
        self.status == "completed"
    }

    /// The legend name: the mechanism, with its transport when that sets it apart
    /// ("send over pipe"), marked when the receiver busy-polled.
    pub fn series(&self) -> String {
        let mut name = self.mechanism.clone();
        if let Some(t) = &self.transport {
            name += &format!(" over {t}");
        }
        if let Some(b) = self.buffer {
            name += &format!(" ({} buffer)", super::size_label(b));
        }
        if let Some(recv) = &self.recv {
            name += &format!(" ({recv})");
        }
        if self.spin {
            name += " (spin)";
        }
        if self.bidir {
            name += " (bidir)";
        }
        if self.sink {
            name += " on a sink";
        }
        if let Some(n) = self.under_load.flows {
            name += &format!(" (under load ×{n})");
        }
        name
    }

    /// The headline figure shown on plots: the CI mean when there is one.
    pub fn headline_value(&self) -> f64 {
        match &self.headline {
            Some(s) => s.mean,
            None if self.pattern == "rr" => self.messages_per_s,
            None => self.throughput_gbps,
        }
    }

    /// Stream throughput in Gbit/s with its CI when the statistics block measured it.
    pub fn throughput_with_ci(&self) -> (f64, Option<Summary>) {
        match &self.headline {
            Some(s) if self.headline_metric == "throughput_gbps" => (s.mean, Some(*s)),
            _ => (self.throughput_gbps, None),
        }
    }

    /// Both sides' CPU-ns per byte, summed (on a sink the sender's, its one side).
    pub fn cpu_ns_per_byte(&self) -> Option<f64> {
        let receiver = match self.sink {
            true => 0.0,
            false => self.receiver_cpu_ns_per_byte?,
        };
        Some(self.sender_cpu_ns_per_byte? + receiver)
    }
}

/// A configuration field as text; the error names it.
fn text(v: &Option<String>, name: &str) -> Result<String, String> {
    v.clone()
        .ok_or_else(|| format!("config.{name} is missing or not text"))
}

/// A field as a number; the error names it.
fn number(v: &Option<Number>, name: &str) -> Result<f64, String> {
    v.as_ref()
        .and_then(Number::as_f64)
        .ok_or_else(|| format!("{name} is missing or not a number"))
}

/// Two sides with no figures: what a failed or interrupted point without sides reads as.
static NO_SIDES: [SideView; 2] = [SideView::EMPTY, SideView::EMPTY];

/// The record's two sides (sender and receiver), or on a sink its one (the sender); a point
/// that did not complete may lack them.
fn sides_of(record: &RunView, completed: bool) -> Result<&[SideView], String> {
    let count = if record.config().is_sink() { 1 } else { 2 };
    match record.sides.as_deref().filter(|s| s.len() == count) {
        Some(sides) => Ok(sides),
        None if !completed => Ok(&NO_SIDES[..count]),
        None if count == 1 => Err("sides must hold one side (the sender) on a sink".into()),
        None => Err("sides must hold two sides (sender and receiver)".into()),
    }
}

/// The transport, named only where it is not a sweep's tcp (ipc names every one).
fn transport_shown(record: &RunView) -> Option<String> {
    let transport = record.config().transport.as_deref().unwrap_or("tcp");
    (transport != "tcp" || is_ipc(record)).then(|| transport.to_string())
}

fn is_ipc(record: &RunView) -> bool {
    record.command.as_deref() == Some("ipc")
}

/// The sweep point's key, or one made of the point's parts for records without it.
fn key_of(record: &RunView, mechanism: &str, pattern: &str, size: f64, threads: f64) -> String {
    record.key().map_or_else(
        || format!("{mechanism}/{pattern}/{size}/{threads}"),
        str::to_string,
    )
}

/// Reads a point from one record; `line` is its line in results.jsonl. Errors name the field.
pub fn from_record(record: &RunView, line: usize) -> Result<Point, String> {
    let config = record.config();
    let mechanism = text(&config.mechanism, "mechanism")?;
    let pattern = text(&config.pattern, "pattern")?;
    let size = number(&config.message_size_bytes, "config.message_size_bytes")?;
    let threads = number(&config.threads, "config.threads")?;
    // A failed or interrupted point may lack figures; it only appears in the table.
    let completed = record.completed();
    let sides = sides_of(record, completed)?;
    // rr's figures are the client's (side 0), a stream's the receiver's (side 1), a sink's the
    // sender's (its one side).
    let main_side = &sides[usize::from(pattern != "rr").min(sides.len() - 1)];
    let figure = |name: &str, value: Option<f64>| match value {
        Some(v) => Ok(v),
        None if !completed => Ok(0.0),
        None => Err(format!("sides: {name} is missing or not a number")),
    };
    let (headline, headline_metric, headline_missing) = headline(record);
    let statistics = record.statistics();
    Ok(Point {
        line,
        key: key_of(record, &mechanism, &pattern, size, threads),
        spin: config.spin.unwrap_or(false),
        bidir: record.bidir.is_some(),
        recv: config.recv.clone().filter(|r| r != "recv"),
        buffer: is_ipc(record)
            .then_some(config.channel_buffer_bytes)
            .flatten(),
        transport: transport_shown(record),
        status: record.status.clone().unwrap_or_else(|| "unknown".into()),
        skipped_reason: record.skipped_reason.clone(),
        headline,
        headline_metric,
        headline_missing,
        visits: statistics.map_or_else(Vec::new, visits),
        sender_cpu_visits: statistics.map_or_else(Vec::new, sender_cpu_visits),
        throughput_gbps: figure("throughput_gbps", main_side.throughput_gbps)?,
        messages_per_s: figure("messages_per_s", main_side.messages_per_s)?,
        latency: latency(main_side),
        sender_cpu_ns_per_byte: sides[0].cpu_ns_per_byte,
        receiver_cpu_ns_per_byte: sides.get(1).and_then(|s| s.cpu_ns_per_byte),
        sink: config.is_sink(),
        sink_report: record.sink.clone(),
        cycles_per_byte: per_byte(sides, "cycles", 1.0),
        l1d_misses_per_kib: per_byte(sides, "l1d_load_misses", 1024.0),
        llc_misses_per_kib: per_byte(sides, "llc_load_misses", 1024.0),
        context_switches_per_mib: switches_per_mib(sides),
        zerocopy: record.zerocopy.as_ref().and_then(zerocopy_counts),
        datagrams_lost_percent: record.datagrams.as_ref().and_then(datagrams_lost_percent),
        where_sides_run: config.where_sides_run.clone().unwrap_or_default(),
        ci_target_met: statistics.and_then(|s| s.ci_target_met),
        stop_reason: statistics.and_then(|s| s.stop_reason.clone()),
        crr: record.crr.clone(),
        under_load: under_load(record, statistics),
        mechanism,
        pattern,
        size,
        threads,
    })
}

fn headline(record: &RunView) -> (Option<Summary>, String, Option<String>) {
    let statistics = record.statistics();
    let metric = statistics
        .and_then(|s| s.metric.clone())
        .unwrap_or_else(|| {
            if record.config().pattern() == "rr" {
                "round_trips_per_s".into()
            } else {
                "throughput_gbps".into()
            }
        });
    let Some(statistics) = statistics else {
        let why = "the record has no statistics block (no confidence interval)";
        return (None, metric, Some(why.into()));
    };
    match statistics.summary {
        Some(summary) => (Some(summary), metric, None),
        None => {
            let why = statistics
                .summary_unavailable_reason
                .as_deref()
                .unwrap_or("the statistics block has no summary");
            (None, metric, Some(why.to_string()))
        }
    }
}

/// (round, value) of each visit, when the statistics come from visits.
fn visits(statistics: &StatisticsView) -> Vec<(usize, f64)> {
    if statistics.basis.as_deref() != Some("visits") {
        return Vec::new();
    }
    match (&statistics.visits, &statistics.values) {
        (Some(v), Some(values)) => by_round(&v.rounds, values),
        _ => Vec::new(),
    }
}

/// (round, sender CPU-ns per byte) of each visit that kept it.
fn sender_cpu_visits(statistics: &StatisticsView) -> Vec<(usize, f64)> {
    match &statistics.visits {
        Some(v) => by_round(&v.rounds, &v.sender_cpu_ns_per_byte),
        None => Vec::new(),
    }
}

/// The record's load (`--under-load`) and each visit's rr client latency p50 and p99.
fn under_load(record: &RunView, statistics: Option<&StatisticsView>) -> UnderLoad {
    let visits = statistics.and_then(|s| s.visits.as_ref());
    let of = |values: fn(&crate::stats::point::VisitStatistics) -> &Vec<Option<f64>>| {
        visits.map_or_else(Vec::new, |v| by_round(&v.rounds, values(v)))
    };
    UnderLoad {
        flows: record.under_load.as_ref().map(|l| l.flows),
        p50_visits: of(|v| &v.client_latency_p50_ns),
        p99_visits: of(|v| &v.client_latency_p99_ns),
        gbps: record.under_load.as_ref().map(|l| l.gbps),
    }
}

/// Per-visit `values` with their `rounds` (two arrays in visit order); a null value drops its
/// visit.
fn by_round(rounds: &[usize], values: &[Option<f64>]) -> Vec<(usize, f64)> {
    rounds
        .iter()
        .zip(values)
        .filter_map(|(r, v)| Some((*r, (*v)?)))
        .collect()
}

fn latency(side: &SideView) -> Option<Latency> {
    let l = side.latency_ns.as_ref()?;
    Some(Latency {
        p50_ns: l.p50?,
        p99_ns: l.p99?,
        min_ns: l.min,
    })
}

/// A counter of a side, or `Unavailable` with the record's stated reason.
pub fn metric(side: &SideView, key: &str) -> Metric {
    side.counters
        .as_ref()
        .and_then(|set| set.get(key))
        .cloned()
        .unwrap_or_else(|| Metric::Unavailable("not in the record".into()))
}

/// A counter summed over both sides, per byte (or per KiB with `scale` 1024) of the
/// receiver's payload.
fn per_byte(sides: &[SideView], counter: &str, scale: f64) -> Metric {
    let mut total = 0.0;
    for side in sides {
        match metric(side, counter) {
            Metric::Value(v) => total += v,
            missing => return missing,
        }
    }
    match measured_payload(sides) {
        Some(bytes) if bytes > 0.0 => Metric::Value(total * scale / bytes),
        _ => Metric::Unavailable("no payload bytes measured".into()),
    }
}

/// The payload the per-byte figures divide by: the receiver's, or on a sink the sender's.
fn measured_payload(sides: &[SideView]) -> Option<f64> {
    sides.last()?.payload_bytes
}

fn switches_per_mib(sides: &[SideView]) -> Option<f64> {
    let mut switches = 0.0;
    for side in sides {
        switches += side.voluntary_context_switches?;
        switches += side.involuntary_context_switches?;
    }
    let bytes = measured_payload(sides).filter(|b| *b > 0.0)?;
    Some(switches * (1 << 20) as f64 / bytes)
}

fn datagrams_lost_percent(d: &DatagramsView) -> Option<f64> {
    let ways = [d.forward, d.back];
    let count = |f: fn(&DatagramCounts) -> Option<f64>| -> f64 {
        ways.iter().flatten().filter_map(f).sum()
    };
    let sent = count(|w| w.sent);
    (sent > 0.0).then(|| 100.0 * count(|w| w.lost) / sent)
}

fn zerocopy_counts(z: &ZerocopyView) -> Option<ZerocopyCounts> {
    Some(ZerocopyCounts {
        completions: z.completions?,
        copied: z.copied?,
        pool_messages: z.pool_messages,
    })
}

/// `from_record` of a record given as JSON (the tests' synthetic records).
#[cfg(test)]
pub fn from_value(record: &serde_json::Value, line: usize) -> Result<Point, String> {
    let view = serde::Deserialize::deserialize(record).map_err(|e| e.to_string())?;
    from_record(&view, line)
}

#[cfg(test)]
mod tests {
    use super::from_value as from_record;
    use super::*;
    use crate::analysis::synthetic::{record, Shape};
    use serde_json::Value;

    #[test]
    fn a_stream_record_yields_its_receiver_throughput_and_ci() {
        let r = record(&Shape::stream("gather", 4096, 1, 10.0));
        let p = from_record(&r, 3).unwrap();
        assert_eq!((p.line, p.key.as_str()), (3, "gather/stream/4096/1"));
        let s = p.headline.unwrap();
        assert!(s.ci95_low < 10.0 && 10.0 < s.ci95_high);
        assert_eq!(p.throughput_with_ci().0, s.mean);
    }

    #[test]
    fn missing_statistics_are_stated_not_fatal() {
        let mut r = record(&Shape::stream("copy", 4096, 1, 10.0));
        r.as_object_mut().unwrap().remove("statistics");
        let p = from_record(&r, 1).unwrap();
        assert!(p.headline.is_none());
        assert!(p
            .headline_missing
            .as_deref()
            .unwrap()
            .contains("no statistics"));
        assert_eq!(p.throughput_with_ci(), (p.throughput_gbps, None));
    }

    #[test]
    fn counters_without_a_pmu_carry_the_records_reason() {
        let p = from_record(&record(&Shape::stream("copy", 4096, 1, 10.0)), 1).unwrap();
        assert_eq!(p.llc_misses_per_kib, Metric::Unavailable("no PMU".into()));
        assert!(p.context_switches_per_mib.unwrap() > 0.0);
    }

    #[test]
    fn counters_with_a_pmu_are_summed_over_both_sides_per_kib() {
        let mut shape = Shape::stream("copy", 4096, 1, 10.0);
        shape.pmu = true;
        let p = from_record(&record(&shape), 1).unwrap();
        assert!(matches!(p.llc_misses_per_kib, Metric::Value(v) if v > 0.0));
        assert!(matches!(p.cycles_per_byte, Metric::Value(v) if v > 0.0));
    }

    #[test]
    fn a_failed_record_without_sides_is_kept_for_the_table() {
        let mut r = record(&Shape::stream("copy", 4096, 1, 10.0));
        r["status"] = "failed".into();
        r["sides"] = Value::Null;
        let p = from_record(&r, 1).unwrap();
        assert!(!p.completed());
        r["status"] = "completed".into();
        assert!(from_record(&r, 1).unwrap_err().contains("two sides"));
    }

    #[test]
    fn a_record_without_a_mechanism_is_rejected_with_the_field_name() {
        let mut r = record(&Shape::stream("copy", 4096, 1, 10.0));
        r["config"]["mechanism"] = Value::Null;
        assert!(from_record(&r, 1).unwrap_err().contains("config.mechanism"));
    }
}
