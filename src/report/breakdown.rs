//! `--profile` in the reports: the top categories of each side as text (`run`'s table), and
//! a stacked-bar SVG of every side's breakdown (one bar per size and side, every category a
//! segment, shares of the side's samples) that the sweep, file and servers reports place per
//! mechanism or model. Inline SVG, no script.
use super::plot::escape;
use crate::measure::profile::{Category, Profile, ProfileBlock};
use crate::record::RunRecord;
use std::fmt::Write;

/// Categories named in `run`'s short breakdown, per side.
const TOP: usize = 4;

/// A colour per category, in `Category::ALL` order (copies in reds, kernel paths in blues and
/// greens, user code grey).
const COLOURS: [&str; Category::ALL.len()] = [
    "#d62728", "#ff7f0e", "#e377c2", "#bcbd22", "#1f77b4", "#17becf", "#9467bd", "#8c564b",
    "#2ca02c", "#98df8a", "#aec7e8", "#c5b0d5", "#7f7f7f", "#c7c7c7",
];

/// `run`'s lines for the profile: which run was sampled, then per side its top categories,
/// copies' worth, samples and skew, or why there is no profile.
pub fn text(r: &RunRecord) -> String {
    let Some(visit) = &r.profiled_visit else {
        return String::new();
    };
    let mut out = format!("\nprofile (where the CPU went): {}\n", visit.description);
    for side in &r.sides {
        let line = match &side.profile {
            Some(Profile::Measured(b)) => {
                let copies = b
                    .copies_per_byte
                    .as_ref()
                    .map_or(String::new(), |c| format!("; {}", c.label));
                format!(
                    "{}{copies} ({} {} samples, {:.0} % at irq re-enable, {} recharged)",
                    b.top_categories(TOP),
                    b.samples,
                    b.event,
                    100.0 * b.skew.irq_reenable_share,
                    b.skew.recharged_samples
                )
            }
            Some(Profile::Unavailable { reason }) => format!("unavailable: {reason}"),
            None => "not sampled".into(),
        };
        let _ = writeln!(out, "  {:<10}{line}", side.side);
    }
    let _ = writeln!(
        out,
        "  memcpy per byte: {}",
        match visit.memcpy_ns_per_byte {
            Some(ns) => format!("{ns:.4} ns ({})", visit.memcpy_source),
            None => format!("not measured ({})", visit.memcpy_source),
        }
    );
    out
}

/// The sweep report's section: a stacked-bar figure per series (mechanism, pattern, flows), a
/// bar per size and side; empty when no point was profiled.
pub fn html_section(data: &crate::analysis::Dataset) -> String {
    section_for(&crate::analysis::profile::profiled(data))
}

/// The section over `points` (any study's): a figure per series, and nothing when empty.
pub fn section_for(points: &[crate::analysis::profile::Profiled]) -> String {
    if points.is_empty() {
        return String::new();
    }
    let mut series: Vec<&str> = points.iter().map(|p| p.series.as_str()).collect();
    series.dedup();
    let mut out = String::from(
        "<h2 id=\"profile\">Where the CPU goes (--profile)</h2><p class=\"meta\">Each \
         side's samples from the point's profile visit, by category; hover a segment for its \
         share, 95 % interval and samples. The answer above gives the largest categories and \
         the copy share by size.</p>",
    );
    for (i, name) in series.iter().enumerate() {
        let of: Vec<_> = points.iter().filter(|p| p.series == *name).collect();
        let bars: Vec<Bar> = of
            .iter()
            .flat_map(|p| {
                p.sides.iter().filter_map(|s| {
                    Some(Bar {
                        label: format!("{} {}", p.at, s.side),
                        block: s.profile.as_ref().ok()?,
                    })
                })
            })
            .collect();
        let missing: Vec<String> = of
            .iter()
            .flat_map(|p| {
                p.sides.iter().filter_map(|s| {
                    let why = s.profile.as_ref().err()?;
                    Some(format!("{} {}: {why}", p.at, s.side))
                })
            })
            .collect();
        let caption = match missing.len() {
            0 => "Shares of each side's samples; every bar is 100 %.".to_string(),
            _ => format!("Not profiled: {}.", missing.join("; ")),
        };
        let _ = write!(
            out,
            "<figure id=\"profile-{i}\"><h3>{}</h3>{}<figcaption>{}</figcaption></figure>",
            escape(name),
            stacked_bars(name, &bars),
            escape(&caption)
        );
    }
    out
}

