//! The file report's own questions, answered from its transfers: each mechanism's time as a
//! share of readsend's per size (the seeds found sendfile saves about 65 %), where the saving
//! comes from (server CPU per byte, system calls and context switches per transfer), and cold
//! against warm cache. A repetition visits every mechanism back to back (`file::ORDER`), so
//! the transfers of one size and repetition form a round and comparisons rest on per-round
//! paired ratios; each comparison is beats/slower, equivalent within ±5 % or undecided.
use super::mechanisms::FileMechanism;
use super::record::{FileStudy, TransferRecord};
use crate::analysis::paired::{ratio_of, verdict_within};
use crate::analysis::{size_label, Answer};
use crate::stats::verdict::{self, LogEstimate, Verdict};
use crate::stats::visits::{Direction, RatioInterval};

pub const SHARE: &str = "What share of readsend's time does each mechanism take, and is the seeds' ~65 % saving for sendfile confirmed?";
pub const WHY: &str = "Where does the saving come from?";
pub const CACHE: &str = "Does a cold page cache change the answer?";

/// The seeds' finding: sendfile took about 35 % of readsend's time (a ~65 % saving).
const SEEDS_SHARE: f64 = 0.35;

fn basis(study: &FileStudy) -> String {
    let c = &study.config;
    let order = match c.seed {
        Some(seed) => format!("mechanisms back to back in each repetition in an order drawn from seed {seed}, reversed every other repetition"),
        None => "mechanisms back to back in each repetition in list order (a folder from before the order was seeded)".into(),
    };
    let cache = match both_caches(study) {
        true => "warm (of warm,cold: cold is compared in the cold-against-warm answer)".into(),
        false => c.cache.clone(),
    };
    format!(
        "per-repetition paired ratios against readsend at the same size ({} repetitions; {order}); 95 % CI by Student's t on the per-repetition log-ratios; each comparison alone (no family correction): beats/slower when that interval excludes 1, \"equivalent within ±5 %\" when two one-sided tests place it inside [0.95, 1.05] (90 % CI), \"undecided\" otherwise; cache {cache}; placement: {}",
        c.reps, c.where_sides_run
    )
}

/// Whether the study measured both the warm and the cold cache (`--cache warm,cold`).
fn both_caches(study: &FileStudy) -> bool {
    let caches = study.config.caches();
    caches.iter().any(|c| c == "warm") && caches.iter().any(|c| c == "cold")
}

/// The cache the shares and the saving rest on: warm when both were measured, else the one.
fn main_cache(study: &FileStudy) -> String {
    match both_caches(study) {
        true => "warm".into(),
        false => study.config.caches().swap_remove(0),
    }
}

/// (rep, value) of `m` at `size` from good transfers under the main cache.
fn rounds(
    study: &FileStudy,
    size: u64,
    m: FileMechanism,
    f: impl Fn(&TransferRecord) -> Option<f64>,
) -> Vec<(usize, f64)> {
    rounds_in(study, &main_cache(study), size, m, f)
}

/// (rep, value) of `m` at `size` from good transfers under `cache` (a record naming no cache
/// has the study's first).
fn rounds_in(
    study: &FileStudy,
    cache: &str,
    size: u64,
    m: FileMechanism,
    f: impl Fn(&TransferRecord) -> Option<f64>,
) -> Vec<(usize, f64)> {
    let first = study.config.caches().swap_remove(0);
    study
        .transfers
        .iter()
        .filter(|t| t.size_bytes == size && t.mechanism == m && t.ok())
        .filter(|t| t.is_measured() && t.cache_or(&first) == cache)
        .filter_map(|t| Some((t.rep as usize, f(t)?)))
        .collect()
}

fn mean(v: &[(usize, f64)]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().map(|x| x.1).sum::<f64>() / v.len() as f64)
}

fn share(study: &FileStudy, size: u64, m: FileMechanism) -> Result<RatioInterval, String> {
    share_in(study, &main_cache(study), size, m)
}

fn share_in(
    study: &FileStudy,
    cache: &str,
    size: u64,
    m: FileMechanism,
) -> Result<RatioInterval, String> {
    let time = |t: &TransferRecord| t.elapsed_ms;
    ratio_of(
        &rounds_in(study, cache, size, m, time),
        &rounds_in(study, cache, size, FileMechanism::Readsend, time),
        &format!("{} and readsend at {}", m.name(), size_label(size as f64)),
    )
}

