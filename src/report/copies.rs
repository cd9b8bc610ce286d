//! The `copies` block (`--count-copies`) as people read it: a run table's lines, a sweep visit's
//! progress figure, the sweep report's line per mechanism and receive path, and its CSV
//! columns. The figures are the kernel's own counts; every one missing says why.
use super::csv_cell::Cell;
use super::plot::escape;
use super::units;
use crate::analysis::Dataset;
use crate::measure::copies::{DeviceTransmit, DropCount};
use crate::record::copies::CopiesReport;
use std::fmt::Write;

use Cell::{Json, Scalar};

/// The copies block's CSV columns, units in the names (empty cells without `--count-copies`).
pub const CSV: &[(&str, &str, Cell)] = &[
    ("copies_counted_in", "/copies/counted_in", Scalar),
    ("copies_measured_s", "/copies/measured_s", Scalar),
    ("copies_headline_value", "/copies/headline_value", Scalar),
    ("copies_delivered_bytes", "/copies/delivered_bytes", Scalar),
    (
        "copies_copied_to_user_bytes",
        "/copies/copied_to_user_bytes",
        Scalar,
    ),
    (
        "copies_copied_to_user_bytes_unavailable_reason",
        "/copies/copied_to_user_bytes_unavailable_reason",
        Scalar,
    ),
    ("copies_copy_calls", "/copies/copy_calls", Scalar),
    (
        "copies_copied_per_byte_delivered",
        "/copies/copied_per_byte_delivered",
        Scalar,
    ),
    (
        "copies_copied_per_byte_delivered_unavailable_reason",
        "/copies/copied_per_byte_delivered_unavailable_reason",
        Scalar,
    ),
    ("copies_mapped_share", "/copies/mapped_share", Scalar),
    (
        "copies_copied_by_other_processes_bytes",
        "/copies/copied_by_other_processes_bytes",
        Scalar,
    ),
    ("copies_drops", "/copies/drops", Json),
    (
        "copies_drops_unavailable_reason",
        "/copies/drops_unavailable_reason",
        Scalar,
    ),
    ("copies_transmit", "/copies/transmit", Json),
    (
        "copies_transmit_unavailable_reason",
        "/copies/transmit_unavailable_reason",
        Scalar,
    ),
    ("copies_lost_samples", "/copies/lost_samples", Scalar),
];

/// The bytes copied per byte delivered, with the zc-recv share to set it against.
fn ratio_text(c: &CopiesReport) -> String {
    let mut s = match (c.copied_per_byte_delivered, c.copied_to_user_bytes) {
        (Some(v), Some(bytes)) => format!(
            "{v:.3} B copied to user space per byte delivered ({bytes} of {} B)",
            c.delivered_bytes
        ),
        (_, Some(bytes)) => format!(
            "{bytes} B copied to user space; per byte delivered n/a ({})",
            why(&c.copied_per_byte_delivered_unavailable_reason)
        ),
        _ => format!(
            "bytes copied to user space n/a ({})",
            why(&c.copied_to_user_bytes_unavailable_reason)
        ),
    };
    if let Some(m) = c.mapped_share {
        let _ = write!(
            s,
            "; the receive path mapped {:.1} % of the bytes, so 1 − mapped = {:.3}",
            m * 100.0,
            1.0 - m
        );
    }
    s
}

fn why(reason: &Option<String>) -> &str {
    reason.as_deref().unwrap_or("no reason was recorded")
}

fn drops_text(drops: &Option<Vec<DropCount>>, reason: &Option<String>) -> String {
    match drops.as_deref() {
        None => format!("drops n/a ({})", why(reason)),
        Some([]) => "no packet dropped".into(),
        Some(drops) => {
            let each: Vec<String> = drops
                .iter()
                .map(|d| format!("{} {}", d.reason, d.packets))
                .collect();
            format!("packets dropped: {}", each.join(", "))
        }
    }
}

