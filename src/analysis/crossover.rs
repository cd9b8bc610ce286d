//! "From which message size does one mechanism beat another?" A mechanism beats another at a
//! size only where the 95 % interval of their per-round paired throughput ratio excludes 1
//! (`paired`); where it includes 1 the two cannot be told apart on this machine. The answer is
//! given per thread count.
use super::paired::{self, PAIRED_BASIS};
use super::point::Point;
use super::{
    capitalize, distinct, find, percent_change, size_label, size_range, threads_label, Answer,
};
use crate::stats::visits::Direction;

/// How a challenger compares with a baseline across the sizes of one thread count.
#[derive(Debug, Clone, PartialEq)]
pub enum Crossover {
    /// Faster (the paired interval above 1) at `from` and at every larger size measured;
    /// `ratio` is (challenger / baseline, low, high) at `from`. `slower_at` lists smaller sizes
    /// where the baseline was faster.
    BeatsFrom {
        from: f64,
        ratio: (f64, f64, f64),
        slower_at: Vec<f64>,
    },
    /// The paired interval includes 1 at every size up to `up_to`.
    NoSignificantDifference {
        up_to: f64,
    },
    /// Differences exist, but none that holds from some size on.
    NotFromAnySize {
        faster_at: Vec<f64>,
        slower_at: Vec<f64>,
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
}

/// The comparison at every thread count where both mechanisms have stream points.
pub fn compare(points: &[&Point], challenger: &str, baseline: &str) -> Vec<PerThreads> {
    distinct(points, |p| p.threads)
        .into_iter()
        .filter_map(|threads| {
            let pairs: Vec<(f64, &Point, &Point)> = distinct(points, |p| p.size)
                .into_iter()
                .filter_map(|size| {
                    let c = find(points, challenger, size, threads)?;
                    let b = find(points, baseline, size, threads)?;
                    Some((size, c, b))
                })
                .collect();
            (!pairs.is_empty()).then(|| PerThreads {
                threads,
                outcome: classify(&pairs),
                sizes: pairs.iter().map(|(s, ..)| *s).collect(),
            })
        })
        .collect()
}

fn classify(pairs: &[(f64, &Point, &Point)]) -> Crossover {
    let mut judged = Vec::new();
    let mut why = None;
    for (size, c, b) in pairs {
        match paired::direction(c, b) {
            Ok((d, r)) => judged.push((*size, d, r)),
            Err(e) => why = why.or(Some(e)),
        }
    }
    let Some(&(up_to, ..)) = judged.last() else {
        return Crossover::CannotBeSaid(why.unwrap_or_else(|| "no paired visits".into()));
    };
    let sizes_where = |want: Direction| -> Vec<f64> {
        judged
            .iter()
            .filter(|(_, d, _)| *d == want)
            .map(|(s, ..)| *s)
            .collect()
    };
    let faster_at = sizes_where(Direction::Higher);
    let slower_at = sizes_where(Direction::Lower);
    let trailing = judged
        .iter()
        .rev()
        .take_while(|(_, d, _)| *d == Direction::Higher)
        .count();
    if trailing > 0 {
        let (from, _, r) = judged[judged.len() - trailing];
        return Crossover::BeatsFrom {
            from,
            ratio: (r.ratio, r.low, r.high),
            slower_at,
        };
    }
    if faster_at.is_empty() && slower_at.is_empty() {
        return Crossover::NoSignificantDifference { up_to };
    }
    Crossover::NotFromAnySize {
        faster_at,
        slower_at,
        up_to,
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
/// finding, not to this verdict: they answer the reverse question.
fn verdict(c: &PerThreads) -> String {
    let at = threads_label(c.threads);
    match &c.outcome {
        Crossover::BeatsFrom { from, .. } => format!("{at}: beats from {}", size_label(*from)),
        Crossover::NotFromAnySize { faster_at, .. } if !faster_at.is_empty() => format!(
            "{at}: faster at {} only, not from any size on",
            faster_at
                .iter()
                .map(|s| size_label(*s))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Crossover::NoSignificantDifference { .. } | Crossover::NotFromAnySize { .. } => {
            format!("{at}: does not beat it at any size")
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
                "at {at}: {challenger} beats {baseline} from {} on ({} there, 95 % CI {} to {})",
                size_label(*from),
                percent_change(*r),
                percent_change(*lo),
                percent_change(*hi)
            );
            if !slower_at.is_empty() {
                s += &format!("; {baseline} is faster at {}", sizes(slower_at, &c.sizes));
            }
            s
        }
        Crossover::NoSignificantDifference { up_to } => format!(
            "at {at}: {challenger} and {baseline} cannot be told apart on this machine up to {} (every paired interval includes 1)",
            size_label(*up_to)
        ),
        Crossover::NotFromAnySize {
            faster_at,
            slower_at,
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
            format!(
                "at {at}: {challenger} does not beat {baseline} from any size on up to {} ({})",
                size_label(*up_to),
                parts.join("; ")
            )
        }
        Crossover::CannotBeSaid(why) => format!("at {at}: cannot be said: {why}"),
    }
}

/// The report's answer for "from which size does `challenger` beat `baseline`".
pub fn answer(points: &[&Point], challenger: &str, baseline: &str) -> Answer {
    let question = match challenger {
        "gather" => "From which message size does gather (one copy) beat copy (two copies)?",
        "zerocopy" => "From which message size does zerocopy beat copy?",
        "uring" => "From which message size does io_uring send (uring) beat send()?",
        "uring-gather" => "From which message size does io_uring sendmsg (uring-gather) beat sendmsg (gather)?",
        "uring-zc" => "From which message size does io_uring zero-copy send (uring-zc) beat io_uring send (uring)?",
        "splice" => "From which message size does vmsplice+splice beat send()?",
        "sendfile" => "From which message size does sendfile from a memfd beat send()?",
        _ => "From which message size does one mechanism beat another?",
    };
    let per_threads = compare(points, challenger, baseline);
    let used: Vec<&Point> = points
        .iter()
        .filter(|p| p.series() == challenger || p.series() == baseline)
        .copied()
        .collect();
    let count = |name: &str| used.iter().filter(|p| p.series() == name).count();
    let rests_on = format!(
        "receiver throughput of {} {challenger} and {} {baseline} stream points, {}: {PAIRED_BASIS}",
        count(challenger),
        count(baseline),
        size_range(&used)
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
    fn paired_intervals_that_include_one_cannot_be_told_apart() {
        let shapes: Vec<Shape> = [pair(1024, 10.0, 10.01), pair(4096, 10.0, 9.99)].concat();
        let d = data(&shapes);
        let c = compare(&d.completed(), "gather", "copy");
        assert_eq!(
            c[0].outcome,
            Crossover::NoSignificantDifference { up_to: 4096.0 }
        );
        let text = answer(&d.completed(), "gather", "copy").finding;
        assert!(
            text.contains("gather and copy cannot be told apart on this machine up to 4 KiB"),
            "{text}"
        );
    }

    #[test]
    fn a_verdict_flips_to_cannot_be_told_apart_when_the_pair_is_noisier() {
        // The same 3 % gain: beats with quiet rounds, cannot be told apart with noisy ones.
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
            Crossover::NoSignificantDifference { up_to: 4096.0 }
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
            a.details[0].starts_with("at 2 threads: gather and copy cannot be told apart"),
            "{}",
            a.details[0]
        );
    }
}
