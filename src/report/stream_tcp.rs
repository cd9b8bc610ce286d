//! `--json-stream`'s TCP_INFO: each reading the sampler took at the start of the measured
//! phase, at a slice boundary or at the stop, per flow and side, in a few fields. The sampler
//! hands its readings over only when the run has stopped (it keeps them in its own thread, off
//! the per-message path), so they go out with the run's point or visit line, after its slice
//! lines, under a key that says so: `tcp_info_per_slice_after_run`.
use crate::record::tcp::{TcpInfoReport, TcpSide};
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// The key on a point or visit line, and its sibling that says why there are no readings.
pub const KEY: &str = "tcp_info_per_slice_after_run";
pub const REASON_KEY: &str = "tcp_info_per_slice_after_run_unavailable_reason";

/// What the readings are, said on the line beside them.
const WHEN: &str = "TCP_INFO read at the start of the measured phase, at every slice boundary \
     and at the stop; sent with this line after the run, since the sampler hands its readings \
     over when the run stops; retrans and the busy and limited times are the kernel's running \
     totals, the others its values at the reading";

/// The block of a record as the stream needs it: the report, or why there is none.
#[derive(Deserialize)]
struct Block {
    #[serde(default)]
    tcp_info: Option<TcpInfoReport>,
    #[serde(default)]
    tcp_info_unavailable_reason: Option<String>,
}

/// The readings' fields (or the reason) to add to a line carrying `record`; nothing for a
/// record that is not a run record's shape (another study's).
pub fn fields(record: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let Ok(block) = Block::deserialize(record) else {
        return out;
    };
    match (block.tcp_info, block.tcp_info_unavailable_reason) {
        (Some(report), _) => {
            out.insert(KEY.into(), readings(&report));
        }
        (None, Some(why)) => {
            out.insert(REASON_KEY.into(), json!(why));
        }
        (None, None) => {}
    }
    out
}

/// One entry per reading: when, and each flow side's values then.
fn readings(report: &TcpInfoReport) -> Value {
    let count = report.flows.iter().map(|s| s.series.at_ms.len()).max();
    let readings: Vec<Value> = (0..count.unwrap_or(0))
        .map(|i| {
            let sides: Vec<&TcpSide> = report
                .flows
                .iter()
                .filter(|s| i < s.series.at_ms.len())
                .collect();
            json!({
                "at_ms": sides.first().map(|s| s.series.at_ms[i]),
                "flows": sides.iter().map(|s| side_at(s, i)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "when": WHEN, "readings": readings })
}

/// A side's values at reading `i`; a field the kernel does not give is `null`.
fn side_at(side: &TcpSide, i: usize) -> Value {
    let f = &side.series;
    let at = |v: &Option<Vec<u64>>| v.as_ref().and_then(|v| v.get(i).copied());
    json!({
        "flow": side.flow,
        "side": side.side,
        "retrans": at(&f.total_retrans),
        "cwnd": at(&f.snd_cwnd),
        "rtt_us": at(&f.rtt_us),
        "delivery_rate_bytes_per_s": at(&f.delivery_rate_bytes_per_s),
        "busy_us": at(&f.busy_time_us),
        "rwnd_limited_us": at(&f.rwnd_limited_us),
        "sndbuf_limited_us": at(&f.sndbuf_limited_us),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reading_carries_every_sides_values_at_it() {
        let record = json!({"tcp_info": {
        "sampled": "s",
        "flows": [
            {"flow": 0, "side": "sender", "rcvbuf_bytes": null, "sndbuf_bytes": null,
             "series": {"at_ms": [0.0, 100.0], "total_retrans": [1, 3], "snd_cwnd": [10, 20],
                        "rtt_us": [50, 60], "busy_time_us": null},
             "measured": {"elapsed_ms": 100.0}, "missing_fields": ["tcpi_busy_time"]},
            {"flow": 0, "side": "receiver", "rcvbuf_bytes": null, "sndbuf_bytes": null,
             "series": {"at_ms": [0.0], "total_retrans": [0]},
             "measured": {"elapsed_ms": 0.0}, "missing_fields": []}
        ]}});
        let out = fields(&record);
        let r = &out[KEY]["readings"];
        assert_eq!(r.as_array().unwrap().len(), 2);
        assert_eq!(r[1]["at_ms"], 100.0);
        assert_eq!(r[0]["flows"].as_array().unwrap().len(), 2);
        assert_eq!(
            r[1]["flows"].as_array().unwrap().len(),
            1,
            "one side stopped early"
        );
        let sender = &r[1]["flows"][0];
        assert_eq!(
            (sender["retrans"].as_u64(), sender["cwnd"].as_u64()),
            (Some(3), Some(20))
        );
        assert_eq!(
            sender["busy_us"],
            Value::Null,
            "the kernel gave no busy time"
        );
    }

    #[test]
    fn no_block_gives_its_reason_and_another_shape_gives_nothing() {
        let out = fields(&json!({"tcp_info_unavailable_reason": "udp flows are not tcp"}));
        assert_eq!(out[REASON_KEY], "udp flows are not tcp");
        assert!(!out.contains_key(KEY));
        assert!(fields(&json!({"tcp_info": 5})).is_empty());
        assert!(fields(&json!({"transfer": {}})).is_empty());
    }
}
