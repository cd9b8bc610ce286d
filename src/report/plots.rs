//! The report's figures, built from a `Dataset`: throughput vs size, latency vs threads, CPU
//! cost per byte, cache misses and context switches per MiB, and the probe's memcpy roofline
//! against threads. Each says what it shows and why a panel is empty.
use super::plot::axis::{Scale, TickFormat};
use super::plot::{Datum, Panel, Plot, Series};
use crate::analysis::point::Point;
use crate::analysis::{distinct, mechanism_rank, plural, size_label, threads_label, Dataset};
use crate::mechanism::MechanismKind;
use crate::record::Metric;

/// A plot with its heading and the sentence under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub heading: String,
    pub caption: String,
    pub plot: Plot,
}

/// A fixed colour per mechanism, so every plot uses the same one: the four the default sweep
/// measures have their own; any other series one of four more, by its name.
pub fn color(series: &str) -> &'static str {
    const OWN: [(MechanismKind, &str); 4] = [
        (MechanismKind::SEND, "#555555"),
        (MechanismKind::COPY, "#d62728"),
        (MechanismKind::GATHER, "#1f77b4"),
        (MechanismKind::ZEROCOPY, "#2ca02c"),
    ];
    const OTHERS: [&str; 4] = ["#9467bd", "#ff7f0e", "#8c564b", "#e377c2"];
    match OWN.iter().find(|(m, _)| m.name() == series) {
        Some((_, own)) => own,
        None => OTHERS[series.bytes().map(usize::from).sum::<usize>() % OTHERS.len()],
    }
}

fn series_names(points: &[&Point]) -> Vec<String> {
    let mut names: Vec<(usize, String)> = points
        .iter()
        .map(|p| (mechanism_rank(&p.mechanism), p.series()))
        .collect();
    names.sort();
    names.dedup();
    names.into_iter().map(|(_, n)| n).collect()
}

/// One panel per value of `panel_of`, one series per mechanism, points from `datum`.
fn panels(
    points: &[&Point],
    panel_of: fn(&Point) -> f64,
    title: fn(f64) -> String,
    x_of: fn(&Point) -> f64,
    datum: &dyn Fn(&Point) -> Option<Datum>,
) -> Vec<Panel> {
    distinct(points, panel_of)
        .into_iter()
        .map(|key| {
            let in_panel: Vec<&Point> = points
                .iter()
                .filter(|p| panel_of(p) == key)
                .copied()
                .collect();
            let series = series_names(&in_panel)
                .into_iter()
                .map(|name| Series {
                    color: color(&name),
                    dashed: false,
                    data: in_panel
                        .iter()
                        .filter(|p| p.series() == name)
                        .filter_map(|p| datum(p).map(|d| Datum { x: x_of(p), ..d }))
                        .collect(),
                    name,
                })
                .collect();
            Panel {
                title: title(key),
                series,
                note: None,
            }
        })
        .collect()
}

fn empty(note: &str) -> Vec<Panel> {
    vec![Panel {
        title: String::new(),
        series: Vec::new(),
        note: Some(note.into()),
    }]
}

fn by_size_plot(id: &'static str, y_label: &str, panels: Vec<Panel>) -> Plot {
    Plot {
        id,
        x_label: "message size".into(),
        y_label: y_label.into(),
        x_scale: Scale::Log2,
        x_format: TickFormat::Bytes,
        y_scale: Scale::Linear,
        panels,
        columns: 0,
    }
}

fn describe(p: &Point) -> String {
    format!(
        "{} {}, {}",
        p.series(),
        size_label(p.size),
        threads_label(p.threads)
    )
}

fn throughput(stream: &[&Point]) -> Figure {
    let datum = |p: &Point| {
        let (y, ci) = p.throughput_with_ci();
        let range = ci.map_or(" (no CI)".into(), |s| {
            format!(" ± {:.2} (95 % CI)", s.ci95_half_width)
        });
        Some(Datum {
            x: 0.0,
            y,
            ci: ci.map(|s| (s.ci95_low, s.ci95_high)),
            title: format!("{}: {y:.2} Gbit/s{range}", describe(p)),
        })
    };
    let without_ci = stream
        .iter()
        .filter(|p| p.throughput_with_ci().1.is_none())
        .count();
    let mut caption = format!(
        "Receiver payload throughput (stream), one panel per thread count; error bars are {}.",
        interval_basis(stream)
    );
    if without_ci > 0 {
        caption += &format!(
            " No error bar at {}: no statistics block (confidence interval) in the record.",
            plural(without_ci, "point")
        );
    }
    Figure {
        heading: "Throughput vs message size".into(),
        caption,
        plot: by_size_plot("throughput", "Gbit/s", by_threads(stream, &datum)),
    }
}

