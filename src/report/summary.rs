//! The report's text blocks shared by HTML and Markdown: the environment, how the figures
//! were measured, and the per-point table, each as label/value rows read from the records.
use super::units;
use crate::analysis::point::Point;
use crate::analysis::questions::Questions;
use crate::analysis::{plural, Dataset};
use crate::record::view::{shown, EnvironmentView, RunView};
use crate::stats::point::VisitStatistics;
use crate::stats::Outliers;

use super::ci_rule::{ci_rule, numbers, range, statistic};
pub use super::Rows;

/// Distinct texts `field` reads of the records, in first-seen order.
fn distinct_text(data: &Dataset, field: impl Fn(&RunView) -> Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for text in data.records.iter().filter_map(field) {
        if !out.iter().any(|seen| seen == text) {
            out.push(text.to_string());
        }
    }
    out
}

fn joined(data: &Dataset, field: impl Fn(&RunView) -> Option<&str>, missing: &str) -> String {
    let values = distinct_text(data, field);
    if values.is_empty() {
        missing.to_string()
    } else {
        values.join("; ")
    }
}

fn bytes_or(v: Option<f64>, missing: &str) -> String {
    v.map_or(missing.to_string(), |b| {
        format!("{} ({b:.0} bytes)", units::bytes(b))
    })
}

fn environment_of(r: &RunView) -> Option<&EnvironmentView> {
    r.environment.as_ref()
}

/// Kernel, CPU, cores, PMU, optmem_max, MTU: from the first record, noting disagreement.
pub fn environment(data: &Dataset) -> Rows {
    let env = environment_of(&data.records[0])
        .cloned()
        .unwrap_or_default();
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let pmu = match env.pmu_available {
        Some(true) => "yes: hardware counters (cycles, cache misses) were available".to_string(),
        Some(false) => {
            "no: hardware counters unavailable; CPU cost is CPU-ns per byte from getrusage"
                .to_string()
        }
        None => "unknown".to_string(),
    };
    let mut rows = vec![
        ("kernel".to_string(), text(&env.kernel_release)),
        ("CPU".to_string(), text(&env.cpu_model)),
        (
            "cores".to_string(),
            format!(
                "{} online (allowed: {})",
                shown(&env.online_cpus),
                text(&env.allowed_cpus)
            ),
        ),
        ("PMU".to_string(), pmu),
        (
            "perf_event_paranoid".to_string(),
            shown(&env.perf_event_paranoid),
        ),
        (
            "optmem_max".to_string(),
            bytes_or(env.optmem_max_bytes, "unknown"),
        ),
        (
            "tcp_wmem max".to_string(),
            bytes_or(env.tcp_wmem_max_bytes, "unknown"),
        ),
        (
            "loopback MTU".to_string(),
            env.loopback_mtu
                .map_or("unknown".into(), |m| format!("{m:.0} bytes")),
        ),
        ("host".to_string(), text(&env.hostname)),
    ];
    let kernels = distinct_text(data, |r| environment_of(r)?.kernel_release.as_deref());
    let hosts = distinct_text(data, |r| environment_of(r)?.hostname.as_deref());
    for (label, seen) in [("kernels", kernels), ("hosts", hosts)] {
        if seen.len() > 1 {
            rows.push((format!("note: several {label}"), seen.join(", ")));
        }
    }
    rows
}

/// Every flow's CPUs, per thread count and pin (`report::placement`): "1 thread, cross (CPU
/// sender→receiver): flow 0: 0→1. 8 threads, cross (…): flows 0–7: 0→1, 2→3, …, 14→15".
/// Unpinned points say so once: the scheduler chose their CPUs.
fn placement(data: &Dataset) -> String {
    use super::placement::{flows, heading, FlowCpus};
    let mut groups: Vec<(usize, String, String)> = Vec::new();
    for r in &data.records {
        let config = r.config();
        let pin = config.pin.as_deref().unwrap_or("unknown");
        let cpus: Vec<FlowCpus> = config
            .placement
            .iter()
            .flatten()
            .map(|f| {
                let cpu = |c: Option<u64>| c.map(|c| c as usize);
                (cpu(f.sender_cpu), cpu(f.receiver_cpu))
            })
            .collect();
        let threads = config.threads.as_ref().and_then(|n| n.as_u64());
        let threads = threads.map_or(cpus.len(), |t| t as usize);
        let sink = config.is_sink();
        let label = match pin {
            "unpinned" => "unpinned (the scheduler chose the CPUs)".to_string(),
            _ => format!(
                "{}: {}",
                heading(threads, pin, ["sender", "receiver"], sink),
                flows(&cpus, sink)
            ),
        };
        let key = if pin == "unpinned" { 0 } else { threads };
        if !groups.iter().any(|(t, _, l)| *t == key && *l == label) {
            groups.push((key, pin.to_string(), label));
        }
    }
    groups.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    groups
        .into_iter()
        .map(|g| g.2)
        .collect::<Vec<_>>()
        .join(". ")
}

