//! Whether the machine itself changed between two studies: their canaries (canary.jsonl, one
//! per round) compared component by component, new/old cost with Welch's interval on the log
//! per-round costs. Rounds are the unit: the two studies ran at different times, so rounds are
//! not paired, and the trials inside one round's canary share that round's moment of the
//! machine, so counting them as samples of their own would call every drift inside an A/A
//! study a machine change; more trials per round narrow each round's figure instead.
//!
//! The decision "the machine changed" is a family of tests, one per deciding component, held
//! family-wise by Holm's step-down (an A/A pair names a change with at most 5 % chance, not up
//! to 1 − 0.95³). The cross-CPU pipe round trip is reported but left out of it: with the other
//! CPU contended one wake-up waits for the scheduler and the figure swings up to 8× within one
//! study, so it measures contention at the canary's moment (what each visit's interference
//! block judges) rather than a shift of the machine that dividing a whole study by would undo.
//! With `--normalize canary` each point's new visit means are multiplied by the cost ratio of
//! the component that matches the point: memcpy for stream, the one-CPU round trip for rr (it
//! moves with the machine's system-call and pipe path, not with the other CPU's load).
//!
//! Rounds are replicates of the machine only where each was a process of its own: two
//! processes on an unchanged machine differ by more than one process's rounds show (an A/A
//! pair of 18-point sweeps read getpid 0.886 [0.810, 0.970] and called it "the machine
//! changed"). A study records each round's canary in a short process of its own
//! (probe::canary_process), so its rounds' spread holds the spread between processes and Welch
//! on rounds is the right test. Canaries taken in the study's own process (older folders, or
//! where the child could not run: canary.jsonl's `process`) share that process's placement,
//! so their mean carries one process's offset that no count of rounds narrows: the interval
//! adds it, `BETWEEN_PROCESS_SD` for each side in proportion to its share of such rounds.
use crate::probe::canary::{Canary, Component};
use crate::probe::canary_process::CanaryProcess;
use crate::record::view::RunView;
use crate::stats::interval;
use crate::stats::verdict::{self, Correction, Judged, LogEstimate};
use crate::stats::visits::{welch_ratio, RatioInterval};
use std::collections::BTreeMap;
use std::path::Path;

/// A machine change smaller than this is not called one, even when its interval excludes 1.
pub const MACHINE_MARGIN: f64 = 0.03;

/// The spread (log scale) of one process's canary level on an unchanged machine, from
/// tests/data/noise.json (variant "default", `canary_between_processes`): each deciding
/// component's A/A log ratio d and the standard error its rounds give se, so that
/// (d² − se²) / 2 estimates one process's variance (memcpy 0.0033, getpid −0.0027, the one-CPU
/// round trip 0.0147); their mean is 0.00511, an SD of 0.0715. One pair of sweeps, so a rough
/// figure: it widens older folders' intervals by what an A/A showed, not by a bound.
pub const BETWEEN_PROCESS_SD: f64 = 0.0715;

/// A study's canaries, and how many of them were taken in the study's own process.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StudyCanaries {
    pub canaries: Vec<Canary>,
    /// Of them, those taken in the study's process: their lines say `"process": "study"`, or
    /// nothing (older folders).
    pub in_study_process: usize,
}

impl StudyCanaries {
    /// Canaries each taken in a process of its own.
    #[cfg(test)]
    pub fn own(canaries: Vec<Canary>) -> StudyCanaries {
        StudyCanaries {
            canaries,
            in_study_process: 0,
        }
    }

    /// Canaries all taken in the study's process.
    #[cfg(test)]
    pub fn in_study(canaries: Vec<Canary>) -> StudyCanaries {
        let in_study_process = canaries.len();
        StudyCanaries {
            canaries,
            in_study_process,
        }
    }

    /// The share of the study's mean log cost that the study process's one offset carries:
    /// k of n rounds shared it, so the mean holds k/n of it.
    fn shared_share(&self) -> f64 {
        if self.canaries.is_empty() {
            return 0.0;
        }
        self.in_study_process as f64 / self.canaries.len() as f64
    }
}