/// Why nothing can be compared with readsend, if nothing can.
fn missing(study: &FileStudy) -> Option<String> {
    let c = &study.config;
    if !c.mechanisms.contains(&FileMechanism::Readsend) {
        return Some("Cannot be said: readsend was not measured, and every share is of readsend's time (add readsend to --mechanisms).".into());
    }
    if c.mechanisms.len() < 2 {
        return Some("Cannot be said: only readsend was measured; a share needs another mechanism (--mechanisms readsend,sendfile).".into());
    }
    if c.reps < 2 {
        return Some(format!(
            "Cannot be said: {} repetition per point; a paired interval needs at least 2 (--reps 6).",
            c.reps
        ));
    }
    None
}

/// Every answer, in the report's order.
pub fn answers(study: &FileStudy) -> Vec<Answer> {
    vec![shares(study), why(study), cache(study)]
}

fn shares(study: &FileStudy) -> Answer {
    if let Some(why) = missing(study) {
        return Answer::cannot(SHARE, why, basis(study));
    }
    let mut details = Vec::new();
    let mut seeds = None;
    for &size in &study.config.sizes_bytes {
        for &m in study
            .config
            .mechanisms
            .iter()
            .filter(|m| **m != FileMechanism::Readsend)
        {
            let text = match share(study, size, m) {
                Ok(r) => {
                    if m == FileMechanism::Sendfile {
                        seeds = Some((size, r));
                    }
                    format!(
                        "{:.0} % of readsend's time: {}",
                        r.ratio * 100.0,
                        verdict_within(&r, study.config.margin)
                    )
                }
                Err(why) => why,
            };
            details.push(format!("{} {}: {text}", size_label(size as f64), m.name()));
        }
    }
    let (finding, v) = match seeds {
        None => (
            "The seeds' ~65 % saving for sendfile cannot be checked: sendfile was not measured against readsend here (add sendfile to --mechanisms).".to_string(),
            "sendfile not measured".to_string(),
        ),
        Some((size, r)) => seeds_verdict(size, &r, study.config.margin),
    };
    Answer {
        question: SHARE,
        finding,
        details,
        rests_on: basis(study),
        verdict: Some(v),
    }
}

/// The seeds' check at the largest size sendfile was measured at.
fn seeds_verdict(size: u64, r: &RatioInterval, margin: f64) -> (String, String) {
    let at = size_label(size as f64);
    let saving = |x: f64| (1.0 - x) * 100.0;
    let interval = crate::stats::interval::ci(0.95, Some(r.n), || {
        (
            format!("{:.0}", saving(r.high)),
            format!("{:.0} %", saving(r.low)),
        )
    });
    let range = format!("a {:.0} % saving ({interval})", saving(r.ratio));
    let v = if crate::stats::interval::too_few(Some(r.n)) {
        "undecided: too few repetitions to place the saving".to_string()
    } else if r.low <= 1.0 && r.high >= 1.0 {
        "not confirmed: sendfile cannot be told apart from readsend".to_string()
    } else if r.low > 1.0 {
        "not confirmed: sendfile is slower than readsend".to_string()
    } else {
        against_seeds(r, margin)
    };
    (
        format!(
            "At {at}, sendfile takes {:.0} % of readsend's time, {range}: {v}.",
            r.ratio * 100.0
        ),
        format!("at {at}: {v}"),
    )
}

/// The seeds' share tested as a claim of its own: "confirmed" only when two one-sided tests
/// place sendfile's share within ±margin (`--margin`, default 5 %) of 35 % (an interval that merely contains 0.35, however
/// wide, confirms nothing and reads undecided).
fn against_seeds(r: &RatioInterval, margin: f64) -> String {
    let mut e = LogEstimate::from_interval(r);
    e.log_ratio -= SEEDS_SHARE.ln();
    let j = verdict::judge(&[e], verdict::Correction::Holm, margin).judged[0];
    let (low, high) = (
        j.equivalence_low * SEEDS_SHARE,
        j.equivalence_high * SEEDS_SHARE,
    );
    match j.state {
        Verdict::Equivalent => format!(
            "confirmed: the share lies within ±{} of the seeds' 35 % (90 % CI {:.0} to {:.0} %)",
            verdict::percent(margin),
            low * 100.0,
            high * 100.0
        ),
        Verdict::Slower => "not confirmed: sendfile saves more than the seeds' ~65 %".into(),
        Verdict::Beats => "not confirmed: sendfile saves less than the seeds' ~65 %".into(),
        Verdict::Undecided => format!(
            "undecided: the share's 90 % CI ({:.0} to {:.0} %) is too wide to place it within ±{} of the seeds' 35 %",
            low * 100.0,
            high * 100.0,
            verdict::percent(margin)
        ),
    }
}