/// One bar: a label and a side's block.
pub struct Bar<'a> {
    pub label: String,
    pub block: &'a ProfileBlock,
}

const BAR_W: f64 = 34.0;
const GAP: f64 = 14.0;
const PLOT_H: f64 = 220.0;
const LEFT: f64 = 46.0;
const TOP_PAD: f64 = 16.0;
const LEGEND_W: f64 = 170.0;

/// A stacked-bar figure of `bars`, each 100 % of its side's samples; `id` names the figure.
pub fn stacked_bars(id: &str, bars: &[Bar]) -> String {
    let width = LEFT + bars.len() as f64 * (BAR_W + GAP) + GAP + LEGEND_W;
    let height = TOP_PAD + PLOT_H + 90.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"breakdown\" data-plot=\"{}\" \
         width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\">",
        escape(id)
    );
    for pct in [0, 25, 50, 75, 100] {
        let y = TOP_PAD + PLOT_H * (1.0 - pct as f64 / 100.0);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{pct} %</text>",
            width - LEGEND_W,
            LEFT - 4.0,
            y + 4.0
        );
    }
    for (i, bar) in bars.iter().enumerate() {
        let x = LEFT + GAP + i as f64 * (BAR_W + GAP);
        segments(&mut out, x, bar);
        let ty = TOP_PAD + PLOT_H + 12.0;
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{ty:.1}\" text-anchor=\"end\" \
             transform=\"rotate(-45 {:.1} {ty:.1})\">{}</text>",
            x + BAR_W / 2.0,
            x + BAR_W / 2.0,
            escape(&bar.label)
        );
    }
    legend(&mut out, width - LEGEND_W + 10.0);
    out.push_str("</svg>");
    out
}

fn segments(out: &mut String, x: f64, bar: &Bar) {
    let mut y = TOP_PAD + PLOT_H;
    for (c, colour) in bar.block.categories.iter().zip(COLOURS) {
        if c.samples == 0 {
            continue;
        }
        let h = PLOT_H * c.share;
        y -= h;
        let _ = write!(
            out,
            "<rect class=\"segment\" data-category=\"{}\" data-share=\"{:.4}\" x=\"{x:.1}\" \
             y=\"{y:.2}\" width=\"{BAR_W}\" height=\"{h:.2}\" fill=\"{colour}\">\
             <title>{}: {}: {:.1} % [{:.1}, {:.1}] of {} samples</title></rect>",
            c.name.name(),
            c.share,
            escape(&bar.label),
            c.name.name(),
            100.0 * c.share,
            100.0 * c.ci95_low,
            100.0 * c.ci95_high,
            bar.block.samples
        );
    }
}

fn legend(out: &mut String, x: f64) {
    for (i, (c, colour)) in Category::ALL.iter().zip(COLOURS).enumerate() {
        let y = TOP_PAD + i as f64 * 15.0;
        let _ = write!(
            out,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"10\" height=\"10\" fill=\"{colour}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            x + 14.0,
            y + 9.0,
            c.name()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_categories_come_largest_first_and_skip_empty_ones() {
        let mut counts = [0; Category::ALL.len()];
        counts[0] = 30;
        counts[4] = 60;
        counts[13] = 10;
        let b = ProfileBlock::of_counts(counts);
        assert_eq!(
            b.top_categories(2),
            "protocol 60 %, copy_user_to_kernel 30 %"
        );
        assert_eq!(b.top_categories(9).matches('%').count(), 3);
    }

    #[test]
    fn every_bar_stacks_to_the_full_height_and_the_svg_parses() {
        let mut counts = [1; Category::ALL.len()];
        counts[1] = 40;
        let b = ProfileBlock::of_counts(counts);
        let bars = [
            Bar {
                label: "4 KiB sender".into(),
                block: &b,
            },
            Bar {
                label: "a<b".into(),
                block: &b,
            },
        ];
        let svg = stacked_bars("copy", &bars);
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let heights: f64 = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("segment"))
            .map(|n| n.attribute("height").unwrap().parse::<f64>().unwrap())
            .sum();
        assert!((heights - 2.0 * PLOT_H).abs() < 0.1, "{heights}");
        assert!(svg.contains("a&lt;b"));
    }
}
