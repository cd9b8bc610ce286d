//! A run record as its readers see it (`report`, `export`, `compare`, the progress lines):
//! the blocks they read, typed, every field optional. The readers take records of every
//! schema this build reads (`compat`), records of points that failed before they had sides or
//! statistics, and the hand-made records of the tests; `RunRecord` (what the studies write and
//! `--resume` reads back) holds the invariants of a finished run, so it would refuse them. Serde
//! skips the blocks no reader asks for (counters' derivations, environment details, verify)
//! without building them. A figure a reader shows as the record wrote it (a count in a key or a
//! table) is kept as a `serde_json::Number`, so it prints as written (`4096`, not `4096.0`).
use crate::measure::profile::Profile;
use crate::record::copies::CopiesReport;
use crate::record::crr::CrrReport;
use crate::record::MetricSet;
use crate::stats::point::VisitStatistics;
use crate::stats::{Outliers, Summary};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Number;

/// A value as JSON text, `null` when absent: how a record's field reads in a line or a key.
pub fn shown<T: Serialize>(value: &Option<T>) -> String {
    serde_json::to_string(value).expect("a record's field serializes")
}

/// A block read only where it has the shape this build writes; an older or hand-made block of
/// another shape reads as absent instead of failing the whole record.
pub fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let block = Option::<serde_json::Value>::deserialize(deserializer)?;
    Ok(block.and_then(|b| T::deserialize(b).ok()))
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct RunView {
    pub schema_version: Option<u64>,
    pub command: Option<String>,
    pub status: Option<String>,
    pub errors: Option<Vec<String>>,
    pub skipped_reason: Option<String>,
    pub sweep_point: Option<PlaceView>,
    pub visit: Option<VisitView>,
    /// `bytepath mesh`: the pair, and where the run sits in the mesh.
    pub src: Option<String>,
    pub dst: Option<String>,
    pub mesh: Option<MeshView>,
    pub config: Option<ConfigView>,
    pub environment: Option<EnvironmentView>,
    pub sides: Option<Vec<SideView>>,
    pub statistics: Option<StatisticsView>,
    pub verify: Option<VerifyView>,
    pub zerocopy: Option<ZerocopyView>,
    pub datagrams: Option<DatagramsView>,
    #[serde(deserialize_with = "lenient")]
    pub crr: Option<CrrReport>,
    /// The TCP_INFO block of a tcp point (absent from records written before it).
    #[serde(default, deserialize_with = "lenient")]
    pub tcp_info: Option<crate::record::tcp::TcpInfoReport>,
    pub bidir: Option<BidirView>,
    /// `--count-copies`: what the tracepoints counted in the point's copies visit.
    #[serde(deserialize_with = "lenient")]
    pub copies: Option<CopiesReport>,
    /// `--sink`: where the sender's bytes went and what the sink cost.
    #[serde(deserialize_with = "lenient")]
    pub sink: Option<crate::record::sink::SinkReport>,
    /// `--under-load`: the load beside the rr flow and what it achieved.
    #[serde(deserialize_with = "lenient")]
    pub under_load: Option<crate::record::under_load::UnderLoadReport>,
}

impl RunView {
    pub fn status(&self) -> &str {
        self.status.as_deref().unwrap_or("")
    }

    pub fn completed(&self) -> bool {
        self.status() == "completed"
    }

    /// The errors the record lists (none when it lists none).
    pub fn errors(&self) -> &[String] {
        self.errors.as_deref().unwrap_or_default()
    }

    /// `sweep_point.key`, the point's identity across sweeps, where the record has one.
    pub fn key(&self) -> Option<&str> {
        self.sweep_point.as_ref()?.key.as_deref()
    }

    /// The configuration (all fields absent when the record has none).
    pub fn config(&self) -> &ConfigView {
        static NONE: ConfigView = ConfigView::EMPTY;
        self.config.as_ref().unwrap_or(&NONE)
    }

    /// Side `index` (0: sender or client, 1: receiver or server), where the record has it.
    pub fn side(&self, index: usize) -> Option<&SideView> {
        self.sides.as_ref()?.get(index)
    }