fn why(study: &FileStudy) -> Answer {
    if let Some(why) = missing(study) {
        return Answer::cannot(WHY, why, basis(study));
    }
    let mut details = Vec::new();
    for &size in &study.config.sizes_bytes {
        let base_cpu = rounds(study, size, FileMechanism::Readsend, |t| {
            t.server_cpu_ns_per_byte()
        });
        let per = |m, f: fn(&TransferRecord) -> Option<f64>| mean(&rounds(study, size, m, f));
        let calls = |t: &TransferRecord| t.server_syscalls.map(|n| n as f64);
        let switches = |t: &TransferRecord| {
            Some(
                (t.server.as_ref()?.context_switches() + t.client.as_ref()?.context_switches())
                    as f64,
            )
        };
        let figure = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.1}"));
        for &m in study
            .config
            .mechanisms
            .iter()
            .filter(|m| **m != FileMechanism::Readsend)
        {
            let cpu = ratio_of(
                &rounds(study, size, m, |t| t.server_cpu_ns_per_byte()),
                &base_cpu,
                "getrusage's CPU time",
            )
            .map_or_else(
                |e| e,
                |r| format!("{} of readsend's", verdict_within(&r, study.config.margin)),
            );
            details.push(format!(
                "{} {}: server CPU per byte {cpu}; system calls per transfer {} against {}; context switches per transfer {} against {}",
                size_label(size as f64),
                m.name(),
                figure(per(m, calls)),
                figure(per(FileMechanism::Readsend, calls)),
                figure(per(m, switches)),
                figure(per(FileMechanism::Readsend, switches)),
            ));
        }
    }
    Answer {
        question: WHY,
        finding: "Against readsend at each size: the server's CPU per byte (paired ratio), and the server's system calls and both threads' context switches per transfer (means over repetitions); a mechanism that saves time by skipping the copy through user memory shows it as less server CPU per byte and fewer system calls.".into(),
        details,
        rests_on: format!(
            "{}; CPU from getrusage(RUSAGE_THREAD) of the sending thread, system calls counted by the server loop, switches {}",
            basis(study),
            "voluntary + involuntary of both threads"
        ),
        verdict: None,
    }
}

const CACHE_BASIS: &str = "per-repetition paired ratios of each mechanism's time cold over warm at the same size (each mechanism's cold and warm transfers back to back in every repetition, the pair's order reversed every other repetition); 95 % CI by Student's t on the per-repetition log-ratios; each comparison alone (no family correction): beats/slower when that interval excludes 1, \"equivalent within ±5 %\" when two one-sided tests place it inside [0.95, 1.05] (90 % CI), \"undecided\" otherwise; residency from mincore(2) before each transfer";

fn cache(study: &FileStudy) -> Answer {
    let c = &study.config;
    if !both_caches(study) {
        let residency: Vec<(usize, f64)> = study
            .transfers
            .iter()
            .filter_map(|t| Some((0, t.residency_before?.fraction())))
            .collect();
        return Answer::cannot(
            CACHE,
            format!(
                "Cannot be said from this folder: it measured the {} cache only (on average {} of each file's pages resident before a transfer); measure both in one study, each mechanism's cold and warm transfers back to back, with --cache warm,cold.",
                c.cache,
                mean(&residency).map_or("unknown".into(), |r| format!("{:.0} %", r * 100.0)),
            ),
            "mincore(2) before each transfer".into(),
        );
    }
    if c.reps < 2 {
        return Answer::cannot(
            CACHE,
            format!("Cannot be said: {} repetition per point; a paired interval of cold against warm needs at least 2 (--reps 6).", c.reps),
            CACHE_BASIS.into(),
        );
    }
    let (mut details, counts) = cold_over_warm(study);
    let (saving, saving_verdict) = sendfile_cold(study, &mut details);
    let [slower, faster, tied] = counts;
    let total = slower + faster + tied;
    Answer {
        question: CACHE,
        finding: format!(
            "Cold against warm, over {total} (size, mechanism) pair(s) with figures: cold is slower in {slower}, faster in {faster} and cannot be told apart in {tied}. {saving}"
        ),
        details,
        rests_on: format!("{CACHE_BASIS}; placement: {}", c.where_sides_run),
        verdict: Some(format!(
            "cold slower in {slower} of {total}; {saving_verdict}"
        )),
    }
}

