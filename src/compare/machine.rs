//! Whether the machine itself changed between two studies: their canaries (canary.jsonl, one
//! per round) compared component by component, new/old cost with Welch's 95 % interval on the
//! log values (the two studies ran at different times, so rounds are not paired). With
//! `--normalize canary` each point's new visit means are multiplied by the cost ratio of the
//! component that matches the point (memcpy for stream, the pipe round trip for rr), so a
//! machine 10 % slower no longer reads as a build 10 % slower.
use crate::probe::canary::{Canary, Component, CANARY_JSONL};
use crate::stats::visits::{welch_ratio, RatioInterval};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A machine change smaller than this is not called one, even when its interval excludes 1.
pub const MACHINE_MARGIN: f64 = 0.03;

/// new/old canary cost per component (above 1: the machine was slower for the new study).
#[derive(Debug, Clone, PartialEq)]
pub struct MachineChange {
    pub components: Vec<(Component, RatioInterval)>,
}

impl MachineChange {
    /// The largest change whose interval excludes 1 and which exceeds the margin, as a share.
    pub fn beyond_margin(&self) -> Option<f64> {
        self.components
            .iter()
            .filter(|(_, r)| r.low > 1.0 || r.high < 1.0)
            .map(|(_, r)| r.ratio - 1.0)
            .filter(|d| d.abs() > MACHINE_MARGIN)
            .max_by(|a, b| a.abs().total_cmp(&b.abs()))
    }

    fn ratio(&self, c: Component) -> Option<f64> {
        self.components
            .iter()
            .find(|(k, _)| *k == c)
            .map(|(_, r)| r.ratio)
    }

    /// The canary cost ratio that matches a point: memcpy for stream, the cross-CPU pipe round
    /// trip for rr (the one-CPU round trip where there is no cross-CPU figure).
    pub fn ratio_for(&self, point: &Value) -> Option<(Component, f64)> {
        let pick = |c: Component| self.ratio(c).map(|r| (c, r));
        match point["config"]["pattern"].as_str()? {
            "stream" => pick(Component::Memcpy),
            "rr" => pick(Component::PipeRrCrossCpu).or_else(|| pick(Component::PipeRrSameCpu)),
            _ => None,
        }
    }
}

/// The canaries of a folder, in the order recorded; empty when it has none (older folders).
pub fn read_canaries(dir: &Path) -> Vec<Canary> {
    let text = std::fs::read_to_string(dir.join(CANARY_JSONL)).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| serde_json::from_value(v["canary"].clone()).ok())
        .collect()
}

/// Compares two folders' canaries; `Err` says why no comparison could be made.
pub fn machine_change(old: &[Canary], new: &[Canary]) -> Result<MachineChange, String> {
    match (old.is_empty(), new.is_empty()) {
        (true, true) => return Err("no canary was recorded in either folder".into()),
        (true, false) => return Err("no canary was recorded in the old folder".into()),
        (false, true) => return Err("no canary was recorded in the new folder".into()),
        _ => {}
    }
    let costs = |all: &[Canary], c| all.iter().filter_map(|k| k.cost(c)).collect::<Vec<_>>();
    let components: Vec<(Component, RatioInterval)> = Component::ALL
        .iter()
        .filter_map(|&c| Some((c, welch_ratio(&costs(new, c), &costs(old, c))?)))
        .collect();
    if components.is_empty() {
        return Err("fewer than two canaries on a side: no interval can be formed".into());
    }
    Ok(MachineChange { components })
}

/// The line printed before the per-point table.
pub fn line(change: &Result<MachineChange, String>) -> String {
    let m = match change {
        Err(why) => return format!("machine: not compared ({why}); points are read as before"),
        Ok(m) => m,
    };
    let parts: Vec<String> = m
        .components
        .iter()
        .map(|(c, r)| format!("{} {:.3} [{:.3}, {:.3}]", c.name(), r.ratio, r.low, r.high))
        .collect();
    let verdict = match m.beyond_margin() {
        Some(d) => format!(
            "the machine changed: {:.1} % {} for the new study (beyond the {:.0} % margin)",
            d.abs() * 100.0,
            if d > 0.0 { "slower" } else { "faster" },
            MACHINE_MARGIN * 100.0
        ),
        None => format!(
            "no machine change beyond the {:.0} % margin is shown",
            MACHINE_MARGIN * 100.0
        ),
    };
    format!(
        "machine: canary cost new/old [95 % CI, Welch on log costs]: {}; {verdict}",
        parts.join(", ")
    )
}

