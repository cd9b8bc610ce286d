//! The latency CDF of a study's round-trip points (rr and crr): for each point, the share of
//! its round trips (transactions) that took at most x, read from the whole histogram its
//! record keeps, so the tail the percentiles leave out is drawn too. One series per mechanism
//! and size, one panel per pattern and flow count.
use super::plot::axis::{Scale, TickFormat};
use super::plot::{Datum, Panel, Plot, Series};
use super::plots::{color, Figure};
use super::units::duration_ns;
use crate::analysis::{size_label, Dataset};
use crate::measure::histogram::LatencyHistogram;
use crate::measure::percentiles::{label, PercentileValue};
use crate::record::view::RunView;
use std::fmt::Write as _;

/// A line this many steps at most: a histogram's buckets thinned evenly, its last kept.
const MOST_STEPS: usize = 160;

/// One point's curve, with what names it.
struct Curve {
    panel: String,
    name: String,
    mechanism: String,
    steps: Vec<(f64, f64)>,
}

/// The CDF figure, or `None` where no completed rr or crr point kept a histogram (a stream
/// study, or records older than the histograms).
pub fn latency_cdf(data: &Dataset) -> Option<Figure> {
    let curves: Vec<Curve> = data.records.iter().filter_map(curve).collect();
    if curves.is_empty() {
        return None;
    }
    let mut panels: Vec<Panel> = Vec::new();
    for c in curves {
        let series = Series {
            name: c.name.clone(),
            color: color(&c.mechanism),
            dashed: false,
            data: c.steps.iter().map(|&(x, y)| datum(&c.name, x, y)).collect(),
        };
        match panels.iter_mut().find(|p| p.title == c.panel) {
            Some(p) => p.series.push(series),
            None => panels.push(Panel {
                title: c.panel,
                series: vec![series],
                note: None,
            }),
        }
    }
    Some(Figure {
        heading: "Latency CDF (whole distribution)".into(),
        caption: "Share of round trips (rr; crr: whole transactions), timed on the client, \
                  that took at most x: each point's whole histogram over its measured visits, \
                  x on a log scale, one line per mechanism and message size, one panel per \
                  pattern and flow count. Where a line bends right near 1 is its tail."
            .into(),
        plot: Plot {
            id: "latency-cdf",
            x_label: "latency (µs)".into(),
            y_label: "cumulative fraction".into(),
            x_scale: Scale::Log10,
            x_format: TickFormat::Number,
            y_scale: Scale::Linear,
            panels,
            columns: 0,
        },
    })
}

fn datum(name: &str, x_us: f64, y: f64) -> Datum {
    Datum {
        x: x_us,
        y,
        ci: None,
        title: format!("{name}: {:.4} % at most {x_us:.3} µs", y * 100.0),
    }
}

/// A completed rr or crr point's client-side curve; `None` for any other record.
fn curve(r: &RunView) -> Option<Curve> {
    let config = r.config.as_ref()?;
    let pattern = config.pattern.as_deref()?;
    if r.status() != "completed" || !matches!(pattern, "rr" | "crr") {
        return None;
    }
    let client = r.side(0)?;
    let h = LatencyHistogram::from_hdr_base64(client.latency_histogram_hdr.as_deref()?).ok()?;
    let mechanism = config.mechanism.clone().unwrap_or_default();
    let size = config.message_size_bytes.as_ref().and_then(|n| n.as_f64());
    let threads = config
        .threads
        .as_ref()
        .and_then(|n| n.as_f64())
        .unwrap_or(1.0);
    let mut name = mechanism.clone();
    if let Some(t) = &config.transport {
        name += &format!(" over {t}");
    }
    if let Some(size) = size {
        name += &format!(" {}", size_label(size));
    }
    Some(Curve {
        panel: format!(
            "{pattern}, {} flow{}",
            threads,
            if threads == 1.0 { "" } else { "s" }
        ),
        name,
        mechanism,
        steps: steps(&h),
    })
}

/// (bucket's highest value in µs, share of samples at or below it), thinned to
/// [`MOST_STEPS`] with the first and last bucket kept.
fn steps(h: &LatencyHistogram) -> Vec<(f64, f64)> {
    let total = h.len() as f64;
    let mut below = 0u64;
    let all: Vec<(f64, f64)> = h
        .buckets()
        .map(|b| {
            below += b.count;
            (b.high_ns as f64 / 1000.0, below as f64 / total)
        })
        .collect();
    let every = all.len().div_ceil(MOST_STEPS).max(1);
    let last = all.len().saturating_sub(1);
    all.into_iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0 || *i == last)
        .map(|(_, s)| s)
        .collect()
}

/// report.md's list beside the figure (drawn with the others under Figures): each rr and crr
/// point's recorded percentiles (`--percentiles`), read from the histograms the figure draws.
pub fn markdown_section(data: &Dataset) -> String {
    let Some(f) = latency_cdf(data) else {
        return String::new();
    };
    let lists: Vec<(String, &[PercentileValue])> = data
        .records
        .iter()
        .filter(|r| curve(r).is_some())
        .filter_map(|r| {
            let list = r.side(0)?.latency_percentiles_ns.as_deref()?;
            let key = r.sweep_point.as_ref().and_then(|p| p.key.clone());
            Some((key.unwrap_or_default(), list))
        })
        .collect();
    let mut out = format!(
        "## Recorded latency percentiles\n\nEach point's percentiles, read from the \
         histograms the figure \"{}\" draws:\n\n",
        f.heading
    );
    // A list, not a table: report.md's one table is its points'.
    for (key, list) in lists {
        let cells: Vec<String> = list
            .iter()
            .map(|v| format!("{} {}", label(v.percentile), duration_ns(v.ns as f64)))
            .collect();
        let _ = writeln!(out, "- **{key}**: {}", cells.join(", "));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_rise_to_one_and_keep_the_tail() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 37);
        }
        h.record(90_000_000);
        let s = steps(&h);
        assert!(s.len() <= MOST_STEPS + 1, "{}", s.len());
        assert!(s.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        let &(x, y) = s.last().unwrap();
        assert_eq!(y, 1.0);
        assert!(
            (x - 90_000.0).abs() / 90_000.0 < 0.001,
            "the tail sample is drawn: {x}"
        );
    }

    #[test]
    fn a_stream_study_has_no_cdf() {
        use crate::analysis::load::parse;
        use crate::analysis::synthetic::{demo_sweep, jsonl};
        let data = parse(&jsonl(&demo_sweep(false)), "r").unwrap();
        // The synthetic records keep no histogram: no figure rather than an empty one.
        assert!(latency_cdf(&data).is_none());
    }
}
