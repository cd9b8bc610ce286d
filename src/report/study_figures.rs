//! The figures of the single-study reports (file, servers): each a plot with a log y axis
//! and one line per series, shown in report.html under its heading with its caption and its
//! "SVG · PNG · CSV" links, in report.md as its PNG and the same links, and written as those
//! files through the one writer (`figure_files`, via `study::write`). The page, report.md and
//! the files take one list of figures, so what is linked is what is written.
use super::figure_files::{self, FigureFile};
use super::plot::axis::{Scale, TickFormat};
use super::plot::{escape, render, Panel, Plot, Series};
use super::plots::Figure;
use std::fmt::Write as _;

/// What a study's figure shows: its plot id (which names its files, `figure_files::KNOWN`),
/// heading, caption, x axis (label, scale, tick format) and y label.
pub struct LogFigure<'a> {
    pub id: &'static str,
    pub heading: &'a str,
    pub caption: &'a str,
    pub x: (&'a str, Scale, TickFormat),
    pub y_label: &'a str,
}

impl LogFigure<'_> {
    /// The figure of `data`, one panel with a log y axis; with no datum at all the panel says
    /// `when_empty` in place of lines.
    pub fn of(&self, data: Vec<Series>, when_empty: &str) -> Figure {
        let empty = data.iter().all(|s| s.data.is_empty());
        Figure {
            heading: self.heading.to_string(),
            caption: self.caption.to_string(),
            plot: Plot {
                id: self.id,
                x_label: self.x.0.into(),
                y_label: self.y_label.into(),
                x_scale: self.x.1,
                x_format: self.x.2,
                y_scale: Scale::Log10,
                panels: vec![Panel {
                    title: String::new(),
                    note: empty.then(|| when_empty.to_string()),
                    series: data,
                }],
                columns: 1,
            },
        }
    }
}

/// The figures in report.html: per figure its heading, its SVG, its caption and its links.
pub fn html(figures: &[Figure]) -> String {
    let mut out = String::new();
    for (stem, f) in figure_files::named(figures) {
        let _ = writeln!(
            out,
            "<h2>{}</h2>\n{}\n<p class=\"note\">{}</p>{}",
            escape(&f.heading),
            render(&f.plot),
            escape(&f.caption),
            figure_files::links_html(&stem)
        );
    }
    out
}

/// The figures in report.md: their section, each figure's PNG and links.
pub fn markdown(figures: &[Figure]) -> String {
    figure_files::markdown_section(figures)
}

/// The files of the figures, named as [`html`] and [`markdown`] link them.
pub fn files(figures: &[Figure]) -> Vec<FigureFile> {
    figure_files::files(figures)
}
