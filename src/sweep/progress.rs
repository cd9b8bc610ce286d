//! What a sweep shows while it runs: an indicatif progress bar (round, current visit,
//! done/planned, ETA) when stdout is a terminal, and one plain line per finished visit
//! otherwise (logs, CI); at the end one line per point with its interval.
use crate::record::view::RunView;
use crate::record::VisitKind;
use crate::report::units;
use crate::stats::schedule::PlannedVisit;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Deserialize;
use serde_json::Value;
use std::io::IsTerminal;

pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
}

impl Progress {
    /// `planned` visits (the minimum rounds; adaptive rounds extend it), `total` points.
    pub fn new(planned: usize, total: usize) -> Progress {
        let bar = std::io::stdout().is_terminal().then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(planned as u64), ProgressDrawTarget::stdout());
            let style = ProgressStyle::with_template(
                "{bar:30.cyan/blue} {pos}/{len} visits, ETA {eta}  {msg}",
            )
            .expect("the template is valid");
            bar.set_style(style.progress_chars("=> "));
            bar
        });
        Progress { bar, total }
    }

    /// An adaptive round adds `visits` to the plan.
    pub fn extend(&self, visits: usize) {
        if let Some(bar) = &self.bar {
            bar.inc_length(visits as u64);
        }
    }

    /// A visit is starting.
    pub fn start(&self, planned: &PlannedVisit, key: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{}: {key}", round_label(planned)));
        }
    }

    /// A visit has finished and is saved.
    pub fn finish(&self, planned: &PlannedVisit, record: &Value) {
        let line = visit_line(planned, self.total, record);
        match &self.bar {
            Some(bar) => {
                bar.println(line);
                bar.inc(1);
            }
            None => println!("{line}"),
        }
    }

    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn round_label(planned: &PlannedVisit) -> String {
    match planned.kind {
        VisitKind::Headline => format!("round {}", planned.round + 1),
        VisitKind::Counters => "counters".into(),
        VisitKind::Profile => "profile".into(),
    }
}

/// A record as written, read for its line (a record this build wrote always reads).
fn view(record: &Value) -> RunView {
    RunView::deserialize(record).unwrap_or_default()
}

/// `round 2: [ 3/16] gather/stream/4096/2  12.345 Gbit/s` — one visit's own figure.
pub fn visit_line(planned: &PlannedVisit, total: usize, record: &Value) -> String {
    let record = view(record);
    let width = total.to_string().len();
    let key = record
        .visit
        .as_ref()
        .and_then(|v| v.key.as_deref())
        .unwrap_or("?");
    let head = format!(
        "{}: [{:>width$}/{total}] {key}",
        round_label(planned),
        planned.point + 1
    );
    match outcome(&record) {
        Some(problem) => format!("{head}  {problem}"),
        None if planned.kind == VisitKind::Counters => {
            format!("{head}  perf counters open (kept apart from the headline figures)")
        }
        None if planned.kind == VisitKind::Profile => {
            format!("{head}  sides sampled (kept apart from the headline figures)")
        }
        None => format!("{head}  {}", visit_figure(&record)),
    }
}

/// What went wrong with a record, if anything.
fn outcome(record: &RunView) -> Option<String> {
    match record.status.as_deref() {
        Some("failed") => Some(format!("FAILED: {}", record.errors().join("; "))),
        Some("skipped") => Some(format!(
            "skipped: {}",
            record.skipped_reason.as_deref().unwrap_or("?")
        )),
        Some("interrupted") => Some("interrupted: --resume makes it again".into()),
        _ => None,
    }
}

/// The measured side's whole-window rate: the client's messages (rr, crr) or the receiver's
/// Gbit/s (stream).
fn messages_per_s(record: &RunView) -> Option<f64> {
    record.side(0)?.messages_per_s
}
/// A stream's measured side: the receiver, or on a sink (one side) the sender.
fn receiver_gbps(record: &RunView) -> Option<f64> {
    let sink = record.config().network_placement() == Some("sink");
    record.side(usize::from(!sink))?.throughput_gbps
}

/// A visit's whole-window figure of the measured side.
fn visit_figure(record: &RunView) -> String {
    match record.config().pattern() {
        "rr" => messages_per_s(record).map_or("no figure".into(), |v| {
            format!("{} round trips/s", units::count(v))
        }),
        "crr" => messages_per_s(record).map_or("no figure".into(), |v| {
            format!("{} transactions/s", units::count(v))
        }),
        _ => receiver_gbps(record).map_or("no figure".into(), |v| format!("{v:.3} Gbit/s")),
    }
}

