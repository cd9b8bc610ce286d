//! What every visiting study (sweep, ipc, servers) does to watch the machine around its
//! rounds: settle before the first (`--settle`), and a canary at the start of each, appended to
//! the folder's canary.jsonl.
use super::canary::{Canary, CANARY_JSONL};
use super::canary_process::{self, CanaryProcess};
use super::settle;
use crate::config::watch::Watch;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// `--settle`: waits for a quiet machine (unless off) and says how it went: on stdout, or on
/// stderr where stdout carries a JSON document (`servers --json`).
pub fn settle_before_first_round(
    watch: &Watch,
    cpus: &[usize],
    interrupt: &AtomicBool,
    to_stderr: bool,
) {
    let say = |line: String| {
        if to_stderr {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    match watch.settle {
        None => say("settle: off (--settle off); starting at once".into()),
        Some(limit) => {
            say(format!(
                "settle: waiting for others to use under {:.0} % of CPUs {cpus:?} for {} s and a stable canary (at most {:.0} s)",
                watch.quiet_threshold * 100.0,
                settle::QUIET_FOR.as_secs(),
                limit.as_secs_f64()
            ));
            let settled = settle::settle(cpus, watch.quiet_threshold, limit, interrupt);
            say(settled.line());
        }
    }
}

/// One line of a folder's canary.jsonl: the round and the canary measured at its start, or
/// why there is none, and for a study of several hosts the host it was measured on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CanaryLine {
    #[serde(default)]
    pub round: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// A canary of another version than this build reads is left out (`None`).
    #[serde(
        default,
        deserialize_with = "lenient_canary",
        skip_serializing_if = "Option::is_none"
    )]
    pub canary: Option<Canary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_unavailable_reason: Option<String>,
    /// Where the canary was measured: in a process of its own, or in the study's (see
    /// probe::canary_process). Absent in older folders, whose canaries were all the study's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<CanaryProcess>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_unavailable_reason: Option<String>,
    /// The round's wall time of taking the canary, its process's start and exit included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<f64>,
    /// The wall time the line was written at.
    #[serde(default)]
    pub unix_s: Option<f64>,
}

fn lenient_canary<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Canary>, D::Error> {
    let block = Option::<serde_json::Value>::deserialize(d)?;
    Ok(block.and_then(|b| Canary::deserialize(b).ok()))
}

/// Measures the canary on `cpus` in a process of its own (or, where that cannot run, in this
/// one) and appends it, with its round, how it was taken and the wall time, to the folder's
/// canary.jsonl (forced to disk, like a visit).
pub fn record_canary(dir: &Path, round: usize, cpus: &[usize]) -> Result<(), Error> {
    let taken = canary_process::measure_in_own_process(cpus);
    append_canary_line(
        dir,
        CanaryLine {
            round: Some(round),
            canary: Some(taken.canary),
            process: Some(taken.process),
            process_unavailable_reason: taken.process_unavailable_reason,
            wall_ms: Some(taken.wall_ms),
            ..CanaryLine::default()
        },
    )
}

/// Appends one line to the folder's canary.jsonl, stamped with the wall time now (`unix_s`)
/// and forced to disk.
pub fn append_canary_line(dir: &Path, mut line: CanaryLine) -> Result<(), Error> {
    line.unix_s = Some(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
    );
    // Through a `Value`, whose objects keep their keys sorted, as the file always had them.
    let line = serde_json::to_value(&line).expect("a canary line serializes");
    let path = dir.join(CANARY_JSONL);
    let file_error = |source| Error::File {
        path: path.clone(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(file_error)?;
    file.write_all(format!("{line}\n").as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(file_error)
}

/// The lines of a folder's canary.jsonl (none where it has none).
pub fn canary_lines(dir: &Path) -> Vec<CanaryLine> {
    jsonl(&dir.join(CANARY_JSONL))
}

/// What the readers of a visits file take of each line: its `visit` and `sweep_point` blocks.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct VisitBlocks {
    #[serde(default)]
    pub visit: Option<VisitBlock>,
    #[serde(default)]
    pub sweep_point: Option<PointBlock>,
}

/// A visit's place and what else used the machine during it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct VisitBlock {
    pub key: Option<String>,
    pub round: Option<u64>,
    pub kind: Option<String>,
    pub interference: Option<InterferenceBlock>,
}

/// The point a line belongs to.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PointBlock {
    pub key: Option<String>,
}

