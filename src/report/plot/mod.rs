//! A small SVG plotter for the report: one `<svg>` per plot holding its panels (small
//! multiples sharing one legend), each with axes, ticks, polylines, markers and 95 % CI error
//! bars. Output is well-formed XML (SVG 1.1), so it can be inlined in the HTML and parsed.
pub(crate) mod axis;
pub(crate) mod heatmap;
pub(crate) mod raster;

use axis::{Axis, Scale, TickFormat};
use std::fmt::Write;

/// One measured value; `ci` is its (low, high) 95 % interval when there is one.
#[derive(Debug, Clone, PartialEq)]
pub struct Datum {
    pub x: f64,
    pub y: f64,
    pub ci: Option<(f64, f64)>,
    /// Hover text (an SVG `<title>`).
    pub title: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub dashed: bool,
    pub data: Vec<Datum>,
}

/// One panel; `note` is shown instead of data when there is none (and says why).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Panel {
    pub title: String,
    pub series: Vec<Series>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// Identifies the plot in the page and in tests (`data-plot`).
    pub id: &'static str,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub x_format: TickFormat,
    /// Linear (from zero) or Log10.
    pub y_scale: Scale,
    pub panels: Vec<Panel>,
    /// Panels per row; 0 = as many as fit (up to three).
    pub columns: usize,
}

const WIDTH: f64 = 1080.0;
const PANEL_HEIGHT: f64 = 280.0;
const LEGEND_HEIGHT: f64 = 30.0;
/// Plot-area margins inside a panel: left, right, top, bottom.
const MARGIN: (f64, f64, f64, f64) = (62.0, 26.0, 30.0, 44.0);

/// Escapes text for XML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Renders the plot as one `<svg>` element.
pub fn render(plot: &Plot) -> String {
    let columns = match plot.columns {
        0 => plot.panels.len().clamp(1, 3),
        n => n,
    };
    let rows = plot.panels.len().div_ceil(columns).max(1);
    let height = LEGEND_HEIGHT + rows as f64 * PANEL_HEIGHT;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" data-plot=\"{}\" \
         width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" \
         font-family=\"sans-serif\" font-size=\"11\">",
        plot.id
    );
    svg += &legend(plot);
    let panel_width = WIDTH / columns as f64;
    for (i, panel) in plot.panels.iter().enumerate() {
        let x = (i % columns) as f64 * panel_width;
        let y = LEGEND_HEIGHT + (i / columns) as f64 * PANEL_HEIGHT;
        svg += &render_panel(plot, panel, (x, y, panel_width, PANEL_HEIGHT));
    }
    svg + "</svg>"
}

/// Every series name once, with its colour and dash, across the top.
fn legend(plot: &Plot) -> String {
    let mut seen: Vec<(&str, &str, bool)> = Vec::new();
    for s in plot.panels.iter().flat_map(|p| &p.series) {
        if !seen.iter().any(|(n, ..)| *n == s.name) {
            seen.push((&s.name, s.color, s.dashed));
        }
    }
    let mut out = String::from("<g class=\"legend\">");
    let mut x = MARGIN.0;
    for (name, color, dashed) in seen {
        let _ = write!(
            out,
            "<line x1=\"{x}\" y1=\"15\" x2=\"{}\" y2=\"15\" stroke=\"{color}\" \
             stroke-width=\"2\"{}/><circle cx=\"{}\" cy=\"15\" r=\"3.5\" fill=\"{color}\"/>\
             <text x=\"{}\" y=\"19\">{}</text>",
            x + 24.0,
            dash(dashed),
            x + 12.0,
            x + 30.0,
            escape(name)
        );
        x += 42.0 + 7.0 * name.chars().count() as f64;
    }
    out + "</g>"
}

fn dash(dashed: bool) -> &'static str {
    if dashed {
        " stroke-dasharray=\"5 3\""
    } else {
        ""
    }
}

