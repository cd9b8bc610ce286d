//! "From which message size does one mechanism beat another?" Every (size, thread count) cell
//! of the two mechanisms is one test of a family controlled by Holm's step-down: a single false
//! "beats" at the largest size would read "beats from 512 KiB on", so the chance of any false
//! claim is what must stay at 5 %. A cell is *beats* or *slower* where its Holm-level paired
//! interval excludes 1, *equivalent* where two one-sided tests place it within the margin
//! (`--margin`, default ±5 %; those claims held by Benjamini–Hochberg: a share of alike cells,
//! not a gate), else *undecided* (`stats::verdict`); "does not beat" is said only where no
//! cell is undecided. A sweep with adaptive rounds looked at each cell up to twice, so the
//! looks split α: its families are judged at the last look's 0.04 (`crossover_rule`).
use super::crossover_rule::Settings;
use super::paired::{self, PAIRED_BASIS};
use super::point::Point;
use super::tested::{Cell, TestedAnswer};
use super::{
    capitalize, distinct, find, percent_change, size_label, size_range, threads_label, Answer,
};
use crate::mechanism::MechanismKind;
use crate::stats::verdict::{self, Correction, Family, Judged, LogEstimate, Verdict};
use crate::stats::visits::RatioInterval;

/// How a challenger compares with a baseline across the sizes of one thread count.
#[derive(Debug, Clone, PartialEq)]
pub enum Crossover {
    /// Beats (the corrected paired interval above 1) at `from` and at every larger size
    /// measured; `ratio` is (challenger / baseline, low, high) at `from`, its interval at the
    /// Holm level. `slower_at` lists smaller sizes where the baseline was faster.
    BeatsFrom {
        from: f64,
        ratio: (f64, f64, f64),
        slower_at: Vec<f64>,
    },
    /// Equivalent within the margin at every size up to `up_to`.
    Equivalent {
        up_to: f64,
    },
    /// No size where either is shown faster, and some where equivalence is not shown either.
    Undecided {
        up_to: f64,
        undecided_at: Vec<f64>,
    },
    /// Differences exist, but none that holds from some size on.
    NotFromAnySize {
        faster_at: Vec<f64>,
        slower_at: Vec<f64>,
        undecided_at: Vec<f64>,
        up_to: f64,
    },
    CannotBeSaid(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PerThreads {
    pub threads: f64,
    pub outcome: Crossover,
    /// The sizes compared, ascending.
    pub sizes: Vec<f64>,
    /// Each size's verdict within the family (`None` where no paired interval could be had).
    pub cells: Vec<(f64, Option<Judged>)>,
    /// The equivalence margin the cells were judged with.
    pub margin: f64,
}

/// The comparison at every thread count where both mechanisms have stream points (the
/// tests' view: the answer itself also keeps the family `judge` returns).
#[cfg(test)]
pub fn compare(
    points: &[&Point],
    challenger: &str,
    baseline: &str,
    settings: Settings,
) -> Vec<PerThreads> {
    judge(points, challenger, baseline, settings).0
}

/// One thread count's cells: (size, the paired estimate or why there is none).
type ThreadCells = (f64, Vec<(f64, Result<LogEstimate, String>)>);

/// What a crossover is judged on: the paired ratio of a challenger's point over a baseline's,
/// above 1 where the challenger does better.
#[derive(Clone, Copy)]
pub struct Figure {
    pub name: &'static str,
    pub ratio: fn(&Point, &Point) -> Result<RatioInterval, String>,
}

/// The headline figure (receiver Gbit/s of a stream; a sink's sender Gbit/s).
pub const HEADLINE: Figure = Figure {
    name: "throughput",
    ratio: paired::ratio,
};

/// Every cell's paired ratio, judged as one Holm family, then classified per thread count.
pub fn judge(
    points: &[&Point],
    challenger: &str,
    baseline: &str,
    settings: Settings,
) -> (Vec<PerThreads>, Family) {
    let (mut per_figure, family) =
        judge_figures(points, (challenger, baseline), settings, &[HEADLINE]);
    (per_figure.remove(0), family)
}

/// `judge` on several figures at once: every cell of every figure is one test of the one Holm
/// family (a claim on either figure moves the answer); one classification per figure.
pub fn judge_figures(
    points: &[&Point],
    (challenger, baseline): (&str, &str),
    settings: Settings,
    figures: &[Figure],
) -> (Vec<Vec<PerThreads>>, Family) {
    let groups: Vec<Vec<ThreadCells>> = figures
        .iter()
        .map(|figure| cells_of(points, challenger, baseline, figure))
        .collect();
    let estimates: Vec<LogEstimate> = groups
        .iter()
        .flatten()
        .flat_map(|(_, cells)| cells.iter().filter_map(|(_, r)| r.as_ref().ok().copied()))
        .collect();
    let family = verdict::judge_at(
        &estimates,
        (Correction::Holm, Correction::BenjaminiHochberg),
        settings.margin,
        settings.alpha(),
    );
    let mut judged = family.judged.iter().copied();
    let per_figure = groups
        .into_iter()
        .map(|groups| {
            groups
                .into_iter()
                .map(|(threads, cells)| {
                    let cells: Vec<(f64, Result<Judged, String>)> = cells
                        .into_iter()
                        .map(|(size, r)| {
                            (size, r.map(|_| judged.next().expect("one per estimate")))
                        })
                        .collect();
                    per_threads(threads, cells, settings.margin)
                })
                .collect()
        })
        .collect();
    (per_figure, family)
}

/// The paired estimate of every (size, thread count) cell both mechanisms were measured in.
fn cells_of(
    points: &[&Point],
    challenger: &str,
    baseline: &str,
    figure: &Figure,
) -> Vec<ThreadCells> {
    distinct(points, |p| p.threads)
        .into_iter()
        .map(|threads| {
            let cells = distinct(points, |p| p.size)
                .into_iter()
                .filter_map(|size| {
                    let c = find(points, challenger, size, threads)?;
                    let b = find(points, baseline, size, threads)?;
                    let r = (figure.ratio)(c, b).map(|r| LogEstimate::from_interval(&r));
                    Some((size, r))
                })
                .collect();
            (threads, cells)
        })
        .filter(|(_, cells): &(f64, Vec<_>)| !cells.is_empty())
        .collect()
}

fn per_threads(threads: f64, cells: Vec<(f64, Result<Judged, String>)>, margin: f64) -> PerThreads {
    PerThreads {
        threads,
        outcome: classify(&cells),
        sizes: cells.iter().map(|(s, _)| *s).collect(),
        cells: cells
            .iter()
            .map(|(s, j)| (*s, j.as_ref().ok().copied()))
            .collect(),
        margin,
    }
}

fn classify(cells: &[(f64, Result<Judged, String>)]) -> Crossover {
    let judged: Vec<(f64, Judged)> = cells
        .iter()
        .filter_map(|(s, j)| Some((*s, *j.as_ref().ok()?)))
        .collect();
    let Some(&(up_to, _)) = judged.last() else {
        let why = cells.iter().find_map(|(_, j)| j.as_ref().err().cloned());
        return Crossover::CannotBeSaid(why.unwrap_or_else(|| "no paired visits".into()));
    };
    let sizes_where = |want: Verdict| -> Vec<f64> {
        judged
            .iter()
            .filter(|(_, j)| j.state == want)
            .map(|(s, _)| *s)
            .collect()
    };
    let (faster_at, slower_at) = (sizes_where(Verdict::Beats), sizes_where(Verdict::Slower));
    let undecided_at = sizes_where(Verdict::Undecided);
    let trailing = judged
        .iter()
        .rev()
        .take_while(|(_, j)| j.state == Verdict::Beats)
        .count();
    if trailing > 0 {
        let (from, j) = judged[judged.len() - trailing];
        return Crossover::BeatsFrom {
            from,
            ratio: (j.ratio, j.low, j.high),
            slower_at,
        };
    }
    match (
        faster_at.is_empty() && slower_at.is_empty(),
        undecided_at.is_empty(),
    ) {
        (true, true) => Crossover::Equivalent { up_to },
        (true, false) => Crossover::Undecided {
            up_to,
            undecided_at,
        },
        _ => Crossover::NotFromAnySize {
            faster_at,
            slower_at,
            undecided_at,
            up_to,
        },
    }
}

/// Sizes as runs of consecutive measured sizes: "64 B to 16 KiB, 1 MiB".
fn sizes(list: &[f64], measured: &[f64]) -> String {
    let position = |s: f64| measured.iter().position(|m| *m == s).unwrap_or(usize::MAX);
    let mut runs: Vec<(f64, f64)> = Vec::new();
    for &s in list {
        match runs.last_mut() {
            Some((_, last)) if position(*last).wrapping_add(1) == position(s) => *last = s,
            _ => runs.push((s, s)),
        }
    }
    runs.iter()
        .map(|(a, b)| {
            if a == b {
                size_label(*a)
            } else {
                format!("{} to {}", size_label(*a), size_label(*b))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The answer to the question asked (from which size does the challenger beat the baseline?)
/// at one thread count, without figures. Sizes where the baseline is faster belong to the
/// finding, not to this verdict: they answer the reverse question. "Does not beat" is said only
/// where every size is slower or equivalent; an undecided size keeps the answer open.
pub(super) fn verdict(c: &PerThreads) -> String {
    let at = threads_label(c.threads);
    let list = |v: &[f64]| {
        v.iter()
            .map(|s| size_label(*s))
            .collect::<Vec<_>>()
            .join(",")
    };
    match &c.outcome {
        Crossover::BeatsFrom { from, .. } => format!("{at}: beats from {}", size_label(*from)),
        Crossover::NotFromAnySize {
            faster_at,
            undecided_at,
            ..
        } if !faster_at.is_empty() => match undecided_at.is_empty() {
            true => format!(
                "{at}: faster at {} only, not from any size on",
                list(faster_at)
            ),
            false => format!(
                "{at}: faster at {} only; undecided at {}",
                list(faster_at),
                list(undecided_at)
            ),
        },
        Crossover::Equivalent { .. } => format!(
            "{at}: equivalent within ±{} at every size",
            verdict::percent(c.margin)
        ),
        Crossover::NotFromAnySize { undecided_at, .. } if undecided_at.is_empty() => {
            format!("{at}: does not beat it at any size")
        }
        Crossover::NotFromAnySize { undecided_at, .. }
        | Crossover::Undecided { undecided_at, .. } => {
            format!(
                "{at}: beats at no size shown; undecided at {}",
                list(undecided_at)
            )
        }
        Crossover::CannotBeSaid(_) => format!("{at}: cannot be said"),
    }
}

/// One sentence for one thread count.
pub fn describe(c: &PerThreads, challenger: &str, baseline: &str) -> String {
    let at = threads_label(c.threads);
    match &c.outcome {
        Crossover::BeatsFrom {
            from,
            ratio: (r, lo, hi),
            slower_at,
        } => {
            let judged = c.cells.iter().find(|(s, _)| s == from).and_then(|(_, j)| *j);
            let confidence = judged.map_or(0.95, |j| j.confidence);
            let interval = crate::stats::interval::ci(confidence, judged.and_then(|j| j.pairs), || {
                (percent_change(*lo), percent_change(*hi))
            });
            let mut s = format!(
                "at {at}: {challenger} beats {baseline} from {} on ({} there, {interval})",
                size_label(*from),
                percent_change(*r),
            );
            if !slower_at.is_empty() {
                s += &format!("; {baseline} is faster at {}", sizes(slower_at, &c.sizes));
            }
            s
        }
        Crossover::Equivalent { up_to } => format!(
            "at {at}: {challenger} and {baseline} are equivalent within ±{} at every size up to {} (two one-sided tests at the Holm level)",
            verdict::percent(c.margin),
            size_label(*up_to)
        ),
        Crossover::Undecided { up_to, undecided_at } => format!(
            "at {at}: neither {challenger} nor {baseline} is shown faster at any size up to {}, and equivalence within ±{} is not shown at {}: undecided",
            size_label(*up_to),
            verdict::percent(c.margin),
            sizes(undecided_at, &c.sizes)
        ),
        Crossover::NotFromAnySize {
            faster_at,
            slower_at,
            undecided_at,
            up_to,
        } => {
            let parts: Vec<String> = [
                (faster_at, format!("{challenger} is faster at")),
                (slower_at, format!("{baseline} is faster at")),
                (undecided_at, "undecided at".to_string()),
            ]
            .into_iter()
            .filter(|(at, _)| !at.is_empty())
            .map(|(at, what)| format!("{what} {}", sizes(at, &c.sizes)))
            .collect();
            format!(
                "at {at}: {challenger} is not shown to beat {baseline} from any size on up to {} ({})",
                size_label(*up_to),
                parts.join("; ")
            )
        }
        Crossover::CannotBeSaid(why) => format!("at {at}: cannot be said: {why}"),
    }
}

/// The report's answer for "from which size does `challenger` beat `baseline`".
pub fn answer(points: &[&Point], challenger: &str, baseline: &str, settings: Settings) -> Answer {
    let judged = judge(points, challenger, baseline, settings);
    let question = question(challenger);
    answer_from(points, (challenger, baseline), question, judged, settings)
}

/// Why the crossover family is held by Holm rather than Benjamini–Hochberg.
pub(super) const WHY_HOLM: &str = "Holm (family-wise) for beats and slower: one false \"beats\" at any size changes where the crossover is said to start, so the chance of any false claim is held to 5 %; Benjamini–Hochberg for equivalence: where the two are alike reads as a share of cells, whose expected share of false equivalences is held to 5 %";

/// Each cell's state and interval, with the family's count and correction.
pub fn tested(
    points: &[&Point],
    challenger: &str,
    baseline: &str,
    settings: Settings,
) -> TestedAnswer {
    let (per_threads, family) = judge(points, challenger, baseline, settings);
    let cells = per_threads
        .iter()
        .flat_map(|c| {
            c.cells.iter().filter_map(move |(size, j)| {
                let label = format!("{} at {}", size_label(*size), threads_label(c.threads));
                j.as_ref().map(|j| Cell::new(label, j))
            })
        })
        .collect();
    TestedAnswer::new(question(challenger), &family, WHY_HOLM, cells)
}

/// The challenger's crossover question, in its descriptor's words.
fn question(challenger: &str) -> &'static str {
    MechanismKind::by_name(challenger)
        .and_then(|m| Some(m.descriptor().crossover.as_ref()?.question))
        .unwrap_or("From which message size does one mechanism beat another?")
}

/// Internal: the answer's body once judged.
fn answer_from(
    points: &[&Point],
    (challenger, baseline): (&str, &str),
    question: &'static str,
    (per_threads, family): (Vec<PerThreads>, Family),
    settings: Settings,
) -> Answer {
    let used: Vec<&Point> = points
        .iter()
        .filter(|p| p.series() == challenger || p.series() == baseline)
        .copied()
        .collect();
    let count = |name: &str| used.iter().filter(|p| p.series() == name).count();
    let mut rests_on = format!(
        "receiver throughput of {} {challenger} and {} {baseline} stream points, {}: {PAIRED_BASIS}; {}; {WHY_HOLM}; each interval is shown at its Holm level",
        count(challenger),
        count(baseline),
        size_range(&used),
        family.control()
    );
    if let Some(looks) = settings.looks_text() {
        rests_on += &format!("; {looks}");
    }
    // The finding is the smallest thread count (1 where measured); the others follow.
    let details: Vec<String> = per_threads
        .iter()
        .skip(1)
        .map(|c| describe(c, challenger, baseline))
        .collect();
    let finding = match per_threads.first() {
        None => format!(
            "Cannot be said: the results hold no stream points of both {challenger} and \
             {baseline} at the same size and thread count."
        ),
        Some(first) => capitalize(&describe(first, challenger, baseline)) + ".",
    };
    Answer {
        question,
        verdict: Some(if per_threads.is_empty() {
            "cannot be said".into()
        } else {
            per_threads
                .iter()
                .map(verdict)
                .collect::<Vec<_>>()
                .join("; ")
        }),
        finding,
        details,
        rests_on,
    }
}

#[cfg(test)]
#[path = "crossover_tests.rs"]
mod tests;