/// What a point's interval is taken over: its visits (a study's points) or the slices of its
/// one contiguous run (`bytepath run`, schema-1 sweeps).
fn interval_basis(points: &[&Point]) -> &'static str {
    let visited = points.iter().filter(|p| !p.visits.is_empty()).count();
    match (visited, points.len() - visited) {
        (_, 0) => "the 95 % confidence interval over each point's visits",
        (0, _) => "the 95 % confidence interval of the per-slice mean of each point's one run",
        _ => {
            "the 95 % confidence interval over a point's visits, or of the per-slice mean where \
             a point was measured in one run"
        }
    }
}

fn latency(data: &Dataset) -> Figure {
    let rr = data.completed_with_pattern("rr");
    let (points, what) = if rr.is_empty() {
        (
            data.completed_with_pattern("stream"),
            "stream receiver: time to take in one whole message (no rr points in these results)",
        )
    } else {
        (rr, "round trip (rr), timed on the client")
    };
    // One thread count (an ipc study, a one-flow sweep): latency against size is the plot.
    let by_size = distinct(&points, |p| p.threads).len() == 1;
    let mut panels = latency_panels(&points, by_size);
    if panels.is_empty() || points.is_empty() {
        panels = empty("no completed points with latency");
    }
    let (heading, x_label, x_format, layout) = if by_size {
        (
            "Latency p50 and p99 vs message size",
            "message size",
            TickFormat::Bytes,
            "one line pair per series",
        )
    } else {
        (
            "Latency p50 and p99 vs threads",
            "threads",
            TickFormat::Number,
            "one panel per message size",
        )
    };
    Figure {
        heading: heading.into(),
        caption: format!(
            "Latency: {what}; {layout}; log scales; solid p50, dashed p99 (percentiles of a \
             histogram, no CI)."
        ),
        plot: Plot {
            id: "latency",
            x_label: x_label.into(),
            y_label: "µs".into(),
            x_scale: Scale::Log2,
            x_format,
            y_scale: Scale::Log10,
            panels,
            columns: 0,
        },
    }
}

/// One panel of every series against size, or with several thread counts one panel per size
/// against threads.
fn latency_panels(points: &[&Point], by_size: bool) -> Vec<Panel> {
    let mut panels = Vec::new();
    if by_size {
        panels.push(Panel {
            title: threads_label(points[0].threads),
            series: latency_series(points, |p| p.size),
            note: None,
        });
    } else {
        for size in distinct(points, |p| p.size) {
            let in_panel: Vec<&Point> = points.iter().filter(|p| p.size == size).copied().collect();
            panels.push(Panel {
                title: size_label(size),
                series: latency_series(&in_panel, |p| p.threads),
                note: None,
            });
        }
    }
    panels
}

/// p50 (solid) and p99 (dashed) of each series, against `x`.
fn latency_series(points: &[&Point], x: fn(&Point) -> f64) -> Vec<Series> {
    let mut series = Vec::new();
    for name in series_names(points) {
        for (label, dashed, pick) in [("p50", false, 0), ("p99", true, 1)] {
            let data = points
                .iter()
                .filter(|p| p.series() == name)
                .filter_map(|p| {
                    let l = p.latency.as_ref()?;
                    let us = [l.p50_ns, l.p99_ns][pick] / 1e3;
                    Some(Datum {
                        x: x(p),
                        y: us,
                        ci: None,
                        title: format!("{} {label}: {us:.2} µs", describe(p)),
                    })
                })
                .collect();
            series.push(Series {
                name: format!("{name} {label}"),
                color: color(&name),
                dashed,
                data,
            });
        }
    }
    series
}

