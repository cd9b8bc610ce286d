//! What a sweep shows while it runs: an indicatif progress bar (current point, done/total, ETA)
//! when stdout is a terminal, and one plain line per finished point otherwise (logs, CI).
use crate::report::units;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use std::io::IsTerminal;

pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
}

impl Progress {
    /// `to_measure` points in this session, out of `total` in the matrix.
    pub fn new(to_measure: usize, total: usize) -> Progress {
        let bar = std::io::stdout().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(
                Some(to_measure as u64),
                ProgressDrawTarget::stdout(),
            );
            let style = ProgressStyle::with_template(
                "{bar:30.cyan/blue} {pos}/{len} points, ETA {eta}  {msg}",
            )
            .expect("the template is valid");
            bar.set_style(style.progress_chars("=> "));
            bar
        });
        Progress { bar, total }
    }

    /// A point is starting (`index` is its 0-based position in the sweep's order).
    pub fn start(&self, index: usize, key: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "measuring {key} (point {} of {})",
                index + 1,
                self.total
            ));
        }
    }

    /// A point has finished and its record is saved.
    pub fn finish(&self, index: usize, record: &Value) {
        let line = point_line(index, self.total, record);
        match &self.bar {
            Some(bar) => {
                bar.println(line);
                bar.inc(1);
            }
            None => println!("{line}"),
        }
    }

    /// A line that is not about one point (kept above the bar).
    pub fn say(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => println!("{text}"),
        }
    }

    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `[ 3/16] gather/stream/4096/2  12.345 Gbit/s ± 1.2 %  (ci_target_met)`.
pub fn point_line(index: usize, total: usize, record: &Value) -> String {
    let width = total.to_string().len();
    let key = record
        .pointer("/sweep_point/key")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let head = format!("[{:>width$}/{total}] {key}", index + 1);
    match record["status"].as_str() {
        Some("failed") => {
            let errors: Vec<&str> = record["errors"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            format!("{head}  FAILED: {}", errors.join("; "))
        }
        Some("skipped") => {
            let reason = record["skipped_reason"].as_str().unwrap_or("?");
            format!("{head}  skipped: {reason}")
        }
        Some("interrupted") => {
            format!("{head}  interrupted: saved as interrupted; --resume measures it again")
        }
        _ => {
            let mismatch = record
                .pointer("/verify/mismatched_bytes")
                .and_then(Value::as_u64)
                .filter(|&n| n > 0)
                .map_or(String::new(), |n| format!("  VERIFY: {n} bytes wrong"));
            format!("{head}  {}{mismatch}", headline(record))
        }
    }
}

/// The point's headline figure with its CI and why it stopped, from the statistics block;
/// without one, the whole-run figure of the measured side.
pub fn headline(record: &Value) -> String {
    let stats = &record["statistics"];
    let metric = stats["metric"]
        .as_str()
        .unwrap_or(match record["config"]["pattern"].as_str() {
            Some("rr") => "round_trips_per_s",
            _ => "throughput_gbps",
        });
    let (mean, ci) = match stats["summary"].as_object() {
        Some(s) => (s["mean"].as_f64(), s["ci95_rel"].as_f64()),
        None if metric == "round_trips_per_s" => {
            (record["sides"][0]["messages_per_s"].as_f64(), None)
        }
        None => (record["sides"][1]["throughput_gbps"].as_f64(), None),
    };
    let figure = match (mean, metric) {
        (None, _) => "no figure".to_string(),
        (Some(v), "round_trips_per_s") => format!("{} round trips/s", units::count(v)),
        (Some(v), _) => format!("{v:.3} Gbit/s"),
    };
    let ci = ci.map_or(String::new(), |c| format!(" ± {:.1} %", c * 100.0));
    let stop = stats["stop_reason"]
        .as_str()
        .map_or(String::new(), |r| format!("  ({r})"));
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
                           "summary": {"mean": 12.3456, "ci95_rel": 0.012}},
        });
        assert_eq!(
            point_line(2, 16, &record),
            "[ 3/16] gather/stream/4096/2  12.346 Gbit/s ± 1.2 %  (ci_target_met)"
        );
    }

    #[test]
    fn without_statistics_the_measured_side_gives_the_figure() {
        let record = json!({
            "status": "completed",
            "config": {"pattern": "rr"},
            "sides": [{"messages_per_s": 45_200.0}, {}],
        });
        assert_eq!(headline(&record), "45.2 k round trips/s");
    }

    #[test]
    fn a_failed_point_shows_its_errors() {
        let record =
            json!({"status": "failed", "errors": ["no memory"], "sweep_point": {"key": "k"}});
        assert_eq!(point_line(0, 1, &record), "[1/1] k  FAILED: no memory");
    }
}
