//! What a mesh becomes for a person: `report.md` and a self-contained `report.html` in its
//! results folder, rendered from `results.jsonl` and the marker alone (so `bytepath report DIR`
//! renders it again). Per point, an N×N heatmap (source rows, destination columns) of the
//! figure with each cell's 95 % CI from its visits (also written as figures/NAME.svg, .png
//! and .csv, linked from both pages), the pairs flagged significantly slow with
//! the figures that show it, and every failed run with its reason.
use super::answers::{self, Figure, PointMatrix, FLAG_METHOD, HOST_METHOD};
use super::spec::MarkerSpec;
use crate::error::Error;
use crate::record::view::{shown, RunView};
use crate::report::figure_files::{self, FigureFile};
use crate::report::plot::heatmap::{self, HeatCell, Heatmap};
use crate::report::study::{self, page, Table};
use crate::stats::interval;
use crate::stats::visits::VISIT_METHOD;
use std::path::{Path, PathBuf};

/// Reads the folder and writes report.md and report.html into it; returns the HTML path.
pub fn rerender(dir: &Path) -> Result<PathBuf, Error> {
    let spec = marker_spec(dir)?;
    let records: Vec<RunView> = crate::record::read_typed(dir)?;
    let matrices = answers::matrices(&spec.hosts, &records, spec.margin);
    let (markdown, html) = render(&spec, &matrices, &records);
    let figures = matrices
        .iter()
        .map(|m| FigureFile::heatmap(&stem(m), &heatmap_of(m, &spec.hosts), m.figure.name()))
        .collect();
    study::write(dir, &markdown, &html, figures)?;
    Ok(dir.join(study::HTML))
}

/// The folder's marker spec, typed (folders from before `--margin` read the default margin).
fn marker_spec(dir: &Path) -> Result<MarkerSpec, Error> {
    study::marker_spec(dir)?.map_err(|e| {
        Error::Failed(format!(
            "{}: the mesh marker's spec cannot be read ({e})",
            dir.join(crate::report::folder::MARKER).display()
        ))
    })
}

/// (report.md, report.html).
pub fn render(
    spec: &MarkerSpec,
    matrices: &[PointMatrix],
    records: &[RunView],
) -> (String, String) {
    let hosts = &spec.hosts;
    let title = format!("bytepath mesh: {} hosts", hosts.len());
    let method = method(spec);
    let mut md = format!("# {title}\n\n{method}\n\n");
    let mut html = format!("<p class=\"note\">{}</p>\n", study_escape(&method));
    for m in matrices {
        let heading = format!("{}: {}", m.key, m.figure.name());
        md += &format!("## {heading}\n\n{}\n", grid(m, hosts));
        md += &figure_files::markdown_figure(&stem(m), &heading, HEATMAP_CAPTION);
        html += &format!("<h2>{}</h2>\n", study_escape(&heading));
        html += &heatmap::render(&heatmap_of(m, hosts));
        html += &figure_files::links_html(&stem(m));
        html += "\n";
        let flagged = flags(m, hosts);
        let said = if m.flags.is_empty() {
            "No pair is shown slower than the other pairs (Holm across pairs).".to_string()
        } else {
            format!("{} pair(s) flagged slow:", m.flags.len())
        };
        md += &format!("\n{said}\n\n");
        html += &format!("<p>{}</p>\n", study_escape(&said));
        if !m.flags.is_empty() {
            md += &flagged.markdown();
            html += &flagged.html();
        }
        let verdicts = host_table(m, hosts);
        md += &format!(
            "\nHosts, each against the pairs it is not in (cell means):\n\n{}",
            verdicts.markdown()
        );
        html += &format!(
            "<p>Hosts, each against the pairs it is not in (cell means):</p>\n{}",
            verdicts.html()
        );
        let (chosen_md, chosen_html) = super::percentiles::section(&m.key, records);
        (md, html) = (md + &chosen_md, html + &chosen_html);
        for line in slow_hosts(m, hosts) {
            md += &format!("\n{line}\n");
            html += &format!("<p class=\"slow-host\">{}</p>\n", study_escape(&line));
        }
        md += "\n";
    }
    let failures = failures(records);
    if !failures.rows.is_empty() {
        md += &format!("## Failed runs\n\n{}", failures.markdown());
        html += &format!("<h2>Failed runs</h2>\n{}", failures.html());
    }
    (md, page(&title, &html))
}

