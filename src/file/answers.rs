//! The file report's own questions, answered from its transfers: each mechanism's time as a
//! share of readsend's per size (the seeds found sendfile saves about 65 %), where the saving
//! comes from (server CPU per byte, system calls and context switches per transfer), and cold
//! against warm cache. A repetition visits every mechanism back to back (`file::ORDER`), so
//! the transfers of one size and repetition form a round and comparisons rest on per-round
//! paired ratios; each comparison is beats/slower, equivalent within the study's `--margin` or
//! undecided, and each answer's per-size list is one family (`analysis::ratio_family`: Holm
//! for beats/slower, Benjamini–Hochberg for equivalent), stated beside it.
use super::mechanisms::FileMechanism;
use super::record::{FileStudy, TransferRecord};
use crate::analysis::paired::ratio_of;
use crate::analysis::ratio_family::{self, RatioFamily};
use crate::analysis::{size_label, Answer};
use crate::stats::verdict::{self, Judged, LogEstimate, Verdict};
use crate::stats::visits::RatioInterval;

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
        "per-repetition paired ratios against readsend at the same size ({} repetitions; {order}); Student's t on the per-repetition log-ratios; beats/slower when the interval excludes 1; {}; cache {cache}; placement: {}",
        c.reps, ratio_family::basis(c.margin), c.where_sides_run
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

/// The mechanisms other than readsend, in the study's order.
fn others(study: &FileStudy) -> Vec<FileMechanism> {
    let m = &study.config.mechanisms;
    m.iter()
        .copied()
        .filter(|m| *m != FileMechanism::Readsend)
        .collect()
}

/// Every size of the study with every mechanism of `mechanisms`, and `ratio`'s interval for
/// each, judged as one family at the study's margin.
fn per_size(
    study: &FileStudy,
    mechanisms: &[FileMechanism],
    ratio: impl Fn(u64, FileMechanism) -> Result<RatioInterval, String>,
) -> (Vec<(u64, FileMechanism)>, RatioFamily) {
    let cells: Vec<(u64, FileMechanism)> = study
        .config
        .sizes_bytes
        .iter()
        .flat_map(|&size| mechanisms.iter().map(move |&m| (size, m)))
        .collect();
    let ratios: Vec<Result<RatioInterval, String>> =
        cells.iter().map(|&(size, m)| ratio(size, m)).collect();
    (cells, ratio_family::judge(&ratios, study.config.margin))
}

/// A cell's words: `words` of its outcome, or why it has none.
fn said(cell: &Result<Judged, String>, words: impl FnOnce(&Judged) -> String) -> String {
    cell.as_ref().map_or_else(Clone::clone, words)
}

fn shares(study: &FileStudy) -> Answer {
    if let Some(why) = missing(study) {
        return Answer::cannot(SHARE, why, basis(study));
    }
    let margin = study.config.margin;
    let (cells, f) = per_size(study, &others(study), |size, m| share(study, size, m));
    let mut seeds = None;
    let mut details = Vec::new();
    for (&(size, m), cell) in cells.iter().zip(&f.cells) {
        if m == FileMechanism::Sendfile && cell.is_ok() {
            seeds = share(study, size, m).ok().map(|r| (size, r));
        }
        let text = said(cell, |j| {
            let shown = ratio_family::text(j, margin);
            format!("{:.0} % of readsend's time: {shown}", j.ratio * 100.0)
        });
        details.push(format!("{} {}: {text}", size_label(size as f64), m.name()));
    }
    let (finding, v) = match seeds {
        None => (
            "The seeds' ~65 % saving for sendfile cannot be checked: sendfile was not measured against readsend here (add sendfile to --mechanisms).".to_string(),
            "sendfile not measured".to_string(),
        ),
        Some((size, r)) => seeds_verdict(size, &r, margin),
    };
    Answer {
        question: SHARE,
        finding: format!("{finding} Shares per size: {}.", f.control()),
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
    let margin = study.config.margin;
    let cpu_of = |t: &TransferRecord| t.server_cpu_ns_per_byte();
    let (cells, f) = per_size(study, &others(study), |size, m| {
        ratio_of(
            &rounds(study, size, m, cpu_of),
            &rounds(study, size, FileMechanism::Readsend, cpu_of),
            "getrusage's CPU time",
        )
    });
    let details = cells
        .iter()
        .zip(&f.cells)
        .map(|(&(size, m), cell)| {
            let cpu = said(cell, |j| {
                format!("{} of readsend's", ratio_family::text(j, margin))
            });
            why_line(study, size, m, &cpu)
        })
        .collect();
    Answer {
        question: WHY,
        finding: format!("Against readsend at each size: the server's CPU per byte (paired ratio; {}), and the server's system calls and both threads' context switches per transfer (means over repetitions); a mechanism that saves time by skipping the copy through user memory shows it as less server CPU per byte and fewer system calls.", f.control()),
        details,
        rests_on: format!(
            "{}; CPU from getrusage(RUSAGE_THREAD) of the sending thread, system calls counted by the server loop, switches {}",
            basis(study),
            "voluntary + involuntary of both threads"
        ),
        verdict: None,
    }
}

/// One (size, mechanism)'s line of the why answer: its CPU verdict `cpu`, and its system calls
/// and context switches per transfer beside readsend's.
fn why_line(study: &FileStudy, size: u64, m: FileMechanism, cpu: &str) -> String {
    let per = |m, f: fn(&TransferRecord) -> Option<f64>| mean(&rounds(study, size, m, f));
    let calls = |t: &TransferRecord| t.server_syscalls.map(|n| n as f64);
    let switches = |t: &TransferRecord| {
        Some((t.server.as_ref()?.context_switches() + t.client.as_ref()?.context_switches()) as f64)
    };
    let figure = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.1}"));
    format!(
        "{} {}: server CPU per byte {cpu}; system calls per transfer {} against {}; context switches per transfer {} against {}",
        size_label(size as f64),
        m.name(),
        figure(per(m, calls)),
        figure(per(FileMechanism::Readsend, calls)),
        figure(per(m, switches)),
        figure(per(FileMechanism::Readsend, switches)),
    )
}

