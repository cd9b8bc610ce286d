//! What every visiting study (sweep, ipc, servers) does to watch the machine around its
//! rounds: settle before the first (`--settle`), and a canary at the start of each, appended to
//! the folder's canary.jsonl.
use super::canary::{self, CANARY_JSONL};
use super::settle;
use crate::error::Error;
use crate::spec::watch::Watch;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// `--settle`: waits for a quiet machine (unless off) and prints how it went.
pub fn settle_before_first_round(watch: &Watch, cpus: &[usize], interrupt: &AtomicBool) {
    match watch.settle {
        None => println!("settle: off (--settle off); starting at once"),
        Some(limit) => {
            println!(
                "settle: waiting for others to use under {:.0} % of CPUs {cpus:?} for {} s and a stable canary (at most {:.0} s)",
                watch.quiet_threshold * 100.0,
                settle::QUIET_FOR.as_secs(),
                limit.as_secs_f64()
            );
            let settled = settle::settle(cpus, watch.quiet_threshold, limit, interrupt);
            println!("{}", settled.line());
        }
    }
}

/// Measures the canary on `cpus` and appends it, with its round and wall time, to the
/// folder's canary.jsonl (forced to disk, like a visit).
pub fn record_canary(dir: &Path, round: usize, cpus: &[usize]) -> Result<(), Error> {
    let c = canary::measure(cpus);
    let unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let line = serde_json::json!({ "round": round, "unix_s": unix_s, "canary": c }).to_string();
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
