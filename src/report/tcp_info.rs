//! The report's section "What limited each flow?" in full: beyond the answer's one line per
//! point, a table of every sampled tcp socket of every point (its share of busy time limited
//! by the receiver's window and by the send buffer, its busy share of the measured phase, its
//! retransmits and mean round-trip time), from the points' `tcp_info` blocks. Where the
//! kernel's tcp_info lacks a field the cell names it.
use super::plot::escape;
use crate::analysis::Dataset;
use crate::record::tcp::TcpSide;
use crate::record::view::RunView;
use std::fmt::Write;

const TITLE: &str = "What limited each flow? (per flow and side)";

const INTRO: &str = "Each sampled tcp socket of each point, from the point's tcp_info block \
     (for a point measured in visits, summed over its headline visits): the share of its \
     busy time (data in flight, tcpi_busy_time) the kernel counted as limited by the \
     receiver's window (tcpi_rwnd_limited) and by the send buffer (tcpi_sndbuf_limited), the \
     share of the measured phase it was busy, the segments it retransmitted \
     (tcpi_total_retrans) and the mean of its smoothed round-trip times (tcpi_rtt).";

const HEADER: [&str; 8] = [
    "point",
    "flow",
    "side",
    "rwnd-limited %",
    "sndbuf-limited %",
    "busy %",
    "retransmits",
    "rtt µs",
];

/// The points that have a `tcp_info` block, the last record of each point.
fn sampled(data: &Dataset) -> Vec<(String, &RunView)> {
    let mut out: Vec<(String, &RunView)> = Vec::new();
    for r in data.records.iter().filter(|r| r.tcp_info.is_some()) {
        let key = r
            .key()
            .map_or_else(|| r.config().point_key(), str::to_string);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = r,
            None => out.push((key, r)),
        }
    }
    out
}

/// A figure's cell, or the kernel field whose absence leaves it empty.
fn figure(value: Option<String>, side: &TcpSide, fields: &[&str]) -> String {
    if let Some(v) = value {
        return v;
    }
    match fields
        .iter()
        .find(|f| side.missing_fields.iter().any(|m| m == *f))
    {
        Some(f) => format!("— (this kernel's tcp_info has no {f})"),
        None if fields.contains(&"tcpi_busy_time") => "— (never busy)".into(),
        None => "—".into(),
    }
}

fn percent(v: Option<f64>) -> Option<String> {
    v.map(|v| format!("{:.1}", v * 100.0))
}

/// One row per sampled socket of every point.
pub fn rows(data: &Dataset) -> Vec<Vec<String>> {
    let limited = ["tcpi_busy_time", "tcpi_rwnd_limited", "tcpi_sndbuf_limited"];
    let mut out = Vec::new();
    for (key, r) in sampled(data) {
        for s in r.tcp_info.iter().flat_map(|t| &t.flows) {
            let m = &s.measured;
            out.push(vec![
                key.clone(),
                s.flow.to_string(),
                s.side.clone(),
                figure(percent(m.rwnd_limited_share), s, &limited),
                figure(percent(m.sndbuf_limited_share), s, &limited),
                figure(percent(m.busy_share), s, &limited[..1]),
                figure(
                    m.retransmits.map(|n| n.to_string()),
                    s,
                    &["tcpi_total_retrans"],
                ),
                figure(m.rtt_us_mean.map(|v| format!("{v:.1}")), s, &[]),
            ]);
        }
    }
    out
}

/// report.md's section (empty when no point has a `tcp_info` block).
pub fn markdown_section(data: &Dataset) -> String {
    let rows = rows(data);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!("\n## {TITLE}\n\n{INTRO}\n\n| {} |\n|", HEADER.join(" | "));
    out.push_str(&"---|".repeat(HEADER.len()));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = write!(out, "\n| {} |", cells.join(" | "));
    }
    out.push('\n');
    out
}

/// report.html's section (empty when no point has a `tcp_info` block).
pub fn html_section(data: &Dataset) -> String {
    let rows = rows(data);
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h2 id=\"tcp-info\">{}</h2><p class=\"meta\">{}</p>{}",
        escape(TITLE),
        escape(INTRO),
        super::html_table::cells("tcp-info", &HEADER, rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{jsonl, Shape};
    use serde_json::json;

    fn side(side: &str, measured: serde_json::Value, missing: &[&str]) -> serde_json::Value {
        json!({"flow": 0, "side": side, "rcvbuf_bytes": null, "sndbuf_bytes": null,
               "series": {"at_ms": [0.0, 300.0]}, "measured": measured,
               "missing_fields": missing})
    }

    /// A synthetic stream point whose record carries `flows` as its tcp_info block.
    fn data(flows: Vec<serde_json::Value>) -> Dataset {
        let text = jsonl(&[Shape::stream("send", 65536, 1, 10.0)]);
        let mut record: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        record["tcp_info"] = json!({"sampled": "s", "flows": flows});
        parse(&format!("{record}\n"), "r").unwrap()
    }

    #[test]
    fn a_row_per_socket_with_its_shares_and_the_missing_field_named() {
        let d = data(vec![
            side(
                "sender",
                json!({"elapsed_ms": 300.0, "retransmits": 7, "busy_share": 0.9,
                       "rwnd_limited_share": 0.625, "sndbuf_limited_share": 0.0,
                       "rtt_us_mean": 41.25}),
                &[],
            ),
            side(
                "receiver",
                json!({"elapsed_ms": 300.0, "retransmits": 0}),
                &["tcpi_busy_time", "tcpi_rwnd_limited", "tcpi_sndbuf_limited"],
            ),
        ]);
        let rows = rows(&d);
        assert_eq!(
            rows[0],
            [
                "send/stream/65536/1",
                "0",
                "sender",
                "62.5",
                "0.0",
                "90.0",
                "7",
                "41.2"
            ]
        );
        assert_eq!(
            rows[1][3],
            "— (this kernel's tcp_info has no tcpi_busy_time)"
        );
        assert_eq!(rows[1][7], "—");
        let md = markdown_section(&d);
        assert!(
            md.contains("## What limited each flow? (per flow and side)"),
            "{md}"
        );
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| ")).count(),
            3,
            "{md}"
        );
        assert!(html_section(&d).contains("<td>62.5</td>"));
    }

    #[test]
    fn without_a_tcp_info_block_there_is_no_section() {
        let d = parse(&jsonl(&[Shape::stream("send", 65536, 1, 10.0)]), "r").unwrap();
        assert_eq!(markdown_section(&d), "");
        assert_eq!(html_section(&d), "");
    }
}
