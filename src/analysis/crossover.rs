//! "From which message size does one mechanism beat another?" Every (size, thread count) cell
//! of the two mechanisms is one test of a family controlled by Holm's step-down: a single false
//! "beats" at the largest size would read "beats from 512 KiB on", so the chance of any false
//! claim is what must stay at 5 %. A cell is *beats* or *slower* where its Holm-level paired
//! interval excludes 1, *equivalent* where two one-sided tests place it within the margin
//! (`--margin`, default ±5 %; those claims held by Benjamini–Hochberg: a share of alike cells,
//! not a gate), else *undecided* (`stats::verdict`); "does not beat" is said only where no
//! cell is undecided. A sweep with adaptive rounds looked at each cell up to twice, so the
//! looks split α: its families are judged at the last look's 0.04 (`crossover_rule`).
use super::crossover_outcome::per_threads;
pub use super::crossover_outcome::{describe, verdict, PerThreads};
use super::crossover_rule::{Settings, PILOT_ALPHA};
use super::paired::{self, PAIRED_BASIS};
use super::point::Point;
use super::tested::{Cell, TestedAnswer};
use super::{capitalize, distinct, find, size_label, size_range, threads_label, Answer};
use crate::mechanism::MechanismKind;
use crate::stats::verdict::{self, Correction, Family, Judged, LogEstimate};
use crate::stats::visits::{pooled_lag1, RatioInterval};

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

/// One thread count's cells: (size, the paired estimate with its per-round log-ratios, or why
/// there is none).
type ThreadCells = (f64, Vec<(f64, Result<(LogEstimate, Vec<f64>), String>)>);

/// What a crossover is judged on: the paired ratio of a challenger's point over a baseline's,
/// above 1 where the challenger does better.
#[derive(Clone, Copy)]
pub struct Figure {
    pub name: &'static str,
    pub ratio: fn(&Point, &Point) -> Result<RatioInterval, String>,
    /// The per-round log-ratios `ratio` rests on, in round order: what the family's rounds'
    /// autocorrelation is pooled from.
    pub series: fn(&Point, &Point) -> Vec<f64>,
}

/// The headline figure (receiver Gbit/s of a stream; a sink's sender Gbit/s).
pub const HEADLINE: Figure = Figure {
    name: "throughput",
    ratio: paired::ratio,
    series: paired::log_ratios,
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
/// family (a claim on either figure moves the answer); one classification per figure. Every
/// estimate is widened by the family's pooled lag-1 autocorrelation of rounds
/// (`stats::visits::pooled_lag1`), at whichever look it is judged; a cell whose rounds are the
/// pilot's alone is judged at the pilot's α (`Settings::pilot_only`).
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
    let usable = || {
        groups
            .iter()
            .flatten()
            .flat_map(|(_, cells)| cells.iter().filter_map(|(_, r)| r.as_ref().ok()))
    };
    let cells: Vec<(LogEstimate, Vec<f64>)> = usable().cloned().collect();
    let family = judge_family(&cells, settings);
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

/// One crossover family from its cells' paired estimates and per-round log-ratio series (in
/// round order): every estimate widened by the family's pooled lag-1 autocorrelation of
/// rounds, then judged at the looks' α (`judge_looks`). What the report judges a question by,
/// and what the simulations (tests/adaptive_simulation.rs) call, so that they test this code.
pub fn judge_family(cells: &[(LogEstimate, Vec<f64>)], settings: Settings) -> Family {
    let series: Vec<Vec<f64>> = cells.iter().map(|(_, s)| s.clone()).collect();
    let rho = pooled_lag1(&series);
    let estimates: Vec<LogEstimate> = cells
        .iter()
        .map(|(e, _)| e.widened(rho.map_or(0.0, |r| r.rho)))
        .collect();
    let mut family = judge_looks(&estimates, settings);
    family.rho = rho;
    family
}

/// The family judged at the last look's α, except the cells whose rounds are the pilot's
/// alone: they were decided (or left) at the pilot's look, so they are judged at its α, taken
/// from the whole family judged again at that α (Holm over every cell holds its family-wise
/// error whichever cells are then read from it; the two looks' claims together stay within
/// α by Bonferroni over the looks).
fn judge_looks(estimates: &[LogEstimate], settings: Settings) -> Family {
    let corrections = (Correction::Holm, Correction::BenjaminiHochberg);
    let mut family = verdict::judge_at(estimates, corrections, settings.margin, settings.alpha());
    if estimates.iter().any(|e| settings.pilot_only(e.pairs)) {
        let pilot = verdict::judge_at(estimates, corrections, settings.margin, PILOT_ALPHA);
        for ((j, e), p) in family.judged.iter_mut().zip(estimates).zip(&pilot.judged) {
            if settings.pilot_only(e.pairs) {
                *j = *p;
            }
        }
    }
    family
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
                    let r = (figure.ratio)(c, b)
                        .map(|r| (LogEstimate::from_interval(&r), (figure.series)(c, b)));
                    Some((size, r))
                })
                .collect();
            (threads, cells)
        })
        .filter(|(_, cells): &(f64, Vec<_>)| !cells.is_empty())
        .collect()
}

/// The report's answer for "from which size does `challenger` beat `baseline`".
pub fn answer(points: &[&Point], challenger: &str, baseline: &str, settings: Settings) -> Answer {
    let judged = judge(points, challenger, baseline, settings);
    let question = question(challenger);
    answer_from(points, (challenger, baseline), question, judged, settings)
}

/// Why the crossover family is held by Holm rather than Benjamini–Hochberg.
pub(super) const WHY_HOLM: &str = "Holm (family-wise) for beats and slower: one false \"beats\" at any size changes where the crossover is said to start, so the chance of any false claim is held to 5 %; Benjamini–Hochberg for equivalence: where the two are alike reads as a share of cells, whose expected share of false equivalences is held to 5 %";

/// How a crossover family's intervals are shown: at each cell's step-down level, which is what
/// its test used, and not simultaneous. Making them simultaneous (Bonferroni at α/k for
/// every cell) would widen each by the family's size and decide fewer cells, while the claims
/// the family makes are already held by the step-down; so the intervals say what they are.
pub const STEP_DOWN: &str = "each interval is shown at its cell's Holm step-down level (the level its own test used): the intervals are not simultaneous, and all of a family's intervals cover together less often than any one level says";

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
        "receiver throughput of {} {challenger} and {} {baseline} stream points, {}: {PAIRED_BASIS}; {}; {WHY_HOLM}; {STEP_DOWN}",
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