/// `--normalize canary`: multiplies each new point's visit means (and summary) by the canary
/// cost ratio of its component. Returns the points left as they were, with why.
pub fn normalize(new: &mut BTreeMap<String, Value>, change: &MachineChange) -> Vec<String> {
    let mut left = Vec::new();
    for (key, point) in new.iter_mut() {
        let Some((_, ratio)) = change.ratio_for(point) else {
            left.push(key.clone());
            continue;
        };
        let stats = &mut point["statistics"];
        if let Some(values) = stats["values"].as_array_mut() {
            for v in values.iter_mut() {
                if let Some(x) = v.as_f64() {
                    *v = Value::from(x * ratio);
                }
            }
        }
        for field in ["mean", "ci95_low", "ci95_high", "ci95_half_width", "stddev"] {
            if let Some(x) = stats["summary"][field].as_f64() {
                stats["summary"][field] = Value::from(x * ratio);
            }
        }
    }
    left
}

/// The summary's last word on the machine, when it changed beyond the margin.
pub fn summary_note(change: &Result<MachineChange, String>, normalized: bool) -> Option<String> {
    let d = change.as_ref().ok()?.beyond_margin()?;
    Some(if normalized {
        format!(
            "normalized by the canary: each new point's figure was multiplied by the new/old canary cost of its component (memcpy for stream, pipe round trip for rr); the machine had moved {:.1} %",
            d * 100.0
        )
    } else {
        format!(
            "the machine itself changed by {:.1} %: point verdicts of that size are the machine's, not the build's (--normalize canary divides it out)",
            d * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::canary::CANARY_VERSION;

    fn canary(scale: f64, jitter: f64) -> Canary {
        Canary {
            canary_version: CANARY_VERSION,
            getpid_ns: 100.0 * scale * jitter,
            memcpy_gbit_s: 80.0 / (scale * jitter),
            pipe_rr_same_cpu_us: Some(5.0 * scale * jitter),
            pipe_rr_same_cpu_unavailable_reason: None,
            pipe_rr_cross_cpu_us: Some(9.0 * scale * jitter),
            pipe_rr_cross_cpu_unavailable_reason: None,
            cpus: vec![0, 1],
            elapsed_ms: 20.0,
        }
    }

    fn canaries(scale: f64) -> Vec<Canary> {
        [1.0, 1.01, 0.99, 1.005]
            .iter()
            .map(|&j| canary(scale, j))
            .collect()
    }

    #[test]
    fn a_ten_percent_slower_machine_is_named_with_every_component() {
        let m = machine_change(&canaries(1.0), &canaries(1.1)).unwrap();
        assert_eq!(m.components.len(), 4);
        let d = m.beyond_margin().unwrap();
        assert!((d - 0.1).abs() < 0.01, "{d}");
        let text = line(&Ok(m));
        assert!(
            text.contains("the machine changed: 10.0 % slower"),
            "{text}"
        );
    }

    #[test]
    fn the_same_machine_is_no_change_and_older_folders_say_no_canary() {
        let m = machine_change(&canaries(1.0), &canaries(1.0)).unwrap();
        assert_eq!(m.beyond_margin(), None);
        let none = machine_change(&[], &canaries(1.0));
        assert!(line(&none).contains("no canary was recorded in the old folder"));
        assert_eq!(summary_note(&none, false), None);
    }

    #[test]
    fn normalizing_scales_stream_by_memcpy_and_rr_by_the_round_trip() {
        let m = machine_change(&canaries(1.0), &canaries(1.1)).unwrap();
        let point = |pattern: &str| {
            serde_json::json!({"config": {"pattern": pattern},
                "statistics": {"values": [10.0, 10.0], "summary": {"mean": 10.0}}})
        };
        let mut new = BTreeMap::from([
            ("s".to_string(), point("stream")),
            ("r".to_string(), point("rr")),
            ("x".to_string(), point("other")),
        ]);
        assert_eq!(normalize(&mut new, &m), vec!["x".to_string()]);
        for k in ["s", "r"] {
            let mean = new[k]["statistics"]["summary"]["mean"].as_f64().unwrap();
            assert!((mean - 11.0).abs() < 0.1, "{k}: {mean}");
        }
    }
}