fn cpu_cost(stream: &[&Point]) -> Figure {
    let cycles = !stream.is_empty()
        && stream
            .iter()
            .all(|p| matches!(p.cycles_per_byte, Metric::Value(_)));
    let (label, caption) = if cycles {
        let caption = "CPU cycles per payload byte, sender and receiver together (perf \
                       counters, user and kernel where permitted).";
        ("cycles / byte", caption.to_string())
    } else {
        let why = first_reason(stream, |p| &p.cycles_per_byte);
        let caption = format!(
            "CPU-ns per payload byte (getrusage user + system time), sender and receiver \
             together; cycles per byte are not shown: {}.",
            why.unwrap_or_else(|| "no stream points".into())
        );
        ("CPU-ns / byte", caption)
    };
    let datum = |p: &Point| {
        let y = match (&p.cycles_per_byte, cycles) {
            (Metric::Value(v), true) => *v,
            _ => p.cpu_ns_per_byte()?,
        };
        Some(Datum {
            x: 0.0,
            y,
            ci: None,
            title: format!("{}: {y:.3} {label}", describe(p)),
        })
    };
    Figure {
        heading: format!("CPU cost per byte ({label}) vs message size"),
        caption: format!("{caption} Log scale."),
        plot: Plot {
            y_scale: Scale::Log10,
            ..by_size_plot("cpu", label, by_threads(stream, &datum))
        },
    }
}

fn cache_misses(stream: &[&Point]) -> Figure {
    let counted = |p: &&&Point| {
        matches!(p.llc_misses_per_kib, Metric::Value(_))
            || matches!(p.l1d_misses_per_kib, Metric::Value(_))
    };
    let mut panels = Vec::new();
    let mut columns = 0;
    if stream.iter().any(|p| counted(&p)) {
        // LLC panels on one row, L1d below, a column per thread count.
        columns = distinct(stream, |p| p.threads).len().clamp(1, 3);
        for (level, pick) in [("LLC", true), ("L1d", false)] {
            let datum = |p: &Point| {
                let m = if pick {
                    &p.llc_misses_per_kib
                } else {
                    &p.l1d_misses_per_kib
                };
                let y = m.value()?;
                Some(Datum {
                    x: 0.0,
                    y,
                    ci: None,
                    title: format!("{}: {y:.2} {level} load misses / KiB", describe(p)),
                })
            };
            let mut level_panels = by_threads(stream, &datum);
            for p in &mut level_panels {
                p.title = format!("{level} load misses, {}", p.title);
            }
            panels.extend(level_panels);
        }
    } else {
        let note = match first_reason(stream, |p| &p.llc_misses_per_kib) {
            Some(r) => format!(
                "LLC and L1d misses were not measured: {r} \
                 (counters.llc_load_misses_unavailable_reason)"
            ),
            None => "no completed stream points".into(),
        };
        panels = empty(&note);
    }
    Figure {
        heading: "Cache misses vs message size".into(),
        caption: "LLC and L1d load misses of both sides per KiB of payload (perf counters).".into(),
        plot: Plot {
            columns,
            ..by_size_plot("cache", "misses / KiB", panels)
        },
    }
}

/// A panel per thread count over message size, or a panel saying there are no points.
fn by_threads(stream: &[&Point], datum: &dyn Fn(&Point) -> Option<Datum>) -> Vec<Panel> {
    let panels = panels(stream, |p| p.threads, threads_label, |p| p.size, datum);
    if panels.is_empty() {
        empty("no completed stream points")
    } else {
        panels
    }
}

/// The first stated reason a metric is missing.
fn first_reason(stream: &[&Point], metric: fn(&Point) -> &Metric) -> Option<String> {
    stream.iter().find_map(|p| match metric(p) {
        Metric::Unavailable(r) => Some(r.clone()),
        Metric::Value(_) => None,
    })
}

fn context_switches(stream: &[&Point]) -> Figure {
    let datum = |p: &Point| {
        let y = p.context_switches_per_mib?;
        Some(Datum {
            x: 0.0,
            y,
            ci: None,
            title: format!("{}: {y:.1} context switches / MiB", describe(p)),
        })
    };
    Figure {
        heading: "Context switches per MiB vs message size".into(),
        caption: "Voluntary and involuntary context switches of both sides (getrusage) per MiB \
                  of payload received. Log scale."
            .into(),
        plot: Plot {
            y_scale: Scale::Log10,
            ..by_size_plot(
                "context-switches",
                "switches / MiB",
                by_threads(stream, &datum),
            )
        },
    }
}

