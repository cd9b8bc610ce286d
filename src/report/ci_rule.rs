//! The method's CI rule: how each point's interval was formed, the CI target and where it was
//! met, why points stopped, and the three states every comparison takes; with the two
//! figures-over-records helpers the summary shares.
use crate::analysis::point::Point;
use crate::analysis::questions::Questions;
use crate::analysis::Dataset;
use crate::record::view::{RunView, StatisticsView};

/// Lowest to highest of `values`, or the one value, with `unit`.
pub(super) fn range(values: &[f64], unit: &str) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo == hi {
        format!("{lo}{unit}")
    } else {
        format!("{lo}{unit} to {hi}{unit}")
    }
}

/// The number `figure` reads of each record (those that have one).
pub(super) fn numbers(data: &Dataset, figure: impl Fn(&RunView) -> Option<f64>) -> Vec<f64> {
    data.records.iter().filter_map(figure).collect()
}

/// A figure of a record's statistics block.
pub(super) fn statistic(r: &RunView, figure: fn(&StatisticsView) -> Option<f64>) -> Option<f64> {
    r.statistics().and_then(figure)
}

/// Each stop reason with how many points stopped for it, in order of first appearance.
fn stop_reasons(points: &[Point]) -> Vec<String> {
    let mut stops: Vec<(String, usize)> = Vec::new();
    for reason in points.iter().filter_map(|p| p.stop_reason.clone()) {
        match stops.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => stops.push((reason, 1)),
        }
    }
    stops.iter().map(|(r, n)| format!("{r} ×{n}")).collect()
}

/// The CI target (a range over the records) and at how many points it was met.
fn ci_target(data: &Dataset) -> String {
    let points = &data.points;
    let targets = numbers(data, |r| statistic(r, |s| s.ci_target_rel));
    let met = points
        .iter()
        .filter(|p| p.ci_target_met == Some(true))
        .count();
    let judged = points.iter().filter(|p| p.ci_target_met.is_some()).count();
    if targets.is_empty() {
        "no CI target".to_string()
    } else {
        format!(
            "target ±{} of the mean, met at {met} of {judged} points",
            range(&targets.iter().map(|t| t * 100.0).collect::<Vec<_>>(), " %")
        )
    }
}

pub(super) fn ci_rule(data: &Dataset, questions: &Questions) -> (String, String) {
    let points = &data.points;
    let with_stats = points.iter().filter(|p| p.headline.is_some()).count();
    if with_stats == 0 {
        return (
            "CI rule".into(),
            "these records carry no statistics block: no confidence intervals, no error bars, \
             no \"beats\" decisions"
                .into(),
        );
    }
    let stops = stop_reasons(points);
    let target = ci_target(data);
    let visited = points.iter().filter(|p| !p.visits.is_empty()).count();
    let rule = if visited > 0 {
        format!(
            "95 % confidence interval of the mean of each point's visit means (Student's t on \
             visits − 1 degrees of freedom: between-visit variation, which holds the machine's \
             regime changes), present at {with_stats} of {} points",
            points.len()
        )
    } else {
        format!(
            "95 % confidence interval of the mean of per-slice values of one contiguous stretch \
             per point (Student's t on the effective sample size n(1-ρ)/(1+ρ)), present at \
             {with_stats} of {} points; such an interval describes that stretch only and does \
             not cover a re-run, so these records support no comparison between mechanisms \
             (measure again in visits)",
            points.len()
        )
    };
    (
        "CI rule".into(),
        format!(
            "{rule}; {target}; stop reasons: {}. Every comparison is one of three states, on the \
             per-round paired ratio (visited back to back in each round, order alternating; \
             Student's t on the per-round log-ratios): \"beats\" or \"is slower\" where its \
             interval excludes 1; \"equivalent within ±{margin}\" where two one-sided tests \
             place it inside [{low}, {high}]; \"undecided\" otherwise, never \"no difference\"; \
             from fewer than {min_pairs} paired rounds no interval is printed (its bounds would \
             rest on one degree of freedom) and the comparison stays undecided. Overlap of two \
             intervals is never used as a test. {families}{rejudged}",
            if stops.is_empty() {
                "none recorded".to_string()
            } else {
                stops.join(", ")
            },
            margin = crate::stats::verdict::percent(data.margin()),
            low = 1.0 - data.margin(),
            high = 1.0 + data.margin(),
            families = questions.families,
            rejudged = data
                .margin_note
                .as_ref()
                .map_or_else(String::new, |n| format!(" {n}")),
            min_pairs = crate::stats::interval::MIN_PAIRS,
        ),
    )
}
