//! "From which message size does one mechanism beat another?" Every (size, thread count) cell
//! of the two mechanisms is one test of a family controlled by Holm's step-down: a single false
//! "beats" at the largest size would read "beats from 512 KiB on", so the chance of any false
//! claim is what must stay at 5 %. A cell is *beats* or *slower* where its Holm-level paired
//! interval excludes 1, *equivalent* where two one-sided tests place it within ±5 % (those
//! claims held by Benjamini–Hochberg: a share of alike cells, not a gate), else
//! *undecided* (`stats::verdict`); "does not beat" is said only where no cell is undecided.
use super::paired::{self, PAIRED_BASIS};
use super::point::Point;
use super::tested::{Cell, TestedAnswer};
use super::{
    capitalize, distinct, find, percent_change, size_label, size_range, threads_label, Answer,
};
use crate::stats::verdict::{self, Correction, Family, Judged, LogEstimate, Verdict};

/// The equivalence margin the sweep's answers are stated with.
pub const MARGIN: f64 = verdict::DEFAULT_MARGIN;

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
}

/// The comparison at every thread count where both mechanisms have stream points.
pub fn compare(points: &[&Point], challenger: &str, baseline: &str) -> Vec<PerThreads> {
    judge(points, challenger, baseline).0
}

/// One thread count's cells: (size, the paired estimate or why there is none).
type ThreadCells = (f64, Vec<(f64, Result<LogEstimate, String>)>);