fn render_panel(plot: &Plot, panel: &Panel, frame: (f64, f64, f64, f64)) -> String {
    let (fx, fy, fw, fh) = frame;
    let area = (
        fx + MARGIN.0,
        fy + MARGIN.2,
        fw - MARGIN.0 - MARGIN.1,
        fh - MARGIN.2 - MARGIN.3,
    );
    let mut out = format!(
        "<g class=\"panel\"><text class=\"panel-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" \
         font-weight=\"bold\" font-size=\"12\">{}</text>",
        area.0 + area.2 / 2.0,
        fy + 18.0,
        escape(&panel.title)
    );
    let data: Vec<&Datum> = panel.series.iter().flat_map(|s| &s.data).collect();
    if data.is_empty() {
        out += &frame_rect(area);
        out += &note(panel.note.as_deref().unwrap_or("no data"), area);
        return out + "</g>";
    }
    let xs: Vec<f64> = data.iter().map(|d| d.x).collect();
    let ys: Vec<f64> = data
        .iter()
        .flat_map(|d| {
            let (lo, hi) = d.ci.unwrap_or((d.y, d.y));
            [lo, d.y, hi]
        })
        .collect();
    let x_axis = Axis::fit(&xs, plot.x_scale, plot.x_format);
    let y_axis = Axis::fit(&ys, plot.y_scale, TickFormat::Number);
    out += &axes(plot, &x_axis, &y_axis, area);
    let to_px = |x: f64, y: f64| {
        (
            area.0 + x_axis.fraction(x) * area.2,
            area.1 + area.3 - y_axis.fraction(y) * area.3,
        )
    };
    for s in &panel.series {
        out += &series(s, &to_px);
    }
    out + "</g>"
}

fn frame_rect((x, y, w, h): (f64, f64, f64, f64)) -> String {
    format!(
        "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"none\" stroke=\"#999\"/>"
    )
}

/// A centred note, wrapped at about 48 characters a line.
fn note(text: &str, (x, y, w, h): (f64, f64, f64, f64)) -> String {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let last = lines.last_mut().expect("one line");
        if !last.is_empty() && last.len() + word.len() > 48 {
            lines.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    let top = y + h / 2.0 - 8.0 * (lines.len() as f64 - 1.0);
    let mut out = String::from("<g class=\"note\" text-anchor=\"middle\" fill=\"#555\">");
    for (i, line) in lines.iter().enumerate() {
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            x + w / 2.0,
            top + 16.0 * i as f64,
            escape(line)
        );
    }
    out + "</g>"
}

fn axes(plot: &Plot, x_axis: &Axis, y_axis: &Axis, area: (f64, f64, f64, f64)) -> String {
    let (x0, y0, w, h) = area;
    let mut out = String::from("<g class=\"axes\" fill=\"#333\">");
    out += &frame_rect(area);
    for (v, label) in x_axis.ticks() {
        let px = x0 + x_axis.fraction(v) * w;
        let _ = write!(
            out,
            "<line x1=\"{px}\" y1=\"{y0}\" x2=\"{px}\" y2=\"{}\" stroke=\"#e4e4e4\"/>\
             <text x=\"{px}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            y0 + h,
            y0 + h + 14.0,
            escape(&label)
        );
    }
    for (v, label) in y_axis.ticks() {
        let py = y0 + h - y_axis.fraction(v) * h;
        let _ = write!(
            out,
            "<line x1=\"{x0}\" y1=\"{py}\" x2=\"{}\" y2=\"{py}\" stroke=\"#e4e4e4\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            x0 + w,
            x0 - 5.0,
            py + 4.0,
            escape(&label)
        );
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
         <text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\">{}</text></g>",
        x0 + w / 2.0,
        y0 + h + 32.0,
        escape(&plot.x_label),
        x0 - 46.0,
        y0 + h / 2.0,
        escape(&plot.y_label)
    );
    out
}