/// Whether a component's change is part of the "machine changed" decision (see the module
/// comment for why the cross-CPU round trip is not).
pub fn decides(c: Component) -> bool {
    c != Component::PipeRrCrossCpu
}

/// One component's new/old cost (above 1: the machine was slower for the new study).
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentChange {
    pub component: Component,
    /// Welch's 95 % interval, uncorrected.
    pub interval: RatioInterval,
    /// Its test within the family of deciding components (Holm); `None` where it only reports.
    pub judged: Option<Judged>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MachineChange {
    pub components: Vec<ComponentChange>,
    /// How many components the decision tested (Holm's family).
    pub tests: usize,
    /// The between-process spread added to every log ratio's standard error (0 where every
    /// round of both studies was a process of its own).
    pub between_process_sd: f64,
    /// Canaries taken in the study's process, and all canaries: (old, new).
    pub in_study_process: ((usize, usize), (usize, usize)),
}

impl MachineChange {
    /// The largest change of a deciding component whose Holm-corrected interval excludes 1
    /// and which exceeds the margin, as a share.
    pub fn beyond_margin(&self) -> Option<f64> {
        self.components
            .iter()
            .filter_map(|c| c.judged)
            .filter(|j| j.low > 1.0 || j.high < 1.0)
            .map(|j| j.ratio - 1.0)
            .filter(|d| d.abs() > MACHINE_MARGIN)
            .max_by(|a, b| a.abs().total_cmp(&b.abs()))
    }

    fn ratio(&self, c: Component) -> Option<f64> {
        self.components
            .iter()
            .find(|k| k.component == c)
            .map(|k| k.interval.ratio)
    }

    /// The canary cost ratio that matches a point: memcpy for stream, the one-CPU pipe round
    /// trip for rr (the cross-CPU one moves with contention, see the module comment).
    pub fn ratio_for(&self, point: &RunView) -> Option<(Component, f64)> {
        let c = matching(point)?;
        self.ratio(c).map(|r| (c, r))
    }

    /// The interval of the canary cost ratio that matches a point (uncorrected, 95 %).
    fn interval_for(&self, point: &RunView) -> Option<RatioInterval> {
        let c = matching(point)?;
        self.components
            .iter()
            .find(|k| k.component == c)
            .map(|k| k.interval)
    }
}

/// The canary component whose ratio a point is normalized by.
fn matching(point: &RunView) -> Option<Component> {
    match point.config().pattern.as_deref()? {
        "stream" => Some(Component::Memcpy),
        "rr" => Some(Component::PipeRrSameCpu),
        _ => None,
    }
}

/// After `--normalize canary`, widens each normalized point's new/old interval by the canary
/// ratio's own: the new figures were multiplied by an estimate, and treating it as exact would
/// flag points for the canary's noise (with a memory hog the memcpy ratio's spread is as large
/// as a point's). The log variances add; the degrees of freedom are Welch–Satterthwaite's, but
/// never more than the point's own: where the canary's spread dominates they would exceed it
/// (a point of 2 visits a side, df 1, beside 7 canaries gave df 5 and an interval narrower
/// than the point's alone), and adding a source of spread must never narrow an interval.
pub fn widen_normalized(
    changes: &mut [super::PointChange],
    new: &BTreeMap<String, RunView>,
    change: &MachineChange,
) {
    for c in changes.iter_mut() {
        let canary = new.get(&c.key).and_then(|p| change.interval_for(p));
        if let (Some(point), Some(canary)) = (c.ratio.as_ref(), canary) {
            c.ratio = Some(with_canary_spread(point, &canary));
        }
    }
}

/// `point`'s ratio with the spread of `canary` (the ratio it was normalized by) added.
fn with_canary_spread(point: &RatioInterval, canary: &RatioInterval) -> RatioInterval {
    let (p, c) = (
        LogEstimate::from_interval(point),
        LogEstimate::from_interval(canary),
    );
    let se2 = p.se.powi(2) + c.se.powi(2);
    let df = if se2 == 0.0 {
        p.df
    } else {
        let satterthwaite =
            se2.powi(2) / (p.se.powi(4) / p.df + c.se.powi(4) / c.df).max(f64::MIN_POSITIVE);
        satterthwaite.min(p.df)
    };
    let half = crate::stats::t_975(df.floor().max(1.0) as usize) * se2.sqrt();
    RatioInterval {
        ratio: point.ratio,
        low: (p.log_ratio - half).exp(),
        high: (p.log_ratio + half).exp(),
        n: point.n,
        df,
    }
}

/// The canaries of a folder, in the order recorded, and how many were taken in the study's
/// process; none when it has none (older folders).
pub fn read_canaries(dir: &Path) -> StudyCanaries {
    let mut study = StudyCanaries::default();
    for line in crate::probe::watch::canary_lines(dir) {
        let Some(canary) = line.canary else { continue };
        if line.process != Some(CanaryProcess::Own) {
            study.in_study_process += 1;
        }
        study.canaries.push(canary);
    }
    study
}

/// `interval` with `extra_var` added to its log variance (same ratio, pairs and degrees of
/// freedom: the added spread is taken as known).
fn widened(interval: RatioInterval, extra_var: f64) -> RatioInterval {
    if extra_var <= 0.0 {
        return interval;
    }
    let e = LogEstimate::from_interval(&interval);
    let half = crate::stats::t_975(e.df as usize) * (e.se.powi(2) + extra_var).sqrt();
    RatioInterval {
        low: (e.log_ratio - half).exp(),
        high: (e.log_ratio + half).exp(),
        ..interval
    }
}

/// Compares two folders' canaries; `Err` says why no comparison could be made.
pub fn machine_change(old: &StudyCanaries, new: &StudyCanaries) -> Result<MachineChange, String> {
    let between_var =
        BETWEEN_PROCESS_SD.powi(2) * (old.shared_share().powi(2) + new.shared_share().powi(2));
    let in_study_process = (
        (old.in_study_process, old.canaries.len()),
        (new.in_study_process, new.canaries.len()),
    );
    let (old, new) = (old.canaries.as_slice(), new.canaries.as_slice());
    match (old.is_empty(), new.is_empty()) {
        (true, true) => return Err("no canary was recorded in either folder".into()),
        (true, false) => return Err("no canary was recorded in the old folder".into()),
        (false, true) => return Err("no canary was recorded in the new folder".into()),
        _ => {}
    }
    let costs = |all: &[Canary], c| all.iter().filter_map(|k| k.cost(c)).collect::<Vec<_>>();
    let mut components: Vec<ComponentChange> = Component::ALL
        .iter()
        .filter_map(|&c| {
            let interval = widened(welch_ratio(&costs(new, c), &costs(old, c))?, between_var);
            Some(ComponentChange {
                component: c,
                interval,
                judged: None,
            })
        })
        .collect();
    if components.is_empty() {
        return Err("fewer than two canaries on a side: no interval can be formed".into());
    }
    let deciding: Vec<&mut ComponentChange> = components
        .iter_mut()
        .filter(|c| decides(c.component))
        .collect();
    let estimates: Vec<LogEstimate> = deciding
        .iter()
        .map(|c| LogEstimate::from_interval(&c.interval))
        .collect();
    let family = verdict::judge(&estimates, Correction::Holm, MACHINE_MARGIN);
    for (c, j) in deciding.into_iter().zip(family.judged) {
        c.judged = Some(j);
    }
    Ok(MachineChange {
        components,
        tests: family.tests,
        between_process_sd: between_var.sqrt(),
        in_study_process,
    })
}

/// The line printed before the per-point table.
pub fn line(change: &Result<MachineChange, String>) -> String {
    let m = match change {
        Err(why) => return format!("machine: not compared ({why}); points are read as before"),
        Ok(m) => m,
    };
    let judged: Vec<String> = m
        .components
        .iter()
        .filter_map(|c| {
            let j = c.judged?;
            Some(format!(
                "{} {:.3} {}",
                c.component.name(),
                j.ratio,
                interval::shown(j.pairs, || format!("[{:.3}, {:.3}]", j.low, j.high))
            ))
        })
        .collect();
    let reported: Vec<String> = m
        .components
        .iter()
        .filter(|c| c.judged.is_none())
        .map(|c| {
            let r = &c.interval;
            format!(
                "; reported, not judged (contention more than machine): {} {:.3} {}",
                c.component.name(),
                r.ratio,
                interval::shown(Some(r.n), || format!(
                    "[95 % CI {:.3}, {:.3}]",
                    r.low, r.high
                ))
            )
        })
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
        "machine: canary cost new/old [CI Holm-corrected over {} components, Welch on per-round log costs{}]: {}{}; {verdict}",
        m.tests,
        processes(m),
        judged.join(", "),
        reported.concat()
    )
}