fn cache_basis(margin: f64) -> String {
    format!(
        "per-repetition paired ratios of each mechanism's time cold over warm at the same size (each mechanism's cold and warm transfers back to back in every repetition, the pair's order reversed every other repetition); Student's t on the per-repetition log-ratios; beats/slower when the interval excludes 1; {}; residency from mincore(2) before each transfer",
        ratio_family::basis(margin)
    )
}

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
            cache_basis(c.margin),
        );
    }
    let (mut details, counts, control) = cold_over_warm(study);
    let (saving, saving_verdict) = sendfile_cold(study, &mut details);
    let [slower, faster, tied] = counts;
    let total = slower + faster + tied;
    Answer {
        question: CACHE,
        finding: format!(
            "Cold against warm, over {total} (size, mechanism) pair(s) with figures ({control}): cold is slower in {slower}, faster in {faster} and cannot be told apart in {tied}. {saving}"
        ),
        details,
        rests_on: format!("{}; placement: {}", cache_basis(c.margin), c.where_sides_run),
        verdict: Some(format!(
            "cold slower in {slower} of {total}; {saving_verdict}"
        )),
    }
}

/// Per size and mechanism, cold's time over warm's as one family; the counts of [slower,
/// faster, tied] and the family's control.
fn cold_over_warm(study: &FileStudy) -> (Vec<String>, [usize; 3], String) {
    let time = |t: &TransferRecord| t.elapsed_ms;
    let resident = |t: &TransferRecord| Some(t.residency_before?.fraction() * 100.0);
    let margin = study.config.margin;
    let (cells, f) = per_size(study, &study.config.mechanisms, |size, m| {
        ratio_of(
            &rounds_in(study, "cold", size, m, time),
            &rounds_in(study, "warm", size, m, time),
            &format!("{} cold and warm at {}", m.name(), size_label(size as f64)),
        )
    });
    let mut counts = [0; 3];
    let mut details = Vec::new();
    for (&(size, m), cell) in cells.iter().zip(&f.cells) {
        let text = said(cell, |j| {
            // A ratio above 1 is cold taking longer: "beats" in the family's words.
            let shown = ratio_family::text(j, margin);
            let (slot, text) = match j.state {
                Verdict::Beats => (0, format!("cold takes {shown} of warm's time")),
                Verdict::Slower => (1, format!("cold takes {shown} of warm's time")),
                _ => (2, format!("cold and warm {shown}")),
            };
            counts[slot] += 1;
            text
        });
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
    (details, counts, f.control())
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
    let margin = study.config.margin;
    let (cells, f) = per_size(study, &[FileMechanism::Sendfile], |size, m| {
        share_in(study, "cold", size, m)
    });
    let mut last = None;
    for (&(size, _), cell) in cells.iter().zip(&f.cells) {
        let text = said(cell, |j| {
            last = Some((size, *j));
            let shown = ratio_family::text(j, margin);
            format!("{:.0} % of readsend's time: {shown}", j.ratio * 100.0)
        });
        let at = size_label(size as f64);
        details.push(format!("{at} sendfile against readsend, both cold: {text}"));
    }
    let Some((size, j)) = last else {
        return (
            "Whether sendfile's saving holds cold cannot be said: no size has a paired interval of sendfile against readsend cold.".into(),
            "sendfile's saving cold cannot be said".into(),
        );
    };
    let at = size_label(size as f64);
    let warm = share_in(study, "warm", size, FileMechanism::Sendfile)
        .map_or("n/a".into(), |w| format!("{:.0} %", w.ratio * 100.0));
    let holds = holds_cold(j.state, margin);
    (
        format!(
            "At {at}, cold, sendfile takes {:.0} % of readsend's time ({}; sizes: {}) against {warm} warm: the saving {holds}.",
            j.ratio * 100.0,
            ratio_family::text(&j, margin),
            f.control()
        ),
        format!("sendfile's saving at {at} {holds}"),
    )
}

/// Whether the saving holds cold, from sendfile's state against readsend cold. "Does not
/// hold" needs evidence: sendfile shown as fast as readsend (equivalent) or slower; an
/// interval that merely includes 1 leaves it undecided.
fn holds_cold(state: Verdict, margin: f64) -> String {
    match state {
        Verdict::Slower => "holds cold".into(),
        Verdict::Equivalent => format!(
            "does not hold cold: sendfile is equivalent to readsend within ±{}",
            verdict::percent(margin)
        ),
        Verdict::Beats => "does not hold cold: sendfile is slower than readsend".into(),
        Verdict::Undecided => {
            "is undecided cold: sendfile's interval against readsend includes 1".into()
        }
    }
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