/// The probe's memcpy curve: aggregate bandwidth beyond the caches against the threads
/// copying at once, beside what one thread's figure would give if it scaled; `None` where the
/// folder's probe has no curve.
fn roofline_curve(data: &Dataset) -> Option<Figure> {
    let curve = data.probe.as_ref()?.thread_curve();
    let &(_, one) = curve.first().filter(|(n, _)| *n == 1)?;
    let datum = |n: u64, y: f64, what: &str| Datum {
        x: n as f64,
        y,
        ci: None,
        title: format!("{}: {y:.2} GB/s {what}", threads_label(n as f64)),
    };
    let measured = curve
        .iter()
        .map(|&(n, v)| datum(n, v, "copied together (best trial)"))
        .collect();
    let scaled = curve
        .iter()
        .map(|&(n, _)| datum(n, one * n as f64, "if one thread's memcpy scaled"))
        .collect();
    Some(Figure {
        heading: "memcpy roofline vs threads".into(),
        caption: format!(
            "Bytes copied per second beyond the caches by 1, 2, 4 … N threads at once (bytepath \
             probe, best trial; solid), against one thread's figure times the threads (dashed). \
             Each point of the table is held against this curve: {}.",
            super::limits::CEILING_RULE
        ),
        plot: Plot {
            id: "roofline",
            x_label: "threads copying at once".into(),
            y_label: "GB/s".into(),
            x_scale: Scale::Log2,
            x_format: TickFormat::Number,
            y_scale: Scale::Linear,
            panels: vec![Panel {
                title: "memcpy beyond the caches".into(),
                series: vec![
                    Series {
                        name: "threads together".into(),
                        color: "#1f77b4",
                        dashed: false,
                        data: measured,
                    },
                    Series {
                        name: "one thread × threads".into(),
                        color: "#555555",
                        dashed: true,
                        data: scaled,
                    },
                ],
                note: None,
            }],
            columns: 1,
        },
    })
}

/// Every figure of the report, in page order (the memcpy curve last, where the probe has one).
pub fn figures(data: &Dataset) -> Vec<Figure> {
    let stream = data.completed_with_pattern("stream");
    let mut figures = vec![
        throughput(&stream),
        latency(data),
        cpu_cost(&stream),
        cache_misses(&stream),
        context_switches(&stream),
    ];
    figures.extend(roofline_curve(data));
    // Cycles per byte, the seeds' fourth plot, right after the CPU figure where it is not it.
    if let Some(cpu) = figures.iter().position(|f| f.plot.id == "cpu") {
        let cycles = cycles_not_measured(&stream, &figures[cpu]);
        figures.splice(cpu + 1..cpu + 1, cycles);
    }
    figures
}