    pub fn statistics(&self) -> Option<&StatisticsView> {
        self.statistics.as_ref()
    }
}

/// `sweep_point`: where a point sits in its study.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PlaceView {
    pub key: Option<String>,
    pub index: Option<u64>,
    pub total: Option<u64>,
}

/// `visit`: which point, round and purpose a visit was (its interference block is read with
/// the folder's other visits, `probe::watch::visit_blocks`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct VisitView {
    pub key: Option<String>,
    pub round: Option<u64>,
    pub kind: Option<String>,
    pub seed: Option<u64>,
}

/// `mesh`: which visit of how many a mesh run was.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MeshView {
    pub visit: Option<Number>,
    pub visits: Option<Number>,
}

/// `config`: what a point is.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ConfigView {
    pub transport: Option<String>,
    pub mechanism: Option<String>,
    pub pattern: Option<String>,
    pub message_size_bytes: Option<Number>,
    pub threads: Option<Number>,
    pub channel_buffer_bytes: Option<f64>,
    pub duration_s: Option<f64>,
    pub warmup_s: Option<f64>,
    pub pin: Option<String>,
    pub placement: Option<Vec<FlowView>>,
    pub recv_mode: Option<String>,
    pub recv: Option<String>,
    pub spin: Option<bool>,
    pub counters: Option<String>,
    pub where_sides_run: Option<String>,
    pub network: Option<NetworkView>,
}

impl ConfigView {
    const EMPTY: ConfigView = ConfigView {
        transport: None,
        mechanism: None,
        pattern: None,
        message_size_bytes: None,
        threads: None,
        channel_buffer_bytes: None,
        duration_s: None,
        warmup_s: None,
        pin: None,
        placement: None,
        recv_mode: None,
        recv: None,
        spin: None,
        counters: None,
        where_sides_run: None,
        network: None,
    };

    pub fn pattern(&self) -> &str {
        self.pattern.as_deref().unwrap_or("")
    }

    /// A record made on a sink (`--sink`): the sender is its one side.
    pub fn is_sink(&self) -> bool {
        self.network
            .as_ref()
            .is_some_and(|n| n.placement.as_deref() == Some("sink"))
    }

    /// The key that identifies a point across sweeps: mechanism/pattern/size/threads, plus the
    /// transport when it is not tcp.
    pub fn point_key(&self) -> String {
        let key = format!(
            "{}/{}/{}/{}",
            self.mechanism.as_deref().unwrap_or("?"),
            self.pattern.as_deref().unwrap_or("?"),
            shown(&self.message_size_bytes),
            shown(&self.threads)
        );
        match self.transport.as_deref() {
            Some(t) if t != "tcp" => format!("{key}/{t}"),
            _ => key,
        }
    }

    /// Where the flows ran (`loopback`, `netns`, `remote`), where the record says.
    pub fn network_placement(&self) -> Option<&str> {
        self.network.as_ref()?.placement.as_deref()
    }
}

/// One flow's CPUs (`null`: unpinned).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FlowView {
    pub sender_cpu: Option<u64>,
    pub receiver_cpu: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct NetworkView {
    pub placement: Option<String>,
}

/// `environment`: the machine the point ran on.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct EnvironmentView {
    pub hostname: Option<String>,
    pub kernel_release: Option<String>,
    pub cpu_model: Option<String>,
    pub online_cpus: Option<Number>,
    pub allowed_cpus: Option<String>,
    pub pmu_available: Option<bool>,
    pub perf_event_paranoid: Option<Number>,
    pub optmem_max_bytes: Option<f64>,
    pub tcp_wmem_max_bytes: Option<f64>,
    pub loopback_mtu: Option<f64>,
    pub clock: Option<String>,
}

/// One side's figures.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SideView {
    pub side: Option<String>,
    pub payload_bytes: Option<f64>,
    pub throughput_gbps: Option<f64>,
    pub messages_per_s: Option<f64>,
    pub latency_ns: Option<LatencyView>,
    pub cpu_ns_per_byte: Option<f64>,
    pub voluntary_context_switches: Option<f64>,
    pub involuntary_context_switches: Option<f64>,
    pub counters: Option<MetricSet>,
    pub counter_scope: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub profile: Option<Profile>,
    /// The side's whole latency histogram (HdrHistogram V2 deflate, base64); absent in
    /// records older than it.
    pub latency_histogram_hdr: Option<String>,
    /// `--percentiles`: the chosen percentiles read from that histogram.
    pub latency_percentiles_ns: Option<Vec<crate::measure::percentiles::PercentileValue>>,
}