/// What a point's heatmap shows, under it in report.md (the page shows it in place).
const HEATMAP_CAPTION: &str = "Each cell the pair's mean over its visits (rows are sources, \
     columns destinations), darker is better; a thick red border marks a pair flagged slow, a \
     dashed one a pair through a slow host.";

/// The name of a point's heatmap files: its point and figure, as `figure_files` names files.
fn stem(m: &PointMatrix) -> String {
    figure_files::file_name(&format!("mesh {} {}", m.key, m.figure.name()))
}

fn study_escape(text: &str) -> String {
    crate::report::plot::escape(text)
}

/// How every figure was measured, in one paragraph.
fn method(spec: &MarkerSpec) -> String {
    let concurrent = spec.concurrent;
    let at_once = if concurrent > 1 {
        format!("{concurrent} pairs of a round were measured at once (they share no host, but they do share the network between them: deliberate load, inside every figure)")
    } else {
        "one pair at a time".to_string()
    };
    format!(
        "Host to host: for each ordered pair the source host's bytepath server ran the point against the destination's (stream: the source sent and the destination received and measured, Gbit/s of payload received whole; rr: the source asked and timed round trips, the median in µs). Pairs ran in rounds of disjoint pairs, {at_once}, {} s measured after {} s of warm-up per visit, the whole schedule repeated for {} visits, perf counters off. Cells: {VISIT_METHOD}; a cell with one visit has no interval and says so. Flags: {FLAG_METHOD}. Hosts: {HOST_METHOD}. Equivalence margin ±{} (--margin): a pair's state reads equivalent only when its 90 % interval lies within it. Rows are sources, columns destinations.",
        spec.duration_s, spec.warmup_s, spec.visits,
        crate::stats::verdict::percent(spec.margin)
    )
}

/// `12.35 ± 0.40 (3)`, `12.35 (1 visit, no CI)`, `failed`, or `—`.
fn cell_text(m: &PointMatrix, src: usize, dst: usize) -> String {
    let cell = &m.cells[src][dst];
    if src == dst {
        return "—".into();
    }
    match (&cell.summary, cell.visits.as_slice()) {
        (Some(s), v) => format!("{:.2} ± {:.2} ({})", s.mean, s.ci95_half_width, v.len()),
        (None, [one]) => format!("{one:.2} (1 visit, no CI)"),
        _ if cell.failed > 0 => "failed".into(),
        _ => "not measured".into(),
    }
}