/// `[ 3/16] gather/stream/4096/2  12.345 Gbit/s ± 1.2 %  (4 visits; ci_target_met)`.
pub fn point_line(index: usize, total: usize, record: &Value) -> String {
    let record = view(record);
    let width = total.to_string().len();
    let key = record.key().unwrap_or("?");
    let head = format!("[{:>width$}/{total}] {key}", index + 1);
    match outcome(&record) {
        Some(problem) => format!("{head}  {problem}"),
        None => {
            let mismatch = record
                .verify
                .and_then(|v| v.mismatched_bytes)
                .filter(|&n| n > 0)
                .map_or(String::new(), |n| format!("  VERIFY: {n} bytes wrong"));
            format!("{head}  {}{mismatch}", headline(&record))
        }
    }
}

/// The point's headline figure with its CI and why it stopped, from the statistics block;
/// without one, the whole-run figure of the measured side.
fn headline(record: &RunView) -> String {
    let stats = record.statistics.clone().unwrap_or_default();
    let metric = stats
        .metric
        .as_deref()
        .unwrap_or(match record.config().pattern() {
            "rr" => "round_trips_per_s",
            "crr" => "transactions_per_s",
            _ => "throughput_gbps",
        });
    let (mean, ci) = match stats.summary {
        Some(s) => (Some(s.mean), Some(s.ci95_rel)),
        None if metric == "round_trips_per_s" || metric == "transactions_per_s" => {
            (messages_per_s(record), None)
        }
        None => (receiver_gbps(record), None),
    };
    let figure = match (mean, metric) {
        (None, _) => "no figure".to_string(),
        (Some(v), "round_trips_per_s") => format!("{} round trips/s", units::count(v)),
        (Some(v), "transactions_per_s") => format!("{} transactions/s", units::count(v)),
        (Some(v), _) => format!("{v:.3} Gbit/s"),
    };
    let ci = ci.map_or(String::new(), |c| format!(" ± {:.1} %", c * 100.0));
    let visits = stats
        .visits
        .as_ref()
        .map_or(String::new(), |v| format!("{} visits; ", v.count));
    let stop = stats
        .stop_reason
        .as_deref()
        .map_or(String::new(), |r| format!("  ({visits}{r})"));
    format!("{figure}{ci}{stop}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_point_line_gives_the_figure_its_ci_and_stop_reason() {
        let record = json!({
            "status": "completed",
            "sweep_point": {"key": "gather/stream/4096/2"},
            "config": {"pattern": "stream"},
            "statistics": {"metric": "throughput_gbps", "stop_reason": "ci_target_met",
                           "summary": {"n": 4, "mean": 12.3456, "stddev": 0.1,
                                       "ci95_low": 12.2, "ci95_high": 12.5,
                                       "ci95_half_width": 0.15, "ci95_rel": 0.012},
                           "visits": {"count": 4, "min_visits": 3, "visit_s": 0.3,
                                      "warmup_s": 0.1, "rounds": [0, 1, 2, 3],
                                      "between_visit_cv": null, "within_visit_cv": null,
                                      "counters_round": null}},
        });
        assert_eq!(
            point_line(2, 16, &record),
            "[ 3/16] gather/stream/4096/2  12.346 Gbit/s ± 1.2 %  (4 visits; ci_target_met)"
        );
    }

    #[test]
    fn a_visit_line_gives_its_round_and_its_own_figure() {
        let record = json!({
            "status": "completed",
            "visit": {"key": "copy/rr/64/1"},
            "config": {"pattern": "rr"},
            "sides": [{"messages_per_s": 45_200.0}, {}],
        });
        let mut planned = PlannedVisit {
            point: 4,
            group: 0,
            round: 1,
            kind: VisitKind::Headline,
        };
        assert_eq!(
            visit_line(&planned, 12, &record),
            "round 2: [ 5/12] copy/rr/64/1  45.2 k round trips/s"
        );
        planned.kind = VisitKind::Counters;
        assert!(visit_line(&planned, 12, &record)
            .starts_with("counters: [ 5/12] copy/rr/64/1  perf counters open"));
    }

    #[test]
    fn without_statistics_the_measured_side_gives_the_figure() {
        let record = json!({
            "status": "completed",
            "config": {"pattern": "rr"},
            "sides": [{"messages_per_s": 45_200.0}, {}],
        });
        assert_eq!(headline(&view(&record)), "45.2 k round trips/s");
    }

    #[test]
    fn a_failed_point_shows_its_errors() {
        let record =
            json!({"status": "failed", "errors": ["no memory"], "sweep_point": {"key": "k"}});
        assert_eq!(point_line(0, 1, &record), "[1/1] k  FAILED: no memory");
    }
}