/// A visit's interference block, as far as the readers judge it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct InterferenceBlock {
    pub disturbed: Option<bool>,
    pub others_cpu_share: Option<f64>,
    pub steal_share: Option<f64>,
}

impl VisitBlocks {
    /// The line's interference block, where its visit carries one.
    pub fn interference(&self) -> Option<&InterferenceBlock> {
        self.visit.as_ref()?.interference.as_ref()
    }
}

impl InterferenceBlock {
    pub fn disturbed(&self) -> bool {
        self.disturbed == Some(true)
    }
}

/// Each line's `visit` and `sweep_point` blocks of a visits file: the rest of each record (its
/// sides, counters, statistics) is skipped unparsed, so that a sweep's thousands of visits are
/// not held as JSON trees (`bytepath report` of a 48-point sweep's 816 visits peaked at 46 MiB
/// resident when they were, 18 MiB with the blocks alone).
pub fn visit_blocks(path: &Path) -> Vec<VisitBlocks> {
    jsonl(path)
}

/// Each line of a JSON-lines file that reads as a `T`; a line that does not (a cut last line)
/// and a file that is absent give nothing.
pub fn jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The study's last word on the machine, from its folder: how many visits were disturbed and by
/// how much, and what the canaries cost against the study's wall time (the target is ≤ 3 %).
/// `visits_file` is the folder's visits file (named by the report layer, above this one).
pub fn summary_line(dir: &Path, visits_file: &str, wall_s: f64) -> String {
    let visits = visit_blocks(&dir.join(visits_file));
    let blocks: Vec<&InterferenceBlock> = visits
        .iter()
        .filter_map(VisitBlocks::interference)
        .collect();
    let mut shares: Vec<f64> = blocks
        .iter()
        .filter(|b| b.disturbed())
        .filter_map(|b| Some(b.others_cpu_share? + b.steal_share?))
        .collect();
    shares.sort_by(f64::total_cmp);
    let by_how_much = match (shares.first(), shares.last()) {
        (Some(lo), Some(hi)) => format!(
            " (others and steal {:.0}–{:.0} % of the run's CPUs, median {:.0} %)",
            lo * 100.0,
            hi * 100.0,
            shares[shares.len() / 2] * 100.0
        ),
        _ => String::new(),
    };
    let canaries = canary_lines(dir);
    // A round's whole cost where recorded (its own process started and ended), else the
    // canary's own time (older folders, whose canaries ran in the study's process).
    let canary_s: f64 = canaries
        .iter()
        .filter_map(|c| c.wall_ms.or(Some(c.canary.as_ref()?.elapsed_ms)))
        .sum::<f64>()
        / 1e3
        // An empty float sum is −0.0: no canary reads "0.00 s", not "-0.00 s".
        + 0.0;
    format!(
        "machine: {} of {} visits disturbed{by_how_much} (a disturbed first visit is made once more at the end of its round); {} canaries took {:.2} s, {:.1} % of the study's {:.1} s",
        shares.len(),
        blocks.len(),
        canaries.len(),
        canary_s,
        canary_s / wall_s.max(1e-9) * 100.0,
        wall_s
    )
}

#[cfg(test)]
mod tests {
    use super::visit_blocks;

    #[test]
    fn visit_blocks_keep_each_lines_visit_and_point_and_skip_a_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("visits.jsonl");
        let lines = [
            r#"{"visit":{"key":"copy/stream/4096/1","round":2},"sides":[{"counters":{}}],"statistics":{"values":[1,2]}}"#,
            r#"{"sweep_point":{"key":"gather/stream/4096/1"},"status":"completed"}"#,
            r#"{"visit":{"key":"cut"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let blocks = visit_blocks(&path);
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        let visit = blocks[0].visit.as_ref().unwrap();
        assert_eq!(
            (visit.round, visit.key.as_deref()),
            (Some(2), Some("copy/stream/4096/1"))
        );
        assert!(blocks[0].sweep_point.is_none() && blocks[1].visit.is_none());
        let point = blocks[1].sweep_point.as_ref().unwrap();
        assert_eq!(point.key.as_deref(), Some("gather/stream/4096/1"));
        assert!(visit_blocks(&dir.path().join("absent.jsonl")).is_empty());
    }
}