/// Slices outside Tukey's fences, over all points (counted, never dropped).
fn outliers(data: &Dataset) -> String {
    let of = |r: &RunView| r.statistics().and_then(|s| s.outliers);
    type Count = (&'static str, fn(&Outliers) -> usize);
    let keys: [Count; 4] = [
        ("low_severe", |o| o.low_severe),
        ("low_mild", |o| o.low_mild),
        ("high_mild", |o| o.high_mild),
        ("high_severe", |o| o.high_severe),
    ];
    if data.records.iter().all(|r| of(r).is_none()) {
        return "not recorded (no statistics block)".into();
    }
    let parts: Vec<String> = keys
        .iter()
        .map(|(k, count)| {
            let n: f64 = numbers(data, |r| Some(count(&of(r)?) as f64)).iter().sum();
            format!("{} {n:.0}", k.replace('_', " "))
        })
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
        let config = r.config();
        let text = format!(
            "{}: {}",
            config.pattern.as_deref().unwrap_or("?"),
            config.counters.as_deref().unwrap_or("unknown")
        );
        if !per_pattern.contains(&text) {
            per_pattern.push(text);
        }
    }
    let scope = distinct_text(data, |r| r.side(0)?.counter_scope.as_deref());
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
        .filter_map(|r| r.statistics()?.visits.clone())
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

/// Clock, warm-up, visits, slices, CI rule, placement, pattern, receive size, counters.
/// How many slices of how long each point's figures were cut into.
fn slices_text(data: &Dataset) -> String {
    let slices = numbers(data, |r| statistic(r, |s| s.slices));
    let slice_s = numbers(data, |r| statistic(r, |s| s.slice_s));
    if slices.is_empty() {
        "not recorded (no statistics block)".to_string()
    } else {
        format!(
            "{} slices of {} each",
            range(&slices, ""),
            range(&slice_s, " s")
        )
    }
}

pub fn method(data: &Dataset, questions: &Questions) -> Rows {
    let duration = visits_text(data).unwrap_or_else(|| {
        format!(
            "one contiguous stretch of {} per point",
            range(&numbers(data, |r| r.config().duration_s), " s")
        )
    });
    let slices = slices_text(data);
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
    let warmup = range(&numbers(data, |r| r.config().warmup_s), " s")
        + " before each measured phase (each visit)";
    let text = |field: fn(&RunView) -> Option<&str>| joined(data, field, "unknown");
    vec![
        (
            "clock".into(),
            text(|r| environment_of(r)?.clock.as_deref()),
        ),
        ("warm-up".into(), warmup),
        ("visits".into(), duration),
        ("slices".into(), slices),
        ci_rule(data, questions),
        ("outliers".into(), outliers(data)),
        ("CPU placement".into(), placement(data)),
        (
            "where sides ran".into(),
            text(|r| r.config().where_sides_run.as_deref()),
        ),
        (
            "transport".into(),
            text(|r| r.config().transport.as_deref()),
        ),
        ("pattern".into(), pattern),
        (
            "receive size".into(),
            text(|r| r.config().recv_mode.as_deref()),
        ),
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
        .map(|p| {
            let roofline = limits
                .as_ref()
                .and_then(|l| super::limits::roofline_cell(data, p, l));
            row(p, limits.as_ref(), roofline)
        })
        .collect();
    (header, rows)
}

/// One point's row; `roofline` is its share of the memcpy roofline (see `limits`).
fn row(p: &Point, limits: Option<&super::limits::Limits>, roofline: Option<String>) -> Vec<String> {
    use super::limits::message_cost_in_syscalls;
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
        roofline.unwrap_or_else(|| "n/a".into()),
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
            r.statistics.as_mut().unwrap().visits = None;
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
            &crate::sweep::answers::QUESTIONS,
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
        assert_eq!(
            placement,
            "1 thread, cross (CPU sender→receiver): flow 0: 0→1"
        );
    }

    #[test]
    fn the_ci_rule_states_the_families_of_the_study_whose_report_it_is() {
        let d = data(&[Shape::stream("copy", 4096, 1, 10.0)]);
        let rule = |q| {
            let rows = method(&d, q);
            rows.into_iter().find(|r| r.0 == "CI rule").unwrap().1
        };
        let sweep = rule(&crate::sweep::answers::QUESTIONS);
        assert!(sweep.contains("sizes × thread counts") && sweep.contains("Adaptive rounds"));
        let ipc = rule(&crate::ipc::answers::IPC);
        assert!(ipc.contains("one Holm family per size"), "{ipc}");
        assert!(
            !ipc.contains("thread counts") && !ipc.contains("Adaptive rounds"),
            "{ipc}"
        );
    }

    #[test]
    fn records_without_statistics_say_there_is_no_ci() {
        let mut s = Shape::stream("copy", 4096, 1, 10.0);
        s.statistics = false;
        let rows = method(&data(&[s]), &crate::sweep::answers::QUESTIONS);
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

    #[test]
    fn the_placement_names_every_flow_per_thread_count() {
        let spread = |threads: u64| {
            let mut r =
                crate::analysis::synthetic::record(&Shape::stream("copy", 4096, threads, 9.0));
            r["config"]["placement"] = (0..threads)
                .map(|i| serde_json::json!({"sender_cpu": 2 * i, "receiver_cpu": 2 * i + 1}))
                .collect();
            r.to_string()
        };
        let text = format!("{}\n{}\n", spread(8), spread(2));
        let d = parse(&text, "r").unwrap();
        assert_eq!(
            placement(&d),
            "2 threads, cross (CPU sender→receiver): flows 0–1: 0→1, 2→3. \
             8 threads, cross (CPU sender→receiver): flows 0–7: 0→1, 2→3, …, 14→15"
        );
    }
}
