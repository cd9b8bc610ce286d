//! report.html: one self-contained page (inline CSS and SVG, no scripts, fonts or network),
//! written as well-formed XHTML so it parses as XML as well as HTML.
use super::plot::{escape, render};
use super::plots::Figure;
use super::summary::{self, Rows};
use crate::analysis::questions::Questions;
use crate::analysis::Dataset;
use std::fmt::Write;

const STYLE: &str = "
body { font-family: sans-serif; color: #222; line-height: 1.4; }
body { max-width: 1100px; margin: 1.5em auto; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
.answer { margin-bottom: 1em; }
.answer p { margin: 0.2em 0; }
.rests-on { color: #666; font-size: 0.9em; }
.answer ul { margin: 0.2em 0; font-size: 0.92em; }
figure { margin: 0 0 1.5em 0; }
figcaption { color: #444; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.88em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; white-space: nowrap; }
tr.not-completed td { color: #a00; }
.meta { color: #555; }
.figure-files { font-size: 0.85em; margin: 0.2em 0; }
";

/// A figure, its caption and the links to its files (`figure_files`, named `stem`).
fn figure(out: &mut String, f: &Figure, stem: &str) {
    let _ = write!(
        out,
        "<figure id=\"plot-{}\"><h3>{}</h3>{}<figcaption>{}</figcaption>{}</figure>",
        f.plot.id,
        escape(&f.heading),
        render(&f.plot),
        escape(&f.caption),
        super::figure_files::links_html(stem)
    );
}

fn rows_table(out: &mut String, class: &str, rows: &Rows) {
    let _ = write!(out, "<table class=\"{class}\">");
    for (label, value) in rows {
        let _ = write!(
            out,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(label),
            escape(value)
        );
    }
    out.push_str("</table>");
}

fn points_table(out: &mut String, data: &Dataset) {
    let (header, rows) = super::chosen_percentiles::with_columns(data, summary::table(data));
    out.push_str("<table class=\"points\"><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(&h));
    }
    out.push_str("</tr>");
    for row in rows {
        let class = if row[1] == "completed" {
            ""
        } else {
            " class=\"not-completed\""
        };
        let _ = write!(out, "<tr{class}>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

/// The points made on a sink (`--sink`), where the results hold any.
fn sink_table(out: &mut String, data: &Dataset) {
    let Some((header, rows)) = super::sink::points_table(data) else {
        return;
    };
    let _ = write!(
        out,
        "<h2 id=\"sink\">The sink</h2><p>{}</p>{}",
        escape(super::sink::POINTS_INTRO),
        super::html_table::cells("sink", &header, rows)
    );
}

/// The whole page; `source` names the results file in the text; `questions` are the study's.
pub fn page(data: &Dataset, source: &str, questions: &Questions) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head>\
         <meta charset=\"utf-8\"/><title>{}: {}</title><style>{STYLE}</style>\
         </head><body><h1>{}</h1><p class=\"meta\">{}</p>",
        escape(questions.title),
        escape(source),
        escape(questions.title),
        escape(&summary::overview(data, source))
    );
    out.push_str(&super::study::answers_html_with(
        &(questions.answers)(data),
        &(questions.tables)(data),
    ));
    out.push_str("<h2 id=\"plots\">Plots</h2>");
    let figures = super::figure_files::report_figures(data);
    for (stem, f) in super::figure_files::named(&figures) {
        figure(&mut out, f, &stem);
    }
    out.push_str(&super::breakdown::html_section(data));
    out.push_str(&super::copies::html_section(data));
    out.push_str(&super::tcp_info::html_section(data));
    out.push_str(&super::under_load::html_section(data));
    out.push_str("<h2 id=\"environment\">Environment</h2>");
    rows_table(&mut out, "environment", &summary::environment(data));
    out.push_str("<h2 id=\"limits\">Machine limits (bytepath probe)</h2>");
    rows_table(&mut out, "limits", &super::limits::machine_limits(data));
    out.push_str("<h2 id=\"method\">How this was measured</h2>");
    rows_table(&mut out, "method", &summary::method(data, questions));
    out.push_str("<h2 id=\"points\">Points</h2>");
    points_table(&mut out, data);
    sink_table(&mut out, data);
    let _ = writeln!(
        out,
        "<p class=\"meta\">Written by bytepath {} from {}.</p></body></html>",
        env!("CARGO_PKG_VERSION"),
        escape(source)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{demo_sweep, jsonl, Shape};
    use crate::sweep::answers::QUESTIONS as SWEEP;

    use crate::report::study::parse_xhtml as parse_xml;

    #[test]
    fn the_page_is_well_formed_and_holds_one_svg_per_plot() {
        let data = parse(&jsonl(&demo_sweep(true)), "results.jsonl").unwrap();
        let html = page(&data, "sweep/results.jsonl", &SWEEP);
        let doc = parse_xml(&html);
        let svgs: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("svg"))
            .collect();
        assert_eq!(svgs.len(), 5);
        for svg in svgs {
            let points = svg
                .descendants()
                .filter(|n| n.attribute("class") == Some("point"))
                .count();
            assert!(
                points > 0,
                "{:?} has no data points",
                svg.attribute("data-plot")
            );
        }
    }

    #[test]
    fn the_page_needs_no_network() {
        let data = parse(&jsonl(&demo_sweep(false)), "r").unwrap();
        let html = page(&data, "r", &SWEEP);
        for needle in ["<script", "<link", "@import", "url(", "src=\"http"] {
            assert!(!html.contains(needle), "found {needle}");
        }
    }

    #[test]
    fn failed_points_are_marked_in_the_table_and_text_is_escaped() {
        let mut failed = Shape::stream("copy", 4096, 1, 10.0);
        failed.status = "failed";
        let data = parse(&jsonl(&[failed]), "r").unwrap();
        let html = page(&data, "a<b>&c", &SWEEP);
        assert!(html.contains("a&lt;b&gt;&amp;c"));
        let doc = parse_xml(&html);
        assert!(doc
            .descendants()
            .any(|n| n.attribute("class") == Some("not-completed")));
    }
}
