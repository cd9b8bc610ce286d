//! `--percentiles` in a mesh: the source host measures and writes the record with its own
//! process's set, so the mesh reads the chosen set again from each side's whole histogram,
//! which the record carries, before it saves the record; and the report shows, per rr point,
//! each pair's chosen percentiles over all its visits' samples (their histograms merged)
//! where the study chose a set other than today's.
use crate::measure::histogram::LatencyHistogram;
use crate::measure::percentiles::{chosen, label, PercentileValue, DEFAULT};
use crate::record::view::RunView;
use crate::report::study::Table;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The record with each side's `latency_percentiles_ns` read from its `latency_histogram_hdr`
/// at this command's `--percentiles`; a side without a histogram (a host's bytepath older
/// than it) keeps what its host wrote, and a record of another shape is kept as it came.
pub(super) fn read_chosen(record: Value) -> Value {
    let Ok(mut typed) = serde_json::from_value::<RecordSides>(record.clone()) else {
        return record;
    };
    for side in &mut typed.sides {
        let histogram = side.latency_histogram_hdr.as_deref();
        if let Some(Ok(h)) = histogram.map(LatencyHistogram::from_hdr_base64) {
            side.latency_percentiles_ns = Some(chosen().of(&h));
        }
    }
    serde_json::to_value(typed).unwrap_or(record)
}

/// A record as the mesh patches it: its sides' two distribution fields typed, every other
/// field carried through as it came.
#[derive(Serialize, Deserialize)]
struct RecordSides {
    sides: Vec<SideDistribution>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
struct SideDistribution {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    latency_histogram_hdr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    latency_percentiles_ns: Option<Vec<PercentileValue>>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

/// The rr point `key`'s pairs (rows `src → dst`), each with its chosen percentiles read from
/// its completed runs' client histograms merged; `None` where no run carries a set other
/// than today's.
pub(super) fn table(key: &str, records: &[RunView]) -> Option<Table> {
    let runs: Vec<&RunView> = records
        .iter()
        .filter(|r| r.completed() && r.config().point_key() == key)
        .collect();
    let set: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.side(0)?.latency_percentiles_ns.as_ref())
        .find(|list| !list.is_empty())?
        .iter()
        .map(|v| v.percentile)
        .collect();
    if set == DEFAULT {
        return None;
    }
    let mut pairs: Vec<(String, LatencyHistogram)> = Vec::new();
    for r in runs {
        let pair = format!(
            "{} → {}",
            r.src.as_deref().unwrap_or("?"),
            r.dst.as_deref().unwrap_or("?")
        );
        let hdr = r.side(0).and_then(|s| s.latency_histogram_hdr.as_deref());
        let Some(Ok(h)) = hdr.map(LatencyHistogram::from_hdr_base64) else {
            continue;
        };
        match pairs.iter_mut().find(|(p, _)| *p == pair) {
            Some((_, all)) => all.merge(&h),
            None => pairs.push((pair, h)),
        }
    }
    let rows = pairs
        .iter()
        .map(|(pair, h)| {
            let mut row = vec![pair.clone()];
            row.extend(
                set.iter()
                    .map(|p| format!("{:.2}", h.value_at_quantile(p / 100.0) as f64 / 1e3)),
            );
            row
        })
        .collect::<Vec<_>>();
    let header = std::iter::once("pair".to_string())
        .chain(set.iter().map(|&p| format!("{} µs", label(p))))
        .collect();
    Some(Table {
        marked: vec![false; rows.len()],
        header,
        rows,
    })
}

/// The point's percentiles table in report.md and report.html (both empty where `table` has
/// none).
pub(super) fn section(key: &str, records: &[RunView]) -> (String, String) {
    let Some(t) = table(key, records) else {
        return (String::new(), String::new());
    };
    let intro = "Round-trip percentiles per pair (--percentiles), each read from the pair's \
                 completed visits' client histograms merged:";
    (
        format!("\n{intro}\n\n{}", t.markdown()),
        format!(
            "<p>{}</p>\n{}",
            crate::report::plot::escape(intro),
            t.html()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn histogram(samples: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for &s in samples {
            h.record(s);
        }
        h
    }

    fn run(src: &str, dst: &str, h: &LatencyHistogram, set: &[f64]) -> Value {
        let list: Vec<Value> = set
            .iter()
            .map(|p| json!({"percentile": p, "ns": 0}))
            .collect();
        json!({
            "src": src, "dst": dst, "status": "completed",
            "config": {"mechanism": "send", "pattern": "rr", "message_size_bytes": 64,
                       "threads": 1, "transport": "tcp"},
            "sides": [{"latency_histogram_hdr": h.to_hdr_base64(), "latency_percentiles_ns": list}, {}],
        })
    }

    #[test]
    fn the_chosen_set_is_read_again_from_each_sides_histogram() {
        let h = histogram(&[1000, 2000, 3000]);
        let record = read_chosen(run("a", "b", &h, &[50.0]));
        let want = serde_json::to_value(chosen().of(&h)).unwrap();
        assert_eq!(record["sides"][0]["latency_percentiles_ns"], want);
        assert!(record["sides"][1].get("latency_percentiles_ns").is_none());
    }

    #[test]
    fn a_pairs_percentiles_are_of_all_its_visits_samples() {
        let set = [50.0, 99.99];
        let (fast, slow) = (histogram(&[1000; 50]), histogram(&[1000, 900_000]));
        let records: Vec<RunView> = [run("a", "b", &fast, &set), run("a", "b", &slow, &set)]
            .into_iter()
            .chain([run("b", "a", &fast, &set)])
            .map(|r| serde_json::from_value(r).unwrap())
            .collect();
        let t = table("send/rr/64/1", &records).expect("a set other than today's");
        assert_eq!(t.header, ["pair", "p50 µs", "p99.99 µs"]);
        let mut all = histogram(&[1000; 50]);
        all.merge(&slow);
        let tail = format!("{:.2}", all.value_at_quantile(0.9999) as f64 / 1e3);
        assert_eq!(t.rows[0], ["a → b", "1.00", tail.as_str()]);
        assert_eq!(t.rows[1][0], "b → a");
        let today: Vec<RunView> =
            vec![serde_json::from_value(run("a", "b", &fast, &DEFAULT)).unwrap()];
        assert!(table("send/rr/64/1", &today).is_none());
    }
}