/// Where the CPU figure shows CPU-ns because cycles were not counted, a figure of cycles per
/// byte whose panel says why, so the plot a reader looks for is there, empty for a reason.
fn cycles_not_measured(stream: &[&Point], cpu: &Figure) -> Option<Figure> {
    let why = first_reason(stream, |p| &p.cycles_per_byte)?;
    (cpu.plot.y_label != "cycles / byte").then(|| Figure {
        heading: "Cycles per byte vs message size".into(),
        caption: "CPU cycles per payload byte, sender and receiver together (perf counters)."
            .into(),
        plot: by_size_plot(
            "cycles",
            "cycles / byte",
            empty(&format!(
                "cycles per byte were not measured: {why} (counters.cycles_unavailable_reason)"
            )),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{demo_sweep, jsonl, Shape};

    fn markers(f: &Figure) -> usize {
        f.plot
            .panels
            .iter()
            .flat_map(|p| &p.series)
            .map(|s| s.data.len())
            .sum()
    }

    #[test]
    fn the_demo_sweep_fills_every_plot_with_a_pmu() {
        let data = parse(&jsonl(&demo_sweep(true)), "r").unwrap();
        let figures = figures(&data);
        let stream = data.completed_with_pattern("stream").len();
        assert_eq!(markers(&figures[0]), stream);
        assert_eq!(figures[0].plot.panels.len(), 2, "a panel per thread count");
        assert_eq!(
            markers(&figures[1]),
            2 * data.completed_with_pattern("rr").len()
        );
        assert_eq!(figures[2].plot.y_label, "cycles / byte");
        assert_eq!(markers(&figures[3]), 2 * stream);
        assert_eq!(markers(&figures[4]), stream);
    }

    #[test]
    fn without_a_pmu_cpu_is_in_ns_and_cache_says_why() {
        let data = parse(&jsonl(&demo_sweep(false)), "r").unwrap();
        let figures = figures(&data);
        assert_eq!(figures[2].plot.y_label, "CPU-ns / byte");
        assert!(figures[2].caption.contains("no PMU"));
        let note = figures[4].plot.panels[0].note.as_deref().unwrap();
        assert!(note.contains("not measured: no PMU"), "{note}");
        // Cycles per byte, right after the CPU figure, empty and saying why.
        assert_eq!(figures[3].plot.id, "cycles");
        let note = figures[3].plot.panels[0].note.as_deref().unwrap();
        assert!(
            note.contains("cycles per byte were not measured: no PMU"),
            "{note}"
        );
        assert_eq!(markers(&figures[3]), 0);
    }

    #[test]
    fn stream_latency_stands_in_when_there_are_no_round_trips() {
        let data = parse(&jsonl(&[Shape::stream("copy", 4096, 1, 10.0)]), "r").unwrap();
        let f = &figures(&data)[1];
        assert!(f.caption.contains("no rr points"));
        assert_eq!(markers(f), 2);
    }

    #[test]
    fn the_error_bars_say_whether_they_span_visits_or_one_runs_slices() {
        let shapes = [
            Shape::stream("copy", 4096, 1, 10.0),
            Shape::stream("gather", 4096, 1, 11.0),
        ];
        let data = parse(&jsonl(&shapes), "r").unwrap();
        assert!(figures(&data)[0]
            .caption
            .contains("error bars are the 95 % confidence interval over each point's visits."));
        let visited: Vec<Point> = data
            .completed_with_pattern("stream")
            .into_iter()
            .cloned()
            .collect();
        let mut one_run = visited.clone();
        one_run.iter_mut().for_each(|p| p.visits.clear());
        let basis = |points: &[Point]| interval_basis(&points.iter().collect::<Vec<_>>());
        assert!(basis(&one_run).contains("per-slice mean of each point's one run"));
        let mixed = [visited[0].clone(), one_run[1].clone()];
        assert!(basis(&mixed).contains("or of the per-slice mean where"));
    }

    #[test]
    fn the_probes_curve_is_plotted_against_threads_where_it_has_one() {
        let mut data = parse(&jsonl(&[Shape::stream("copy", 4096, 1, 10.0)]), "r").unwrap();
        assert!(
            figures(&data).iter().all(|f| f.plot.id != "roofline"),
            "no probe, no curve"
        );
        data.probe = Some(
            serde_json::from_value(serde_json::json!({"memcpy_roofline": {"by_threads": {
                "points": [{"threads": 1, "aggregate": {"best_gb_per_s": 8.0}},
                           {"threads": 2, "aggregate": {"best_gb_per_s": 14.0}}]}}}))
            .unwrap(),
        );
        let f = figures(&data).pop().unwrap();
        assert_eq!(f.plot.id, "roofline");
        let series = &f.plot.panels[0].series;
        let xy = |s: &Series| s.data.iter().map(|d| (d.x, d.y)).collect::<Vec<_>>();
        assert_eq!(xy(&series[0]), [(1.0, 8.0), (2.0, 14.0)]);
        assert_eq!(
            xy(&series[1]),
            [(1.0, 8.0), (2.0, 16.0)],
            "one thread's, scaled"
        );
        assert!(f.caption.contains("straight line between them"));
    }

    #[test]
    fn points_without_statistics_have_no_error_bars_and_the_caption_says_so() {
        let mut s = Shape::stream("copy", 4096, 1, 10.0);
        s.statistics = false;
        let f = &figures(&parse(&jsonl(&[s]), "r").unwrap())[0];
        assert!(f.plot.panels[0].series[0].data[0].ci.is_none());
        assert!(f
            .caption
            .contains("No error bar at 1 point: no statistics block"));
    }
}