/// How the rounds were taken, for the line's bracket: each in a process of its own, or which
/// study's were not and what that did to the intervals.
fn processes(m: &MachineChange) -> String {
    let ((old_k, old_n), (new_k, new_n)) = m.in_study_process;
    if old_k == 0 && new_k == 0 {
        return ", each round's canary a process of its own".into();
    }
    format!(
        ", widened by a between-process spread of {:.1} %: old {old_k} of {old_n}, new {new_k} of {new_n} canaries were taken in the study's own process, whose rounds do not cover the spread between processes",
        m.between_process_sd * 100.0
    )
}

/// `--normalize canary`: multiplies each new point's visit means (and summary) by the canary
/// cost ratio of its component. Returns the points left as they were, with why.
pub fn normalize(new: &mut BTreeMap<String, RunView>, change: &MachineChange) -> Vec<String> {
    let mut left = Vec::new();
    for (key, point) in new.iter_mut() {
        let Some((_, ratio)) = change.ratio_for(point) else {
            left.push(key.clone());
            continue;
        };
        let Some(stats) = point.statistics.as_mut() else {
            continue;
        };
        for v in stats.values.iter_mut().flatten().flatten() {
            *v *= ratio;
        }
        if let Some(s) = stats.summary.as_mut() {
            for figure in [
                &mut s.mean,
                &mut s.ci95_low,
                &mut s.ci95_high,
                &mut s.ci95_half_width,
                &mut s.stddev,
            ] {
                *figure *= ratio;
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
            "normalized by the canary: each new point's figure was multiplied by the new/old canary cost of its component (memcpy for stream, the one-CPU pipe round trip for rr); the machine had moved {:.1} %",
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
#[path = "machine_simulation.rs"]
mod simulation;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::canary::CANARY_VERSION;

    pub(super) fn canary(scale: f64, jitter: f64) -> Canary {
        Canary {
            canary_version: CANARY_VERSION,
            getpid_ns: 100.0 * scale * jitter,
            memcpy_gbit_s: 80.0 / (scale * jitter),
            memcpy_trials_gbit_s: Vec::new(),
            pipe_rr_same_cpu_us: Some(5.0 * scale * jitter),
            pipe_rr_same_cpu_unavailable_reason: None,
            pipe_rr_cross_cpu_us: Some(9.0 * scale * jitter),
            pipe_rr_cross_cpu_unavailable_reason: None,
            cpus: vec![0, 1],
            elapsed_ms: 20.0,
        }
    }

    fn own(canaries: Vec<Canary>) -> StudyCanaries {
        StudyCanaries::own(canaries)
    }

    fn canaries(scale: f64) -> Vec<Canary> {
        [1.0, 1.01, 0.99, 1.005]
            .iter()
            .map(|&j| canary(scale, j))
            .collect()
    }

    #[test]
    fn a_ten_percent_slower_machine_is_named_with_every_component() {
        let m = machine_change(&own(canaries(1.0)), &own(canaries(1.1))).unwrap();
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
        let m = machine_change(&own(canaries(1.0)), &own(canaries(1.0))).unwrap();
        assert_eq!(m.beyond_margin(), None);
        let none = machine_change(&own(Vec::new()), &own(canaries(1.0)));
        assert!(line(&none).contains("no canary was recorded in the old folder"));
        assert_eq!(summary_note(&none, false), None);
    }

    #[test]
    fn normalizing_scales_stream_by_memcpy_and_rr_by_the_round_trip() {
        let m = machine_change(&own(canaries(1.0)), &own(canaries(1.1))).unwrap();
        let summary = crate::stats::visits::summarize_visits(&[9.9, 10.1]);
        let point = |pattern: &str| {
            serde_json::from_value::<RunView>(serde_json::json!({"config": {"pattern": pattern},
                "statistics": {"values": [10.0, 10.0], "summary": summary}}))
            .unwrap()
        };
        let mut new = BTreeMap::from([
            ("s".to_string(), point("stream")),
            ("r".to_string(), point("rr")),
            ("x".to_string(), point("other")),
        ]);
        assert_eq!(normalize(&mut new, &m), vec!["x".to_string()]);
        for k in ["s", "r"] {
            let mean = new[k].statistics().unwrap().summary.unwrap().mean;
            assert!((mean - 11.0).abs() < 0.1, "{k}: {mean}");
        }
    }

    #[test]
    fn contention_on_the_cross_cpu_round_trip_is_reported_but_neither_named_nor_divided_by() {
        let old = canaries(1.0);
        let mut new = canaries(1.0);
        for (c, swing) in new.iter_mut().zip([6.0, 8.0, 7.0, 7.5]) {
            c.pipe_rr_cross_cpu_us = c.pipe_rr_cross_cpu_us.map(|us| us * swing);
        }
        let m = machine_change(&own(old), &own(new)).unwrap();
        assert_eq!(m.tests, 3);
        assert_eq!(m.beyond_margin(), None, "{m:?}");
        let text = line(&Ok(m.clone()));
        assert!(
            text.contains(
                "reported, not judged (contention more than machine): pipe round trip, two CPUs 7."
            ),
            "{text}"
        );
        assert!(
            text.contains("no machine change beyond the 3 % margin"),
            "{text}"
        );
        let rr: RunView =
            serde_json::from_value(serde_json::json!({"config": {"pattern": "rr"}})).unwrap();
        let (component, ratio) = m.ratio_for(&rr).unwrap();
        assert_eq!(component, Component::PipeRrSameCpu);
        assert!((ratio - 1.0).abs() < 1e-9, "{ratio}");
    }

    #[test]
    fn a_normalized_point_s_interval_carries_the_canary_s_spread() {
        let point = welch_ratio(&[10.0, 10.2, 9.9, 10.1], &[10.0, 10.1, 9.8, 10.1]).unwrap();
        let canary = welch_ratio(&[1.0, 1.2, 0.9, 1.1], &[1.0, 1.1, 0.95, 1.05]).unwrap();
        let wide = with_canary_spread(&point, &canary);
        assert_eq!(wide.ratio, point.ratio);
        assert!(
            wide.low < point.low && wide.high > point.high,
            "{wide:?} {point:?}"
        );
        // Log variances add: the new half-width is at least the larger of the two.
        let half = |r: &RatioInterval| (r.high / r.low).ln() / 2.0;
        assert!(half(&wide) >= half(&canary).max(half(&point)), "{wide:?}");
        // A point of 2 visits a side (df 1) beside a canary wider than it but with more
        // degrees of freedom is still widened, never narrowed.
        let thin = welch_ratio(&[9.4, 10.1], &[16.5, 17.6]).unwrap();
        let seven = [1.0, 1.3, 0.8, 1.1, 0.9, 1.25, 0.85];
        let broad = welch_ratio(&seven, &[1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02]).unwrap();
        let both = with_canary_spread(&thin, &broad);
        assert!(
            half(&both) >= half(&thin).max(half(&broad)),
            "{both:?} {thin:?} {broad:?}"
        );
        // A canary with no spread leaves the point as it was.
        let exact = RatioInterval {
            low: 1.0,
            high: 1.0,
            ..canary
        };
        let same = with_canary_spread(&point, &exact);
        assert!((same.low - point.low).abs() < 1e-12 && (same.high - point.high).abs() < 1e-12);
    }
}
