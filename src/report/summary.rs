//! The report's text blocks shared by HTML and Markdown: the environment, how the figures
//! were measured, and the per-point table, each as label/value rows read from the records.
use super::units;
use crate::analysis::point::Point;
use crate::analysis::{plural, Dataset};
use crate::stats::point::VisitStatistics;
use serde_json::Value;

use super::ci_rule::{ci_rule, numbers, range};
pub use super::Rows;

/// Distinct values at `pointer` over the records, as text, in first-seen order.
fn distinct_text(data: &Dataset, pointer: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &data.records {
        let text = match r.pointer(pointer) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
        };
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

fn joined(data: &Dataset, pointer: &str, missing: &str) -> String {
    let values = distinct_text(data, pointer);
    if values.is_empty() {
        missing.to_string()
    } else {
        values.join("; ")
    }
}

fn bytes_or(v: &Value, missing: &str) -> String {
    v.as_f64().map_or(missing.to_string(), |b| {
        format!("{} ({b:.0} bytes)", units::bytes(b))
    })
}

/// Kernel, CPU, cores, PMU, optmem_max, MTU: from the first record, noting disagreement.
pub fn environment(data: &Dataset) -> Rows {
    let env = &data.records[0]["environment"];
    let text = |key: &str| env[key].as_str().unwrap_or("unknown").to_string();
    let pmu = match env["pmu_available"].as_bool() {
        Some(true) => "yes: hardware counters (cycles, cache misses) were available".to_string(),
        Some(false) => {
            "no: hardware counters unavailable; CPU cost is CPU-ns per byte from getrusage"
                .to_string()
        }
        None => "unknown".to_string(),
    };
    let mut rows = vec![
        ("kernel".to_string(), text("kernel_release")),
        ("CPU".to_string(), text("cpu_model")),
        (
            "cores".to_string(),
            format!(
                "{} online (allowed: {})",
                env["online_cpus"],
                text("allowed_cpus")
            ),
        ),
        ("PMU".to_string(), pmu),
        (
            "perf_event_paranoid".to_string(),
            env["perf_event_paranoid"].to_string(),
        ),
        (
            "optmem_max".to_string(),
            bytes_or(&env["optmem_max_bytes"], "unknown"),
        ),
        (
            "tcp_wmem max".to_string(),
            bytes_or(&env["tcp_wmem_max_bytes"], "unknown"),
        ),
        (
            "loopback MTU".to_string(),
            env["loopback_mtu"]
                .as_f64()
                .map_or("unknown".into(), |m| format!("{m:.0} bytes")),
        ),
        ("host".to_string(), text("hostname")),
    ];
    for (label, pointer) in [
        ("kernels", "/environment/kernel_release"),
        ("hosts", "/environment/hostname"),
    ] {
        let seen = distinct_text(data, pointer);
        if seen.len() > 1 {
            rows.push((format!("note: several {label}"), seen.join(", ")));
        }
    }
    rows
}

fn placement(data: &Dataset) -> String {
    let mut lines: Vec<String> = Vec::new();
    for r in &data.records {
        let pin = r["config"]["pin"].as_str().unwrap_or("unknown");
        if lines.iter().any(|l| l.starts_with(&format!("{pin}:"))) {
            continue;
        }
        let flows: Vec<String> = r["config"]["placement"]
            .as_array()
            .map(|a| {
                a.iter()
                    .take(4)
                    .enumerate()
                    .map(|(i, f)| {
                        let cpu = |k: &str| {
                            f[k].as_u64()
                                .map_or("any CPU".to_string(), |c| format!("CPU {c}"))
                        };
                        format!(
                            "flow {i} sender {} → receiver {}",
                            cpu("sender_cpu"),
                            cpu("receiver_cpu")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        lines.push(format!("{pin}: {}", flows.join(", ")));
    }
    lines.join("; ")
}

/// Slices outside Tukey's fences, over all points (counted, never dropped).
fn outliers(data: &Dataset) -> String {
    let keys = ["low_severe", "low_mild", "high_mild", "high_severe"];
    let counts: Vec<f64> = keys
        .iter()
        .map(|k| {
            numbers(data, &format!("/statistics/outliers/{k}"))
                .iter()
                .sum()
        })
        .collect();
    if data
        .records
        .iter()
        .all(|r| r["statistics"]["outliers"].is_null())
    {
        return "not recorded (no statistics block)".into();
    }
    let parts: Vec<String> = keys
        .iter()
        .zip(&counts)
        .map(|(k, n)| format!("{} {n:.0}", k.replace('_', " ")))
        .collect();
    format!(
        "values (visit means, or slices of a one-stretch point) beyond Tukey's fences (1.5 and 3 IQR; needs 4 values), counted and kept in the mean: {}",
        parts.join(", ")
    )
}

/// The counter selection per pattern and the scope the counters had.
fn counters(data: &Dataset) -> String {
    let mut per_pattern: Vec<String> = Vec::new();
    for r in &data.records {
        let pattern = r["config"]["pattern"].as_str().unwrap_or("?");
        let text = format!(
            "{pattern}: {}",
            r["config"]["counters"].as_str().unwrap_or("unknown")
        );
        if !per_pattern.contains(&text) {
            per_pattern.push(text);
        }
    }
    let scope = distinct_text(data, "/sides/0/counter_scope");
    if scope.is_empty() {
        per_pattern.join("; ")
    } else {
        format!("{} (scope: {})", per_pattern.join("; "), scope.join(", "))
    }
}

/// How points measured in visits were visited: counts, length, order, spread; `None` when no
/// record has visits.
fn visits_text(data: &Dataset) -> Option<String> {
    // Each record's visits block, read as the type the studies write it with.
    let blocks: Vec<VisitStatistics> = data
        .records
        .iter()
        .filter_map(|r| serde_json::from_value(r.pointer("/statistics/visits")?.clone()).ok())
        .collect();
    if blocks.is_empty() {
        return None;
    }
    let of = |figure: fn(&VisitStatistics) -> Option<f64>| -> Vec<f64> {
        blocks.iter().filter_map(figure).collect()
    };
    // Rounded to a tenth of a percent: the spreads are estimates from a few visits.
    let pct = |figure| -> Vec<f64> {
        of(figure)
            .iter()
            .map(|x| (x * 1000.0).round() / 10.0)
            .collect()
    };
    let between = pct(|v| v.between_visit_cv);
    let within = pct(|v| v.within_visit_cv);
    let mut seeds: Vec<u64> = Vec::new();
    for seed in blocks.iter().filter_map(|v| v.seed) {
        if !seeds.contains(&seed) {
            seeds.push(seed);
        }
    }
    let seed = seeds
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "{} visits per point (at least {}) of {} measured time each, spread over the study in a \
         seeded shuffled order{}; spread of a point's visit means around their mean: {} \
         (between visits) against {} within a visit (slices), so intervals from slices alone \
         would be too narrow for a re-run",
        range(&of(|v| Some(v.count as f64)), ""),
        range(&of(|v| Some(v.min_visits as f64)), ""),
        range(&of(|v| Some(v.visit_s)), " s"),
        if seed.is_empty() {
            String::new()
        } else {
            format!(" (seed {seed})")
        },
        if between.is_empty() {
            "not measured".into()
        } else {
            range(&between, " %")
        },
        if within.is_empty() {
            "not measured".into()
        } else {
            range(&within, " %")
        },
    ))
}

/// Clock, warm-up, visits, slices, CI rule (with the study's `families`), placement, pattern,
/// receive size, counters.
pub fn method(data: &Dataset, families: &str) -> Rows {
    let slices = numbers(data, "/statistics/slices");
    let slice_s = numbers(data, "/statistics/slice_s");
    let duration = visits_text(data).unwrap_or_else(|| {
        format!(
            "one contiguous stretch of {} per point",
            range(&numbers(data, "/config/duration_s"), " s")
        )
    });
    let slices = if slices.is_empty() {
        "not recorded (no statistics block)".to_string()
    } else {
        format!(
            "{} slices of {} each",
            range(&slices, ""),
            range(&slice_s, " s")
        )
    };
    let rr = data.points.iter().filter(|p| p.pattern == "rr").count();
    let spin = data.points.iter().filter(|p| p.spin).count();
    let pattern = format!(
        "{} (one-way; throughput at the receiver), {} (round trips timed on the client)",
        plural(data.points.len() - rr, "stream point"),
        plural(rr, "rr point")
    );
    let receiving = if spin == 0 {
        "blocking recv".to_string()
    } else {
        format!("busy-polling (--spin) at {spin} points, shown as their own series")
    };
    let warmup = range(&numbers(data, "/config/warmup_s"), " s")
        + " before each measured phase (each visit)";
    let text = |pointer: &str| joined(data, pointer, "unknown");
    vec![
        ("clock".into(), text("/environment/clock")),
        ("warm-up".into(), warmup),
        ("visits".into(), duration),
        ("slices".into(), slices),
        ci_rule(data, families),
        ("outliers".into(), outliers(data)),
        ("CPU placement".into(), placement(data)),
        ("where sides ran".into(), text("/config/where_sides_run")),
        ("transport".into(), text("/config/transport")),
        ("pattern".into(), pattern),
        ("receive size".into(), text("/config/recv_mode")),
        ("receiving side".into(), receiving),
        ("counters".into(), counters(data)),
    ]
}

/// One sentence on what the report covers: points by status, superseded records.
pub fn overview(data: &Dataset, source: &str) -> String {
    let count = |status: &str| data.points.iter().filter(|p| p.status == status).count();
    let completed = count("completed");
    let mut s = format!(
        "{} points from {source}: {completed} completed",
        data.points.len()
    );
    let skipped = count("skipped");
    if skipped > 0 {
        s += &format!(
            ", {skipped} skipped because this kernel lacks what they need (listed in the table with the reason)"
        );
    }
    let others = data.points.len() - completed - skipped;
    if others > 0 {
        s += &format!(
            ", {others} failed or interrupted (listed in the table, left out of plots and answers)"
        );
    }
    if data.superseded > 0 {
        s += &format!(
            "; {} earlier records were replaced by a later measurement of the same point",
            data.superseded
        );
    }
    s + "."
}

/// The per-point table: header and one row per point.
pub fn table(data: &Dataset) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "point",
        "status",
        "throughput (95 % CI)",
        "latency p50",
        "latency p99",
        "CPU-ns/byte (both sides)",
        "of memcpy roofline",
        "CPU per message, in getpid calls",
        "zero copy: copied anyway, pool",
        "datagrams lost",
        "CI met",
    ];
    let limits = super::limits::limits(data);
    let rows = data
        .points
        .iter()
        .map(|p| row(p, limits.as_ref()))
        .collect();
    (header, rows)
}

fn row(p: &Point, limits: Option<&super::limits::Limits>) -> Vec<String> {
    use super::limits::{message_cost_in_syscalls, roofline_share};
    let against = |f: &dyn Fn(&super::limits::Limits) -> Option<String>| {
        limits.and_then(f).unwrap_or_else(|| "n/a".into())
    };
    let figure = match (&p.headline, p.headline_metric.as_str()) {
        (Some(s), "round_trips_per_s") => format!(
            "{} round trips/s ± {:.1} %",
            units::count(s.mean),
            s.ci95_rel * 100.0
        ),
        (Some(s), "transactions_per_s") => format!(
            "{} transactions/s ± {:.1} %",
            units::count(s.mean),
            s.ci95_rel * 100.0
        ),
        (Some(s), _) => format!("{:.2} ± {:.2} Gbit/s", s.mean, s.ci95_half_width),
        (None, _) => format!("{:.2} Gbit/s (no CI)", p.throughput_gbps),
    };
    let latency = |f: fn(&crate::analysis::point::Latency) -> f64| {
        p.latency
            .as_ref()
            .map_or("n/a".to_string(), |l| units::duration_ns(f(l)))
    };
    let status = match &p.skipped_reason {
        Some(reason) => format!("skipped: {reason}"),
        None => p.status.clone(),
    };
    let zero_copy = p.zerocopy.map_or("—".into(), |z| {
        let copied = if z.completions > 0.0 {
            format!("{:.1} %", z.copied / z.completions * 100.0)
        } else {
            "no completion".into()
        };
        match z.pool_messages {
            Some(n) => format!("{copied}, pool {n:.0} messages"),
            None => copied,
        }
    });
    vec![
        p.key.clone(),
        status,
        figure,
        latency(|l| l.p50_ns),
        latency(|l| l.p99_ns),
        p.cpu_ns_per_byte()
            .map_or("n/a".into(), |v| format!("{v:.3}")),
        against(&|l| roofline_share(p, l).map(|s| format!("{:.0} %", s * 100.0))),
        against(&|l| message_cost_in_syscalls(p, l).map(|n| format!("{n:.1}"))),
        zero_copy,
        p.datagrams_lost_percent
            .map_or("—".into(), |v| format!("{v:.2} %")),
        match p.ci_target_met {
            Some(true) => "yes".into(),
            Some(false) => "no".into(),
            None => "—".into(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{jsonl, Shape};

    fn data(shapes: &[Shape]) -> Dataset {
        parse(&jsonl(shapes), "r").unwrap()
    }

    #[test]
    fn the_environment_names_kernel_cpu_pmu_optmem_and_mtu() {
        let rows = environment(&data(&[Shape::stream("copy", 4096, 1, 10.0)]));
        let get = |k: &str| rows.iter().find(|r| r.0 == k).unwrap().1.clone();
        assert_eq!(get("kernel"), "6.1.0-synthetic");
        assert!(get("PMU").starts_with("no"));
        assert_eq!(get("optmem_max"), "128.00 KiB (131072 bytes)");
        assert_eq!(get("loopback MTU"), "65536 bytes");
    }

    /// The visits line reads each record's typed visits block: counts, the floor, the visit
    /// length and the seed as the study wrote them.
    #[test]
    fn the_visits_line_reads_the_typed_visits_block() {
        let text = visits_text(&data(&[
            Shape::stream("copy", 4096, 1, 10.0),
            Shape::stream("send", 4096, 1, 12.0),
        ]))
        .unwrap();
        assert!(
            text.starts_with("5 visits per point (at least 3) of 0.3 s measured time each"),
            "{text}"
        );
        assert!(
            text.contains("(seed 1)") && text.contains("1 % within a visit"),
            "{text}"
        );
        let mut stretch = data(&[Shape::stream("copy", 4096, 1, 10.0)]);
        for r in &mut stretch.records {
            r["statistics"].as_object_mut().unwrap().remove("visits");
        }
        assert_eq!(
            visits_text(&stretch),
            None,
            "measured as one stretch: no visits line"
        );
    }

    #[test]
    fn the_method_counts_points_that_met_the_ci_target() {
        let mut wide = Shape::stream("gather", 4096, 1, 10.0);
        wide.ci_rel = 0.08;
        let rows = method(
            &data(&[Shape::stream("copy", 4096, 1, 10.0), wide]),
            crate::sweep::answers::QUESTIONS.families,
        );
        let ci = &rows.iter().find(|r| r.0 == "CI rule").unwrap().1;
        assert!(
            ci.contains("target ±5 % of the mean, met at 1 of 2 points"),
            "{ci}"
        );
        assert!(ci.contains("ci_target_met ×1, budget_spent ×1"), "{ci}");
        assert!(
            ci.contains("Student's t on visits − 1 degrees of freedom"),
            "{ci}"
        );
        assert!(ci.contains("per-round paired ratio"), "{ci}");
        let visits = &rows.iter().find(|r| r.0 == "visits").unwrap().1;
        assert!(
            visits.starts_with("5 visits per point (at least 3)"),
            "{visits}"
        );
        assert!(visits.contains("(seed 1)"), "{visits}");
        let placement = &rows.iter().find(|r| r.0 == "CPU placement").unwrap().1;
        assert_eq!(placement, "cross: flow 0 sender CPU 0 → receiver CPU 1");
    }

    #[test]
    fn records_without_statistics_say_there_is_no_ci() {
        let mut s = Shape::stream("copy", 4096, 1, 10.0);
        s.statistics = false;
        let rows = method(&data(&[s]), "");
        assert!(rows.iter().any(|r| r.1.contains("no statistics block")));
    }

    #[test]
    fn zero_copy_points_show_the_copied_share_and_pool_and_skipped_points_their_reason() {
        let mut zc = Shape::stream("uring-zc", 65536, 1, 10.0);
        zc.copied_fraction = 1.0;
        let mut skipped = data(&[zc, Shape::stream("splice", 4096, 1, 10.0)]);
        skipped.points[1].status = "skipped".into();
        skipped.points[1].skipped_reason = Some("splice unsupported here".into());
        let (header, rows) = table(&skipped);
        let column = header
            .iter()
            .position(|h| h.starts_with("zero copy"))
            .unwrap();
        assert!(
            rows[0][column].starts_with("100.0 %, pool "),
            "{}",
            rows[0][column]
        );
        assert_eq!(rows[1][1], "skipped: splice unsupported here");
        assert!(overview(&skipped, "r").contains("1 skipped because this kernel lacks"));
    }

    #[test]
    fn table_rows_show_throughput_with_its_ci() {
        let quiet = Shape {
            pair_noise: 0.0,
            ..Shape::stream("copy", 4096, 1, 10.0)
        };
        let (header, rows) = table(&data(&[quiet]));
        assert_eq!(header.len(), rows[0].len());
        assert_eq!(rows[0][0], "copy/stream/4096/1");
        assert_eq!(rows[0][2], "10.00 ± 0.20 Gbit/s");
        assert_eq!(rows[0][8], "—", "copy has no zero-copy accounting");
        assert_eq!(rows[0][9], "—", "a TCP point loses no datagrams");
        assert_eq!(rows[0][10], "yes");
        assert_eq!(
            (rows[0][6].as_str(), rows[0][7].as_str()),
            ("n/a", "n/a"),
            "no probe.json"
        );
    }
}