/// The matrix as a Markdown table: a row per source, a column per destination.
fn grid(m: &PointMatrix, hosts: &[String]) -> String {
    let cell = |t: &str| t.replace('|', "\\|");
    let n = hosts.len();
    let mut out = format!(
        "| from \\ to | {} |\n|",
        hosts
            .iter()
            .map(|h| cell(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    out += &"---|".repeat(n + 1);
    out += "\n";
    for (s, host) in hosts.iter().enumerate() {
        let row: Vec<String> = (0..n).map(|d| cell(&cell_text(m, s, d))).collect();
        out += &format!("| {} | {} |\n", cell(host), row.join(" | "));
    }
    out
}

fn heatmap_of(m: &PointMatrix, hosts: &[String]) -> Heatmap {
    let n = hosts.len();
    let cells = (0..n)
        .map(|s| {
            (0..n)
                .map(|d| {
                    let cell = &m.cells[s][d];
                    let value = cell
                        .summary
                        .map(|x| x.mean)
                        .or(cell.visits.first().copied());
                    let mut title = format!("{} → {}: {}", hosts[s], hosts[d], cell_text(m, s, d));
                    if let Some(why) = &cell.reason {
                        title += &format!("; {} failed: {why}", cell.failed);
                    }
                    HeatCell {
                        value: value.filter(|_| s != d),
                        text: cell_text(m, s, d),
                        title,
                        flagged: m.flags.iter().any(|f| (f.src, f.dst) == (s, d)),
                        outlined: s != d
                            && m.hosts
                                .iter()
                                .any(|h| (h.host == s || h.host == d) && h.slow),
                    }
                })
                .collect()
        })
        .collect();
    Heatmap {
        id: format!("mesh-{}", m.key),
        row_label: "source".into(),
        column_label: "destination".into(),
        rows: hosts.to_vec(),
        columns: hosts.to_vec(),
        cells,
        higher_is_better: m.figure.higher_is_better(),
    }
}

/// The flagged pairs with the figures that show it: the pair's cell, the reference actually
/// tested (the other pairs' median cell mean and spread) and the ratio against it.
fn flags(m: &PointMatrix, hosts: &[String]) -> Table {
    let against = |r: &answers::Reference| {
        format!(
            "median {:.2} of {} other pairs' cell means (spread ±{:.1} %); ratio {:.3} [{:.3}, {:.3}] at {} confidence",
            r.median,
            r.pairs,
            r.log_spread * 100.0,
            r.ratio.ratio,
            r.ratio.low,
            r.ratio.high,
            crate::stats::verdict::percent(r.confidence)
        )
    };
    let rows: Vec<Vec<String>> = m
        .flags
        .iter()
        .map(|f| {
            vec![
                format!("{} → {}", hosts[f.src], hosts[f.dst]),
                cell_text(m, f.src, f.dst),
                against(&f.against),
                f.cause.describe().to_string(),
            ]
        })
        .collect();
    let figure: &'static str = match m.figure {
        Figure::Gbps => "Gbit/s ± CI (visits)",
        Figure::RoundTripP50Us => "round-trip p50 µs ± CI (visits)",
    };
    Table {
        marked: vec![true; rows.len()],
        header: [
            "pair",
            figure,
            "vs the other pairs (Holm family)",
            "slow because of",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// One sentence per slow host naming every pair through it and how many of them are slow.
fn slow_hosts(m: &PointMatrix, hosts: &[String]) -> Vec<String> {
    m.hosts
        .iter()
        .filter(|h| h.slow)
        .map(|h| {
            let through: Vec<String> = answers::pairs_through(hosts.len(), h.host)
                .map(|(s, d)| format!("{} → {}", hosts[s], hosts[d]))
                .collect();
            format!(
                "Host {} is slow: the pairs through it ({}) run at {} times the pairs without it; {} of its {} pairs lie on the slow side of their median, {} flagged slow on their own.",
                hosts[h.host],
                through.join(", "),
                h.ratio.map_or("-".into(), |(r, _)| format!("{:.3} {}", r.ratio, interval::shown(Some(r.n), || format!("[{:.3}, {:.3}]", r.low, r.high)))),
                h.pairs_on_slow_side,
                h.tested_pairs,
                h.slow_pairs
            )
        })
        .collect()
}

/// Per host: its pairs against the pairs without it, how many lie on the slow side, and
/// whether that makes it slow.
fn host_table(m: &PointMatrix, hosts: &[String]) -> Table {
    let rows: Vec<Vec<String>> = m
        .hosts
        .iter()
        .map(|h| {
            vec![
                hosts[h.host].clone(),
                h.ratio
                    .map_or("too few pairs to compare".into(), |(r, confidence)| {
                        let bounds = || {
                            format!(
                                "[{:.3}, {:.3}] at {} confidence",
                                r.low,
                                r.high,
                                crate::stats::verdict::percent(confidence)
                            )
                        };
                        format!("{:.3} {}", r.ratio, interval::shown(Some(r.n), bounds))
                    }),
                format!("{} of {}", h.pairs_on_slow_side, h.tested_pairs),
                format!("{} of {}", h.slow_pairs, h.tested_pairs),
                if h.slow { "slow" } else { "—" }.into(),
            ]
        })
        .collect();
    Table {
        marked: m.hosts.iter().map(|h| h.slow).collect(),
        header: [
            "host",
            "its pairs / the pairs without it (cell means)",
            "its pairs on the slow side of their median",
            "its pairs flagged slow",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// Every run that did not complete: pair, visit, point, status and why.
fn failures(records: &[RunView]) -> Table {
    let rows: Vec<Vec<String>> = records
        .iter()
        .filter(|r| !r.completed())
        .map(|r| {
            vec![
                format!(
                    "{} → {}",
                    r.src.as_deref().unwrap_or("?"),
                    r.dst.as_deref().unwrap_or("?")
                ),
                shown(&r.mesh.as_ref().and_then(|m| m.visit.clone())),
                r.config().point_key(),
                r.status.as_deref().unwrap_or("?").to_string(),
                r.errors().join("; "),
            ]
        })
        .collect();
    Table {
        marked: vec![true; rows.len()],
        header: ["pair", "visit", "point", "status", "why"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Four hosts, four visits; every pair through `d` at a fifth of the others; one failed run.
    fn records() -> (Vec<String>, Vec<RunView>) {
        let hosts: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let mut records = Vec::new();
        for visit in 0..4 {
            for s in &hosts {
                for d in hosts.iter().filter(|d| *d != s) {
                    let base = if s == "d" || d == "d" { 2.0 } else { 10.0 };
                    records.push(json!({
                        "src": s, "dst": d, "status": "completed", "mesh": {"visit": visit + 1},
                        "config": {"mechanism": "send", "pattern": "stream",
                                   "message_size_bytes": 4096, "threads": 1, "transport": "tcp"},
                        "sides": [{}, {"throughput_gbps": base * (1.0 + 0.02 * visit as f64)}],
                    }));
                }
            }
        }
        let mut failed = records[0].clone();
        failed["status"] = json!("failed");
        failed["errors"] = json!(["host b is down: gone"]);
        records.push(failed);
        let views = records
            .into_iter()
            .map(|r| serde_json::from_value(r).unwrap())
            .collect();
        (hosts, views)
    }

    #[test]
    fn the_report_names_the_slow_host_outlines_its_pairs_and_lists_the_failure() {
        let (hosts, records) = records();
        let spec: MarkerSpec = serde_json::from_value(json!({
            "hosts": hosts, "hosts_from": "--hosts", "pairs": "all", "points": ["send/stream/4096/1"],
            "duration_s": 1.0, "warmup_s": 0.2, "visits": 4, "concurrent": 1, "counters": "none"}))
        .unwrap();
        let matrices = answers::matrices(&hosts, &records, spec.margin);
        let (md, html) = render(&spec, &matrices, &records);
        assert!(
            md.contains(
                "Host d is slow: the pairs through it (a → d, b → d, c → d, d → a, d → b, d → c) run at 0.200 ["
            ),
            "{md}"
        );
        assert!(md.contains("| a | — | 10.30 ± "), "{md}");
        assert!(
            md.contains("| a → b | 1 | send/stream/4096/1 | failed | host b is down: gone |"),
            "{md}"
        );
        // Six cells through d, each flagged or outlined; never the diagonal.
        let flagged = html.matches("class=\"cell flagged\"").count();
        let outlined = html.matches("stroke-dasharray=\"5 3\"").count();
        assert_eq!((flagged, flagged + outlined), (6, 6), "{html}");
        assert!(html.contains("one pair at a time"));
    }
}