/// Per size and mechanism, cold's time over warm's; the counts of [slower, faster, tied].
fn cold_over_warm(study: &FileStudy) -> (Vec<String>, [usize; 3]) {
    let time = |t: &TransferRecord| t.elapsed_ms;
    let resident = |t: &TransferRecord| Some(t.residency_before?.fraction() * 100.0);
    let mut counts = [0; 3];
    let mut details = Vec::new();
    for &size in &study.config.sizes_bytes {
        for &m in &study.config.mechanisms {
            let r = ratio_of(
                &rounds_in(study, "cold", size, m, time),
                &rounds_in(study, "warm", size, m, time),
                &format!("{} cold and warm at {}", m.name(), size_label(size as f64)),
            );
            let text = match r {
                Ok(r) => {
                    counts[match r.direction() {
                        Direction::Higher => 0,
                        Direction::Lower => 1,
                        Direction::Indistinguishable => 2,
                    }] += 1;
                    match r.direction() {
                        Direction::Indistinguishable => {
                            format!("cold and warm {}", verdict_within(&r, study.config.margin))
                        }
                        _ => format!(
                            "cold takes {} of warm's time",
                            verdict_within(&r, study.config.margin)
                        ),
                    }
                }
                Err(why) => why,
            };
            let pct = |cache| {
                mean(&rounds_in(study, cache, size, m, resident))
                    .map_or("n/a".into(), |p| format!("{p:.0} %"))
            };
            details.push(format!(
                "{} {}: {text}; pages resident before: cold {}, warm {}",
                size_label(size as f64),
                m.name(),
                pct("cold"),
                pct("warm")
            ));
        }
    }
    (details, counts)
}

/// Whether sendfile's saving against readsend holds cold: its share of readsend's time cold
/// at every size (into `details`), and at the largest as the finding and verdict.
fn sendfile_cold(study: &FileStudy, details: &mut Vec<String>) -> (String, String) {
    let m = &study.config.mechanisms;
    if !(m.contains(&FileMechanism::Sendfile) && m.contains(&FileMechanism::Readsend)) {
        return (
            "Whether sendfile's saving holds cold cannot be said: it needs sendfile and readsend in --mechanisms.".into(),
            "sendfile against readsend not measured".into(),
        );
    }
    let mut last = None;
    for &size in &study.config.sizes_bytes {
        let at = size_label(size as f64);
        let text = match share_in(study, "cold", size, FileMechanism::Sendfile) {
            Ok(r) => {
                last = Some((size, r));
                format!(
                    "{:.0} % of readsend's time: {}",
                    r.ratio * 100.0,
                    verdict_within(&r, study.config.margin)
                )
            }
            Err(why) => why,
        };
        details.push(format!("{at} sendfile against readsend, both cold: {text}"));
    }
    let Some((size, r)) = last else {
        return (
            "Whether sendfile's saving holds cold cannot be said: no size has a paired interval of sendfile against readsend cold.".into(),
            "sendfile's saving cold cannot be said".into(),
        );
    };
    let at = size_label(size as f64);
    let warm = share_in(study, "warm", size, FileMechanism::Sendfile)
        .map_or("n/a".into(), |w| format!("{:.0} %", w.ratio * 100.0));
    // "Does not hold" needs evidence: sendfile shown as fast as readsend (equivalent) or
    // slower; an interval that merely includes 1 leaves it undecided.
    let holds = match crate::analysis::paired::state(&r) {
        Verdict::Slower => "holds cold",
        Verdict::Equivalent => "does not hold cold: sendfile is equivalent to readsend within ±5 %",
        Verdict::Beats => "does not hold cold: sendfile is slower than readsend",
        Verdict::Undecided => "is undecided cold: sendfile's interval against readsend includes 1",
    };
    (
        format!(
            "At {at}, cold, sendfile takes {:.0} % of readsend's time ({}) against {warm} warm: the saving {holds}.",
            r.ratio * 100.0,
            verdict_within(&r, study.config.margin)
        ),
        format!("sendfile's saving at {at} {holds}"),
    )
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