fn transmit_text(transmit: &Option<Vec<DeviceTransmit>>, reason: &Option<String>) -> String {
    match transmit.as_deref() {
        None => format!("transmit n/a ({})", why(reason)),
        Some([]) => "no device transmitted".into(),
        Some(devices) => {
            let each: Vec<String> = devices
                .iter()
                .map(|d| {
                    format!(
                        "{} {} in {} packets",
                        d.device,
                        units::bytes(d.bytes as f64),
                        d.packets
                    )
                })
                .collect();
            format!("transmitted: {}", each.join(", "))
        }
    }
}

/// One line: the ratio, the drops and the transmits (a sweep visit's progress line).
pub fn in_brief(c: &CopiesReport) -> String {
    if let Some(why) = c.nothing_counted() {
        return format!("copies not counted: {why}");
    }
    format!(
        "{}; {}; {}",
        ratio_text(c),
        drops_text(&c.drops, &c.drops_unavailable_reason),
        transmit_text(&c.transmit, &c.transmit_unavailable_reason)
    )
}

/// A run table's copies lines, where the record has the block.
pub fn run_lines(out: &mut String, r: &crate::record::RunRecord) {
    let Some(c) = &r.copies else {
        return;
    };
    let unit = match r.config.pattern {
        crate::config::Pattern::Stream => "Gbit/s",
        crate::config::Pattern::Rr => "round trips/s",
        crate::config::Pattern::Crr => "transactions/s",
    };
    lines(out, c, unit);
}

/// The copies block's lines in a run's table; `unit` is the headline figure's. Nothing
/// counted: one line, the reason.
pub fn lines(out: &mut String, c: &CopiesReport, unit: &str) {
    if let Some(why) = c.nothing_counted() {
        let _ = writeln!(out, "copies (kernel tracepoints): not counted: {why}");
        return;
    }
    let _ = writeln!(out, "copies (kernel tracepoints): {}", ratio_text(c));
    let _ = writeln!(
        out,
        "  {}; {}",
        drops_text(&c.drops, &c.drops_unavailable_reason),
        transmit_text(&c.transmit, &c.transmit_unavailable_reason)
    );
    if let Some(others) = c.copied_by_other_processes_bytes.filter(|&b| b > 0) {
        let _ = writeln!(
            out,
            "  other processes on the run's CPUs copied {others} B (not counted above)"
        );
    }
    let figure = c
        .headline_value
        .map_or_else(|| "none".into(), |v| format!("{v:.3} {unit}"));
    let _ = writeln!(
        out,
        "  counted in {}; that run's own figure: {figure}",
        c.counted_in
    );
    let _ = writeln!(out, "  scope: {}", c.scope);
}

/// Per mechanism and receive path (transport and pattern where they vary): its points'
/// blocks, in the report's order.
fn groups(data: &Dataset) -> Vec<(String, Vec<&CopiesReport>)> {
    let mut out: Vec<(String, Vec<&CopiesReport>)> = Vec::new();
    for p in &data.points {
        let Some(block) = p
            .line
            .checked_sub(1)
            .and_then(|i| data.records.get(i))
            .and_then(|r| r.copies.as_ref())
        else {
            continue;
        };
        let mut name = format!(
            "{}, --recv {}",
            p.mechanism,
            p.recv.as_deref().unwrap_or("recv")
        );
        if let Some(t) = &p.transport {
            let _ = write!(name, ", {t}");
        }
        if p.pattern != "stream" {
            let _ = write!(name, ", {}", p.pattern);
        }
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, blocks)) => blocks.push(block),
            None => out.push((name, vec![block])),
        }
    }
    out
}