/// Every cell's paired ratio, judged as one Holm family, then classified per thread count.
pub fn judge(points: &[&Point], challenger: &str, baseline: &str) -> (Vec<PerThreads>, Family) {
    let groups: Vec<ThreadCells> = distinct(points, |p| p.threads)
        .into_iter()
        .map(|threads| {
            let cells = distinct(points, |p| p.size)
                .into_iter()
                .filter_map(|size| {
                    let c = find(points, challenger, size, threads)?;
                    let b = find(points, baseline, size, threads)?;
                    let r = paired::ratio(c, b).map(|r| LogEstimate::from_interval(&r));
                    Some((size, r))
                })
                .collect();
            (threads, cells)
        })
        .filter(|(_, cells): &(f64, Vec<_>)| !cells.is_empty())
        .collect();
    let estimates: Vec<LogEstimate> = groups
        .iter()
        .flat_map(|(_, cells)| cells.iter().filter_map(|(_, r)| r.as_ref().ok().copied()))
        .collect();
    let family = verdict::judge_with(
        &estimates,
        Correction::Holm,
        Correction::BenjaminiHochberg,
        MARGIN,
    );
    let mut judged = family.judged.iter().copied();
    let per_threads = groups
        .into_iter()
        .map(|(threads, cells)| {
            let cells: Vec<(f64, Result<Judged, String>)> = cells
                .into_iter()
                .map(|(size, r)| (size, r.map(|_| judged.next().expect("one per estimate"))))
                .collect();
            PerThreads {
                threads,
                outcome: classify(&cells),
                sizes: cells.iter().map(|(s, _)| *s).collect(),
                cells: cells
                    .iter()
                    .map(|(s, j)| (*s, j.as_ref().ok().copied()))
                    .collect(),
            }
        })
        .collect();
    (per_threads, family)
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
fn verdict(c: &PerThreads) -> String {
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
            verdict::percent(MARGIN)
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
            let mut s = format!(
                "at {at}: {challenger} beats {baseline} from {} on ({} there, {} CI {} to {})",
                size_label(*from),
                percent_change(*r),
                c.cells
                    .iter()
                    .find(|(s, _)| s == from)
                    .and_then(|(_, j)| j.map(|j| verdict::percent(j.confidence)))
                    .unwrap_or_else(|| "95 %".into()),
                percent_change(*lo),
                percent_change(*hi)
            );
            if !slower_at.is_empty() {
                s += &format!("; {baseline} is faster at {}", sizes(slower_at, &c.sizes));
            }
            s
        }
        Crossover::Equivalent { up_to } => format!(
            "at {at}: {challenger} and {baseline} are equivalent within ±{} at every size up to {} (two one-sided tests at the Holm level)",
            verdict::percent(MARGIN),
            size_label(*up_to)
        ),
        Crossover::Undecided { up_to, undecided_at } => format!(
            "at {at}: neither {challenger} nor {baseline} is shown faster at any size up to {}, and equivalence within ±{} is not shown at {}: undecided",
            size_label(*up_to),
            verdict::percent(MARGIN),
            sizes(undecided_at, &c.sizes)
        ),
        Crossover::NotFromAnySize {
            faster_at,
            slower_at,
            undecided_at,
            up_to,
        } => {
            let mut parts = Vec::new();
            if !faster_at.is_empty() {
                parts.push(format!(
                    "{challenger} is faster at {}",
                    sizes(faster_at, &c.sizes)
                ));
            }
            if !slower_at.is_empty() {
                parts.push(format!(
                    "{baseline} is faster at {}",
                    sizes(slower_at, &c.sizes)
                ));
            }
            if !undecided_at.is_empty() {
                parts.push(format!("undecided at {}", sizes(undecided_at, &c.sizes)));
            }
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
pub fn answer(points: &[&Point], challenger: &str, baseline: &str) -> Answer {
    let judged = judge(points, challenger, baseline);
    answer_from(points, challenger, baseline, question(challenger), judged)
}

/// Why the crossover family is held by Holm rather than Benjamini–Hochberg.
const WHY_HOLM: &str = "Holm (family-wise) for beats and slower: one false \"beats\" at any size changes where the crossover is said to start, so the chance of any false claim is held to 5 %; Benjamini–Hochberg for equivalence: where the two are alike reads as a share of cells, whose expected share of false equivalences is held to 5 %";

/// Each cell's state and interval, with the family's count and correction.
pub fn tested(points: &[&Point], challenger: &str, baseline: &str) -> TestedAnswer {
    let (per_threads, family) = judge(points, challenger, baseline);
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

fn question(challenger: &str) -> &'static str {
    match challenger {
        "gather" => "From which message size does gather (one copy) beat copy (two copies)?",
        "zerocopy" => "From which message size does zerocopy beat copy?",
        "uring" => "From which message size does io_uring send (uring) beat send()?",
        "uring-gather" => "From which message size does io_uring sendmsg (uring-gather) beat sendmsg (gather)?",
        "uring-zc" => "From which message size does io_uring zero-copy send (uring-zc) beat io_uring send (uring)?",
        "splice" => "From which message size does vmsplice+splice beat send()?",
        "sendfile" => "From which message size does sendfile from a memfd beat send()?",
        _ => "From which message size does one mechanism beat another?",
    }
}

/// Internal: the answer's body once judged.
fn answer_from(
    points: &[&Point],
    challenger: &str,
    baseline: &str,
    question: &'static str,
    (per_threads, family): (Vec<PerThreads>, Family),
) -> Answer {
    let used: Vec<&Point> = points
        .iter()
        .filter(|p| p.series() == challenger || p.series() == baseline)
        .copied()
        .collect();
    let count = |name: &str| used.iter().filter(|p| p.series() == name).count();
    let rests_on = format!(
        "receiver throughput of {} {challenger} and {} {baseline} stream points, {}: {PAIRED_BASIS}; {}; {WHY_HOLM}; each interval is shown at its Holm level",
        count(challenger),
        count(baseline),
        size_range(&used),
        family.control()
    );
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
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{jsonl, Shape};
    use crate::analysis::Dataset;

    fn data(shapes: &[Shape]) -> Dataset {
        parse(&jsonl(shapes), "r").unwrap()
    }

    fn pair(size: u64, copy: f64, gather: f64) -> [Shape; 2] {
        [
            Shape::stream("copy", size, 1, copy),
            Shape::stream("gather", size, 1, gather),
        ]
    }

    #[test]
    fn gather_beats_copy_from_the_first_size_of_a_run_of_paired_wins() {
        let shapes: Vec<Shape> = [
            pair(1024, 10.0, 10.01),
            pair(4096, 10.0, 12.0),
            pair(16384, 10.0, 13.0),
        ]
        .concat();
        let d = data(&shapes);
        let c = compare(&d.completed(), "gather", "copy");
        assert!(matches!(c[0].outcome, Crossover::BeatsFrom { from, .. } if from == 4096.0));
        let text = answer(&d.completed(), "gather", "copy").finding;
        assert!(
            text.starts_with("At 1 thread: gather beats copy from 4 KiB on (+20 %"),
            "{text}"
        );
    }

    #[test]
    fn tight_paired_intervals_near_one_are_equivalent_within_the_margin() {
        let shapes: Vec<Shape> = [pair(1024, 10.0, 10.01), pair(4096, 10.0, 9.99)].concat();
        let d = data(&shapes);
        let c = compare(&d.completed(), "gather", "copy");
        assert_eq!(c[0].outcome, Crossover::Equivalent { up_to: 4096.0 });
        let a = answer(&d.completed(), "gather", "copy");
        assert!(
            a.finding
                .contains("gather and copy are equivalent within ±5 % at every size up to 4 KiB"),
            "{}",
            a.finding
        );
        assert!(
            a.rests_on.contains("2 tests, Holm at α = 0.05"),
            "{}",
            a.rests_on
        );
    }

    #[test]
    fn a_verdict_flips_to_undecided_when_the_pair_is_noisier() {
        // The same 3 % gain: beats with quiet rounds, undecided with noisy ones (not "does not
        // beat": a 3 % gain is well inside what five noisy rounds can miss).
        let quiet: Vec<Shape> = pair(4096, 10.0, 10.3).into();
        let d = data(&quiet);
        assert!(matches!(
            compare(&d.completed(), "gather", "copy")[0].outcome,
            Crossover::BeatsFrom { .. }
        ));
        let mut noisy = quiet.clone();
        noisy.iter_mut().for_each(|s| s.pair_noise = 0.05);
        let d = data(&noisy);
        assert_eq!(
            compare(&d.completed(), "gather", "copy")[0].outcome,
            Crossover::Undecided {
                up_to: 4096.0,
                undecided_at: vec![4096.0]
            }
        );
        let a = answer(&d.completed(), "gather", "copy");
        assert_eq!(
            a.verdict.as_deref(),
            Some("1 thread: beats at no size shown; undecided at 4 KiB")
        );
    }

    #[test]
    fn a_marginal_win_alone_beats_and_among_many_cells_the_family_holds_it() {
        // 2.5 % faster with noisy pairs: beats on its own; once 24 cells are tested it is no
        // longer shown faster, only within the ±5 % margin.
        let mut one: Vec<Shape> = pair(4096, 10.0, 10.25).into();
        one.iter_mut().for_each(|s| s.pair_noise = 0.01);
        let d = data(&one);
        let alone = tested(&d.completed(), "gather", "copy");
        assert_eq!(
            (alone.tests, alone.count(Verdict::Beats)),
            (1, 1),
            "{alone:?}"
        );
        let mut many = one.clone();
        for size in (0..23).map(|i| 8192u64 << i) {
            let mut p: Vec<Shape> = pair(size, 10.0, 10.0).into();
            p.iter_mut().for_each(|s| s.pair_noise = 0.01);
            many.extend(p);
        }
        let d = data(&many);
        let family = tested(&d.completed(), "gather", "copy");
        assert_eq!(family.tests, 24);
        let first = &family.cells[0];
        assert_eq!(
            (first.cell.as_str(), first.state),
            ("4 KiB at 1 thread", Verdict::Equivalent)
        );
        assert!(
            (first.confidence - (1.0 - 0.05 / 24.0)).abs() < 1e-9,
            "{first:?}"
        );
    }

    #[test]
    fn sizes_are_listed_as_runs_of_measured_sizes() {
        let measured = [64.0, 256.0, 1024.0, 4096.0];
        assert_eq!(
            sizes(&[64.0, 256.0, 4096.0], &measured),
            "64 B to 256 B, 4 KiB"
        );
    }

    #[test]
    fn the_verdict_answers_the_question_asked_per_thread_count() {
        let mut shapes: Vec<Shape> = [pair(1024, 10.0, 8.0), pair(4096, 10.0, 10.01)].concat();
        shapes.extend(pair(1024, 10.0, 12.0).map(|s| Shape { threads: 2, ..s }));
        shapes.extend(pair(4096, 10.0, 8.0).map(|s| Shape { threads: 2, ..s }));
        let a = answer(&data(&shapes).completed(), "gather", "copy");
        assert_eq!(
            a.verdict.as_deref(),
            Some("1 thread: does not beat it at any size; 2 threads: faster at 1 KiB only, not from any size on"),
            "copy being faster at 1 KiB (1 thread) is in the finding, not in this verdict"
        );
        assert!(
            a.finding.contains("copy is faster at 1 KiB"),
            "{}",
            a.finding
        );
    }

    #[test]
    fn a_win_that_does_not_last_is_not_a_crossover() {
        let shapes: Vec<Shape> = [pair(1024, 10.0, 12.0), pair(4096, 10.0, 8.0)].concat();
        let d = data(&shapes);
        let c = compare(&d.completed(), "gather", "copy");
        assert_eq!(
            c[0].outcome,
            Crossover::NotFromAnySize {
                faster_at: vec![1024.0],
                slower_at: vec![4096.0],
                undecided_at: vec![],
                up_to: 4096.0
            }
        );
    }

    #[test]
    fn without_visits_it_cannot_be_said_and_says_why() {
        let mut shapes: Vec<Shape> = pair(4096, 10.0, 20.0).into();
        shapes.iter_mut().for_each(|s| s.statistics = false);
        let d = data(&shapes);
        let text = answer(&d.completed(), "gather", "copy").finding;
        assert!(
            text.contains("cannot be said: no per-visit figures"),
            "{text}"
        );
    }

    #[test]
    fn without_the_mechanisms_it_cannot_be_said() {
        let d = data(&[Shape::stream("copy", 4096, 1, 10.0)]);
        let a = answer(&d.completed(), "zerocopy", "copy");
        assert!(a.finding.starts_with("Cannot be said"), "{}", a.finding);
    }

    #[test]
    fn each_thread_count_gets_its_own_line() {
        let mut shapes: Vec<Shape> = pair(4096, 10.0, 12.0).into();
        shapes.push(Shape::stream("copy", 4096, 2, 18.0));
        shapes.push(Shape::stream("gather", 4096, 2, 18.02));
        let a = answer(&data(&shapes).completed(), "gather", "copy");
        assert!(
            a.finding.starts_with("At 1 thread: gather beats copy"),
            "{}",
            a.finding
        );
        assert_eq!(a.details.len(), 1);
        assert!(
            a.details[0].starts_with("at 2 threads: gather and copy are equivalent within ±5 %"),
            "{}",
            a.details[0]
        );
    }
}
