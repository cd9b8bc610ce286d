//! `--under-load` in the reports. A run's table: the load beside the rr flow and what it
//! moved, and with the paired visits both latencies, the ratio with its interval and the
//! verdict. A sweep's report.md and report.html: per loaded point, its latency without and with
//! the load, the paired ratios and the load's Gbit/s, beyond the answers list.
use super::plot::escape;
use super::units::{bytes, duration_ns};
use crate::analysis::point::Latency;
use crate::analysis::under_load::{rows, LoadRow};
use crate::analysis::Dataset;
use crate::record::under_load::{LatencyOverVisits, PairedRun, UnderLoadReport};
use std::fmt::Write;

/// Appends the load's lines to a run's table.
pub fn lines(out: &mut String, l: &UnderLoadReport) {
    let _ = writeln!(
        out,
        "under load: {} {} stream flow(s) of {} messages beside the rr flow, {}; {:.3} Gbit/s received whole ({} over {:.2} s)",
        l.flows,
        l.mechanism,
        bytes(l.message_size_bytes as f64),
        l.placement,
        l.gbps,
        bytes(l.received_bytes as f64),
        l.load_s
    );
    if let Some(p) = &l.paired {
        paired_lines(out, p);
    }
}

/// A paired run's lines: both latencies and each ratio with its interval and verdict.
fn paired_lines(out: &mut String, p: &PairedRun) {
    let _ = writeln!(
        out,
        "  paired: {} rounds of a visit without and a visit with the load, back to back, order alternating ({:.0} ms measured each after {:.0} ms of warm-up)",
        p.rounds,
        p.visit_s * 1e3,
        p.warmup_s * 1e3
    );
    for (name, l) in [
        ("without the load", &p.unloaded),
        ("with the load", &p.loaded),
    ] {
        let _ = writeln!(out, "  rr latency {name}: {}", over_visits(l));
    }
    for r in &p.ratios {
        // An undecided ratio's text already begins with its verdict.
        let verdict = if r.text.starts_with(r.verdict.as_str()) {
            String::new()
        } else {
            format!(" [{}]", r.verdict)
        };
        let _ = writeln!(
            out,
            "  ratio with/without the load, {}: {}{verdict}",
            r.percentile, r.text
        );
    }
}

/// "p50 12.30 µs, p99 40.00 µs (median over 8 visits)", or why there is none.
fn over_visits(l: &LatencyOverVisits) -> String {
    let ns = |v: Option<f64>| v.map_or_else(|| "n/a".into(), duration_ns);
    match l.visits {
        0 => "no visit completed".into(),
        n => format!(
            "p50 {}, p99 {} (median over {n} visits)",
            ns(l.p50_ns),
            ns(l.p99_ns)
        ),
    }
}

const INTRO: &str = "Each rr point measured beside its load flows (--under-load) against its \
     twin without them, visited in the same rounds: the rr client's latency (median over \
     visits) without and with the load, the paired ratios with over without as the answer \
     above judged them, and what the load moved.";

/// "p50 12.30 µs, p99 40.00 µs", or that the point has none.
fn latency(l: Option<&Latency>) -> String {
    l.map_or_else(
        || "no latency".into(),
        |l| {
            format!(
                "p50 {}, p99 {}",
                duration_ns(l.p50_ns),
                duration_ns(l.p99_ns)
            )
        },
    )
}

fn gbps(row: &LoadRow) -> String {
    row.gbps
        .map_or_else(|| "n/a".into(), |g| format!("{g:.3} Gbit/s"))
}

/// One row in words, for report.md's list.
fn row_line(row: &LoadRow) -> String {
    format!(
        "without the load {}; with {} load flow(s) {}; ratio p50 {}; ratio p99 {}; the load moved {}",
        latency(row.unloaded.as_ref()),
        row.flows,
        latency(row.loaded.as_ref()),
        row.p50,
        row.p99,
        gbps(row)
    )
}

/// report.md's section (empty when no point was measured under load).
pub fn markdown_section(data: &Dataset) -> String {
    let rows = rows(&data.completed(), data.margin());
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!("\n## Latency under load (--under-load)\n\n{INTRO}\n\n");
    // A list, not a table: report.md's one table is its points'.
    for row in &rows {
        let line = row_line(row).replace('|', "\\|");
        let _ = writeln!(out, "- **{}**: {line}", row.at);
    }
    out.push('\n');
    out
}

/// report.html's section (empty when no point was measured under load).
pub fn html_section(data: &Dataset) -> String {
    let rows = rows(&data.completed(), data.margin());
    if rows.is_empty() {
        return String::new();
    }
    let header = [
        "point",
        "without the load",
        "with the load",
        "ratio p50",
        "ratio p99",
        "load moved",
    ];
    let cells = rows.iter().map(|row| {
        [
            row.at.clone(),
            latency(row.unloaded.as_ref()),
            format!("{} ({} flow(s))", latency(row.loaded.as_ref()), row.flows),
            row.p50.clone(),
            row.p99.clone(),
            gbps(row),
        ]
    });
    format!(
        "<h2 id=\"under-load\">Latency under load (--under-load)</h2><p class=\"meta\">{}</p>{}",
        escape(INTRO),
        super::html_table::cells("under-load", &header, cells)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::under_load::LatencyRatio;

    fn paired() -> PairedRun {
        let over = |ns: f64| LatencyOverVisits {
            visits: 8,
            p50_ns: Some(ns),
            p99_ns: Some(ns * 3.0),
        };
        let ratio = |name: &str| LatencyRatio {
            percentile: name.into(),
            ratio: Some(2.0),
            ci_low: Some(1.9),
            ci_high: Some(2.1),
            confidence: Some(0.975),
            pairs: 8,
            verdict: "raises".into(),
            text: "2.00× (97.5 % CI 1.90 to 2.10)".into(),
            unavailable_reason: None,
        };
        PairedRun {
            rounds: 8,
            design: String::new(),
            visit_s: 0.2,
            warmup_s: 0.05,
            pairs: Vec::new(),
            unloaded: over(10_000.0),
            loaded: over(20_000.0),
            ratios: vec![ratio("p50"), ratio("p99")],
            margin: 0.05,
            basis: String::new(),
        }
    }

    #[test]
    fn a_paired_run_shows_both_latencies_each_ratio_and_its_verdict() {
        let mut out = String::new();
        paired_lines(&mut out, &paired());
        assert!(out.contains("8 rounds"), "{out}");
        assert!(
            out.contains(
                "rr latency without the load: p50 10.00 µs, p99 30.00 µs (median over 8 visits)"
            ),
            "{out}"
        );
        assert!(
            out.contains("rr latency with the load: p50 20.00 µs"),
            "{out}"
        );
        assert!(
            out.contains(
                "ratio with/without the load, p99: 2.00× (97.5 % CI 1.90 to 2.10) [raises]"
            ),
            "{out}"
        );
    }

    #[test]
    fn a_sweep_without_load_has_no_section() {
        use crate::analysis::load::parse;
        use crate::analysis::synthetic::{demo_sweep, jsonl};
        let data = parse(&jsonl(&demo_sweep(false)), "r").unwrap();
        assert_eq!(markdown_section(&data), "");
        assert_eq!(html_section(&data), "");
    }
}
