//! What one thread count's crossover cells add up to, and the words for it. A crossover is
//! "beats from X on" only where every size below X is decided: where sizes just below X are
//! undecided, the crossover lies somewhere between the largest decided size below them and X,
//! and the answer says "between A and X" with the undecided sizes named, never "from X on"
//! alone (which would read as if the sizes below had been shown not to beat).
use super::{percent_change, size_label, threads_label};
use crate::stats::interval;
use crate::stats::verdict::{self, Judged, Verdict};

/// How a challenger compares with a baseline across the sizes of one thread count.
#[derive(Debug, Clone, PartialEq)]
pub enum Crossover {
    /// Beats (the corrected paired interval above 1) at `from` and at every larger size
    /// measured; `ratio` is (challenger / baseline, low, high) at `from`, its interval at its
    /// step-down level. `slower_at` lists smaller sizes where the baseline was faster.
    BeatsFrom {
        from: f64,
        ratio: (f64, f64, f64),
        slower_at: Vec<f64>,
        /// Where sizes just below `from` are undecided: those sizes, ascending, and the
        /// largest decided size below them (`None`: every size below `from` is undecided).
        /// The crossover then lies between that size and `from`.
        undecided_below: Option<(Option<f64>, Vec<f64>)>,
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

pub(super) fn per_threads(
    threads: f64,
    cells: Vec<(f64, Result<Judged, String>)>,
    margin: f64,
) -> PerThreads {
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

pub(super) fn classify(cells: &[(f64, Result<Judged, String>)]) -> Crossover {
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
        let start = judged.len() - trailing;
        let (from, j) = judged[start];
        return Crossover::BeatsFrom {
            from,
            ratio: (j.ratio, j.low, j.high),
            slower_at,
            undecided_below: undecided_below(&judged[..start]),
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

/// The undecided run just below the first size of a trailing "beats" run (`below`: the cells
/// before it, ascending) and the decided size beneath that run; `None` where the size just
/// below is decided (or there is none).
fn undecided_below(below: &[(f64, Judged)]) -> Option<(Option<f64>, Vec<f64>)> {
    let run: Vec<f64> = below
        .iter()
        .rev()
        .take_while(|(_, j)| j.state == Verdict::Undecided)
        .map(|(s, _)| *s)
        .collect();
    if run.is_empty() {
        return None;
    }
    let decided = below.iter().rev().nth(run.len()).map(|(s, _)| *s);
    Some((decided, run.into_iter().rev().collect()))
}

/// Sizes as runs of consecutive measured sizes: "64 B to 16 KiB, 1 MiB".
pub(super) fn sizes(list: &[f64], measured: &[f64]) -> String {
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

/// "between 1 KiB and 16 KiB" or "at or below 16 KiB": where a crossover with undecided sizes
/// below its first beating size lies.
fn crossover_lies(decided: Option<f64>, from: f64) -> String {
    match decided {
        Some(a) => format!("between {} and {}", size_label(a), size_label(from)),
        None => format!("at or below {}", size_label(from)),
    }
}

fn list(v: &[f64]) -> String {
    v.iter()
        .map(|s| size_label(*s))
        .collect::<Vec<_>>()
        .join(",")
}

/// The answer to the question asked (from which size does the challenger beat the baseline?)
/// at one thread count, without figures. Sizes where the baseline is faster belong to the
/// finding, not to this verdict: they answer the reverse question. "Does not beat" is said only
/// where every size is slower or equivalent; an undecided size keeps the answer open.
pub fn verdict(c: &PerThreads) -> String {
    let at = threads_label(c.threads);
    match &c.outcome {
        Crossover::BeatsFrom {
            from,
            undecided_below: None,
            ..
        } => format!("{at}: beats from {}", size_label(*from)),
        Crossover::BeatsFrom {
            from,
            undecided_below: Some((decided, run)),
            ..
        } => format!(
            "{at}: beats from {} on, crossover {} (undecided at {})",
            size_label(*from),
            crossover_lies(*decided, *from),
            list(run)
        ),
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
            undecided_below,
        } => {
            let judged = c.cells.iter().find(|(s, _)| s == from).and_then(|(_, j)| *j);
            let confidence = judged.map_or(0.95, |j| j.confidence);
            let interval = interval::ci(confidence, judged.and_then(|j| j.pairs), || {
                (percent_change(*lo), percent_change(*hi))
            });
            let mut s = format!(
                "at {at}: {challenger} beats {baseline} from {} on ({} there, {interval})",
                size_label(*from),
                percent_change(*r),
            );
            if let Some((decided, run)) = undecided_below {
                s += &format!(
                    "; below that it is undecided at {}, so the crossover lies {}",
                    sizes(run, &c.sizes),
                    crossover_lies(*decided, *from)
                );
            }
            if !slower_at.is_empty() {
                s += &format!("; {baseline} is faster at {}", sizes(slower_at, &c.sizes));
            }
            s
        }
        Crossover::Equivalent { up_to } => format!(
            "at {at}: {challenger} and {baseline} are equivalent within ±{} at every size up to {} (two one-sided tests at the Benjamini–Hochberg level)",
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
        } => not_from_any_size(c, (challenger, baseline), [faster_at, slower_at, undecided_at], *up_to),
        Crossover::CannotBeSaid(why) => format!("at {at}: cannot be said: {why}"),
    }
}

fn not_from_any_size(
    c: &PerThreads,
    (challenger, baseline): (&str, &str),
    [faster_at, slower_at, undecided_at]: [&Vec<f64>; 3],
    up_to: f64,
) -> String {
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
        "at {}: {challenger} is not shown to beat {baseline} from any size on up to {} ({})",
        threads_label(c.threads),
        size_label(up_to),
        parts.join("; ")
    )
}