/// A group's line: the range of its points' ratios, summed drops and transmits.
fn group_line(blocks: &[&CopiesReport]) -> String {
    let nothing: Vec<&str> = blocks.iter().filter_map(|c| c.nothing_counted()).collect();
    if nothing.len() == blocks.len() {
        return format!(
            "not counted in any of its {} points: {}",
            blocks.len(),
            nothing[0]
        );
    }
    let ratios: Vec<f64> = blocks
        .iter()
        .filter_map(|c| c.copied_per_byte_delivered)
        .collect();
    let mut s = match ratios.iter().copied().reduce(f64::min) {
        Some(lo) => {
            let hi = ratios.iter().copied().fold(lo, f64::max);
            format!(
                "{lo:.3}–{hi:.3} B copied to user space per byte delivered over {} of {} points",
                ratios.len(),
                blocks.len()
            )
        }
        None => format!(
            "per byte delivered n/a in all {} points ({})",
            blocks.len(),
            why(&blocks[0].copied_per_byte_delivered_unavailable_reason)
        ),
    };
    let mapped: Vec<f64> = blocks.iter().filter_map(|c| c.mapped_share).collect();
    if let Some(lo) = mapped.iter().copied().reduce(f64::min) {
        let hi = mapped.iter().copied().fold(lo, f64::max);
        let _ = write!(
            s,
            "; 1 − the mapped share the receive path reported: {:.3}–{:.3}",
            1.0 - hi,
            1.0 - lo
        );
    }
    let _ = write!(
        s,
        "; {}; {}",
        drops_text(&summed_drops(blocks), &blocks[0].drops_unavailable_reason),
        transmit_text(
            &summed_transmit(blocks),
            &blocks[0].transmit_unavailable_reason
        )
    );
    s
}

/// Drops summed over the blocks, by reason; `None` when a block has none to give.
fn summed_drops(blocks: &[&CopiesReport]) -> Option<Vec<DropCount>> {
    let mut out: Vec<DropCount> = Vec::new();
    for d in blocks
        .iter()
        .map(|c| c.drops.as_ref())
        .collect::<Option<Vec<_>>>()?
    {
        for one in d {
            match out.iter_mut().find(|o| o.code == one.code) {
                Some(o) => o.packets += one.packets,
                None => out.push(one.clone()),
            }
        }
    }
    out.sort_by_key(|d| std::cmp::Reverse(d.packets));
    Some(out)
}

/// Transmits summed over the blocks, by device; `None` when a block has none to give.
fn summed_transmit(blocks: &[&CopiesReport]) -> Option<Vec<DeviceTransmit>> {
    let mut out: Vec<DeviceTransmit> = Vec::new();
    for t in blocks
        .iter()
        .map(|c| c.transmit.as_ref())
        .collect::<Option<Vec<_>>>()?
    {
        for one in t {
            match out.iter_mut().find(|o| o.device == one.device) {
                Some(o) => (o.bytes, o.packets) = (o.bytes + one.bytes, o.packets + one.packets),
                None => out.push(one.clone()),
            }
        }
    }
    Some(out)
}

const INTRO: &str = "From each point's copies visit, with the kernel's tracepoints open (never \
     a visit the figures above come from): bytes the receive path copied to user space \
     (skb:skb_copy_datagram_iovec in the run's processes) per byte delivered, packets dropped \
     by reason (skb:kfree_skb) and bytes per device (net:net_dev_xmit), the last two for every \
     task on the run's CPUs.";

/// report.md's section (empty when no point counted copies).
pub fn markdown_section(data: &Dataset) -> String {
    let groups = groups(data);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = format!("\n## Copies counted (--count-copies)\n\n{INTRO}\n\n");
    for (name, blocks) in &groups {
        let _ = writeln!(
            out,
            "- **{name}**: {}",
            group_line(blocks).replace('|', "\\|")
        );
    }
    out
}

/// report.html's section (empty when no point counted copies).
pub fn html_section(data: &Dataset) -> String {
    let groups = groups(data);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<h2 id=\"copies\">Copies counted (--count-copies)</h2><p class=\"meta\">{}</p><ul>",
        escape(INTRO)
    );
    for (name, blocks) in &groups {
        let _ = write!(
            out,
            "<li><b>{}</b>: {}</li>",
            escape(name),
            escape(&group_line(blocks))
        );
    }
    out.push_str("</ul>");
    out
}

#[cfg(test)]
#[path = "copies_tests.rs"]
mod tests;