impl SideView {
    /// A side the record does not have.
    pub const EMPTY: SideView = SideView {
        side: None,
        payload_bytes: None,
        throughput_gbps: None,
        messages_per_s: None,
        latency_ns: None,
        cpu_ns_per_byte: None,
        voluntary_context_switches: None,
        involuntary_context_switches: None,
        counters: None,
        counter_scope: None,
        profile: None,
        latency_histogram_hdr: None,
        latency_percentiles_ns: None,
    };
}

/// A side's latency percentiles (ns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LatencyView {
    pub min: Option<f64>,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
}

/// `statistics`: the point's estimate and how it was formed.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StatisticsView {
    /// `visits` or `slices`; absent in schema 1, whose points were one stretch each.
    pub basis: Option<String>,
    pub metric: Option<String>,
    pub values: Option<Vec<Option<f64>>>,
    #[serde(deserialize_with = "lenient")]
    pub summary: Option<Summary>,
    pub summary_unavailable_reason: Option<String>,
    pub ci_target_rel: Option<f64>,
    pub ci_target_met: Option<bool>,
    pub stop_reason: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub outliers: Option<Outliers>,
    pub slice_s: Option<f64>,
    pub slices: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub visits: Option<VisitStatistics>,
}

impl StatisticsView {
    /// The visit means (or slice values), those that are numbers.
    pub fn values(&self) -> Vec<f64> {
        self.values.iter().flatten().flatten().copied().collect()
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct VerifyView {
    pub mismatched_bytes: Option<u64>,
}

/// MSG_ZEROCOPY completions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ZerocopyView {
    pub completions: Option<f64>,
    pub copied: Option<f64>,
    pub pool_messages: Option<f64>,
}

/// Datagrams sent and lost, each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct DatagramsView {
    pub forward: Option<DatagramCounts>,
    pub back: Option<DatagramCounts>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct DatagramCounts {
    pub sent: Option<f64>,
    pub lost: Option<f64>,
}

/// `bidir`: each direction's figures of a `--bidir` point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct BidirView {
    pub forward_gbps: Option<f64>,
    pub reverse_gbps: Option<f64>,
    pub sum_gbps: Option<f64>,
    pub forward_sent_bytes: Option<f64>,
    pub reverse_sent_bytes: Option<f64>,
    pub forward_received_bytes: Option<f64>,
    pub reverse_received_bytes: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failed_point_without_sides_or_statistics_reads() {
        let r: RunView = serde_json::from_value(json!({
            "status": "failed", "sides": null, "errors": ["the server fell over"],
            "config": {"mechanism": "copy", "message_size_bytes": 4096}
        }))
        .unwrap();
        assert!(r.sides.is_none() && r.statistics().is_none());
        assert_eq!(r.errors(), ["the server fell over"]);
        assert_eq!(shown(&r.config().message_size_bytes), "4096");
        assert_eq!(shown(&r.config().threads), "null");
    }

    #[test]
    fn a_block_of_another_shape_reads_as_absent_and_the_rest_still_reads() {
        let r: RunView = serde_json::from_value(json!({
            "status": "completed", "crr": {"connect_us_mean": "soon"},
            "statistics": {"summary": {"mean": 1.0}, "values": [1.0, null, 2.0]}
        }))
        .unwrap();
        assert!(r.crr.is_none());
        let s = r.statistics().unwrap();
        assert!(s.summary.is_none());
        assert_eq!(s.values(), [1.0, 2.0]);
    }

    #[test]
    fn a_field_of_the_wrong_type_is_an_error_that_names_what_was_expected() {
        let e = serde_json::from_value::<RunView>(json!({"status": 3})).unwrap_err();
        assert!(e.to_string().contains("expected a string"), "{e}");
    }
}