fn series(s: &Series, to_px: &dyn Fn(f64, f64) -> (f64, f64)) -> String {
    let name = escape(&s.name);
    let mut out = format!("<g class=\"series\" data-series=\"{name}\">");
    let mut data: Vec<&Datum> = s.data.iter().collect();
    data.sort_by(|a, b| a.x.total_cmp(&b.x));
    if data.len() > 1 {
        let points: Vec<String> = data
            .iter()
            .map(|d| {
                let (x, y) = to_px(d.x, d.y);
                format!("{x:.1},{y:.1}")
            })
            .collect();
        let _ = write!(
            out,
            "<polyline class=\"line\" points=\"{}\" fill=\"none\" stroke=\"{}\" \
             stroke-width=\"1.5\"{}/>",
            points.join(" "),
            s.color,
            dash(s.dashed)
        );
    }
    for d in data {
        let (x, y) = to_px(d.x, d.y);
        if let Some((lo, hi)) = d.ci {
            let (_, ylo) = to_px(d.x, lo);
            let (_, yhi) = to_px(d.x, hi);
            let _ = write!(
                out,
                "<path class=\"ci\" d=\"M{x:.1},{ylo:.1}V{yhi:.1}\
                 M{:.1},{ylo:.1}H{:.1}M{:.1},{yhi:.1}H{:.1}\" stroke=\"{}\" fill=\"none\"/>",
                x - 3.0,
                x + 3.0,
                x - 3.0,
                x + 3.0,
                s.color
            );
        }
        let _ = write!(
            out,
            "<circle class=\"point\" data-series=\"{name}\" data-x=\"{}\" data-y=\"{}\" \
             cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{}\"><title>{}</title></circle>",
            d.x,
            d.y,
            s.color,
            escape(&d.title)
        );
    }
    out + "</g>"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datum(x: f64, y: f64, ci: Option<(f64, f64)>) -> Datum {
        Datum {
            x,
            y,
            ci,
            title: format!("{x} -> {y} <&>"),
        }
    }

    fn plot(panels: Vec<Panel>) -> Plot {
        Plot {
            id: "throughput",
            x_label: "message size".into(),
            y_label: "Gbit/s".into(),
            x_scale: Scale::Log2,
            x_format: TickFormat::Bytes,
            y_scale: Scale::Linear,
            panels,
            columns: 0,
        }
    }

    fn panel(series: Vec<Series>) -> Panel {
        Panel {
            title: "1 thread".into(),
            series,
            note: None,
        }
    }

    fn line(name: &str, data: Vec<Datum>) -> Series {
        Series {
            name: name.into(),
            color: "#d62728",
            dashed: false,
            data,
        }
    }

    #[test]
    fn a_plot_is_one_well_formed_svg_with_a_marker_per_datum() {
        let svg = render(&plot(vec![panel(vec![
            line(
                "copy",
                vec![datum(64.0, 1.0, Some((0.9, 1.1))), datum(4096.0, 9.0, None)],
            ),
            line("gather", vec![datum(64.0, 1.5, None)]),
        ])]));
        let doc = roxmltree::Document::parse(&svg).expect("well-formed");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        let count = |class: &str| {
            root.descendants()
                .filter(|n| n.attribute("class") == Some(class))
                .count()
        };
        assert_eq!(count("point"), 3);
        assert_eq!(count("ci"), 1);
        assert_eq!(count("line"), 1, "a single datum draws no line");
        assert!(svg.contains("&lt;&amp;&gt;"));
    }

    #[test]
    fn markers_sit_inside_their_panel() {
        let svg = render(&plot(vec![panel(vec![line(
            "copy",
            vec![datum(64.0, 0.0, None), datum(1024.0, 10.0, None)],
        )])]));
        let doc = roxmltree::Document::parse(&svg).unwrap();
        for c in doc
            .descendants()
            .filter(|n| n.has_tag_name("circle") && n.attribute("class") == Some("point"))
        {
            let cx: f64 = c.attribute("cx").unwrap().parse().unwrap();
            let cy: f64 = c.attribute("cy").unwrap().parse().unwrap();
            assert!(
                (MARGIN.0..=WIDTH).contains(&cx)
                    && (LEGEND_HEIGHT..=LEGEND_HEIGHT + PANEL_HEIGHT).contains(&cy),
                "{cx},{cy}"
            );
        }
    }

    #[test]
    fn an_empty_panel_shows_its_note_instead_of_axes() {
        let svg = render(&plot(vec![Panel {
            title: "cache misses".into(),
            series: Vec::new(),
            note: Some("not measured: no PMU".into()),
        }]));
        assert!(svg.contains("not measured: no PMU"));
        assert!(!svg.contains("class=\"point\""));
        roxmltree::Document::parse(&svg).unwrap();
    }

    #[test]
    fn panels_wrap_into_rows_of_three() {
        let panels = (0..4)
            .map(|_| panel(vec![line("copy", vec![datum(64.0, 1.0, None)])]))
            .collect();
        let svg = render(&plot(panels));
        let expected = LEGEND_HEIGHT + 2.0 * PANEL_HEIGHT;
        assert!(svg.contains(&format!("height=\"{expected}\"")), "{svg}");
    }

    #[test]
    fn the_legend_names_each_series_once() {
        let p = plot(vec![
            panel(vec![line("copy", vec![datum(64.0, 1.0, None)])]),
            panel(vec![line("copy", vec![datum(64.0, 2.0, None)])]),
        ]);
        let svg = render(&p);
        let legend =
            &svg[svg.find("class=\"legend\"").unwrap()..svg.find("class=\"panel\"").unwrap()];
        assert_eq!(legend.matches(">copy<").count(), 1);
    }
}
