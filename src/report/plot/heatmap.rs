//! An N×M heatmap as one `<svg>`: row labels on the left, column labels on top, one square per
//! cell coloured by its value on a log scale between the smallest and largest value shown
//! (darker is better, whichever way "better" points), its text inside, a hover title, a thick
//! red border on flagged cells, a dashed orange one on outlined cells, and grey for cells
//! without a value. Well-formed XML like the
//! other plots, so it inlines in the HTML and parses in tests.
use super::escape;
use std::fmt::Write;

/// One cell: its value (None: nothing to colour), its text, its hover title; `flagged` draws
/// a thick red border, `outlined` (a weaker mark) a dashed one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeatCell {
    pub value: Option<f64>,
    pub text: String,
    pub title: String,
    pub flagged: bool,
    pub outlined: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// Identifies the plot in the page and in tests (`data-plot`).
    pub id: String,
    pub row_label: String,
    pub column_label: String,
    pub rows: Vec<String>,
    pub columns: Vec<String>,
    /// cells[row][column].
    pub cells: Vec<Vec<HeatCell>>,
    pub higher_is_better: bool,
}

const CELL_W: f64 = 118.0;
const CELL_H: f64 = 40.0;
const LABEL_W: f64 = 150.0;
const TOP: f64 = 48.0;
const CHAR_W: f64 = 6.2;

/// The colour of a value at `t` in [0, 1] (1 = best): light yellow to dark blue.
fn color(t: f64) -> String {
    let (a, b) = ((255.0, 247.0, 188.0), (8.0, 48.0, 107.0));
    let mix = |x: f64, y: f64| (x + (y - x) * t.clamp(0.0, 1.0)).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(a.0, b.0),
        mix(a.1, b.1),
        mix(a.2, b.2)
    )
}

/// Where each value sits between the smallest and the largest on a log scale (1 = best).
fn scale(h: &Heatmap) -> impl Fn(f64) -> f64 {
    let values: Vec<f64> = h
        .cells
        .iter()
        .flatten()
        .filter_map(|c| c.value)
        .filter(|v| *v > 0.0)
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min).ln();
    let hi = values
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max)
        .ln();
    let better_high = h.higher_is_better;
    move |v: f64| {
        let t = if hi > lo {
            (v.ln() - lo) / (hi - lo)
        } else {
            1.0
        };
        if better_high {
            t
        } else {
            1.0 - t
        }
    }
}

/// Cuts a label that would not fit its space.
fn fit(text: &str, width: f64) -> String {
    let max = (width / CHAR_W) as usize;
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{kept}…")
}

pub fn render(h: &Heatmap) -> String {
    let width = LABEL_W + CELL_W * h.columns.len() as f64 + 10.0;
    let height = TOP + CELL_H * h.rows.len() as f64 + 10.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heatmap\" data-plot=\"{}\" \
         width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
         font-family=\"sans-serif\" font-size=\"11\">",
        escape(&h.id)
    );
    let _ = write!(
        svg,
        "<text x=\"4\" y=\"14\" font-weight=\"bold\">{} ↓ / {} →</text>",
        escape(&h.row_label),
        escape(&h.column_label)
    );
    for (j, name) in h.columns.iter().enumerate() {
        let x = LABEL_W + CELL_W * (j as f64 + 0.5);
        let _ = write!(
            svg,
            "<text class=\"column\" x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            TOP - 8.0,
            escape(&fit(name, CELL_W))
        );
    }
    let at = scale(h);
    for (i, row) in h.cells.iter().enumerate() {
        let y = TOP + CELL_H * i as f64;
        let _ = write!(
            svg,
            "<text class=\"row\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LABEL_W - 6.0,
            y + CELL_H / 2.0 + 4.0,
            escape(&fit(&h.rows[i], LABEL_W))
        );
        for (j, cell) in row.iter().enumerate() {
            svg += &render_cell(cell, LABEL_W + CELL_W * j as f64, y, &at);
        }
    }
    svg + "</svg>"
}

fn render_cell(cell: &HeatCell, x: f64, y: f64, at: &impl Fn(f64) -> f64) -> String {
    let (fill, ink) = match cell.value {
        Some(v) if v > 0.0 => {
            let t = at(v);
            (color(t), if t > 0.55 { "#ffffff" } else { "#000000" })
        }
        _ => ("#dddddd".to_string(), "#555555"),
    };
    let border = if cell.flagged {
        " stroke=\"#d62728\" stroke-width=\"3\""
    } else if cell.outlined {
        " stroke=\"#ff7f0e\" stroke-width=\"2\" stroke-dasharray=\"5 3\""
    } else {
        " stroke=\"#ffffff\" stroke-width=\"1\""
    };
    format!(
        "<g class=\"cell{}\"><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
         fill=\"{fill}\"{border}/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{ink}\">{}</text></g>",
        if cell.flagged { " flagged" } else { "" },
        escape(&cell.title),
        x + 1.5,
        y + 1.5,
        CELL_W - 3.0,
        CELL_H - 3.0,
        x + CELL_W / 2.0,
        y + CELL_H / 2.0 + 4.0,
        escape(&fit(&cell.text, CELL_W - 4.0))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(value: Option<f64>, flagged: bool) -> HeatCell {
        HeatCell {
            value,
            text: value.map_or("—".into(), |v| format!("{v}")),
            title: "a <b>".into(),
            flagged,
            outlined: false,
        }
    }

    #[test]
    fn a_heatmap_is_well_formed_with_one_square_per_cell_and_its_flags() {
        let h = Heatmap {
            id: "mesh-1".into(),
            row_label: "from".into(),
            column_label: "to".into(),
            rows: vec!["a".into(), "b".into()],
            columns: vec!["a".into(), "b".into()],
            cells: vec![
                vec![cell(None, false), cell(Some(10.0), false)],
                vec![cell(Some(1.0), true), cell(None, false)],
            ],
            higher_is_better: true,
        };
        let svg = render(&h);
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let cells: Vec<_> = doc
            .descendants()
            .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("cell")))
            .collect();
        assert_eq!(cells.len(), 4);
        let flagged: Vec<_> = cells
            .iter()
            .filter(|n| n.attribute("class") == Some("cell flagged"))
            .collect();
        assert_eq!(flagged.len(), 1);
        // The best value is darkest, the worst lightest.
        assert!(svg.contains(&format!("fill=\"{}\"", color(1.0))), "{svg}");
        assert!(svg.contains(&format!("fill=\"{}\"", color(0.0))), "{svg}");
        assert!(svg.contains("a &lt;b&gt;"));
    }

    #[test]
    fn for_a_time_the_smallest_value_is_best() {
        let h = Heatmap {
            id: "t".into(),
            row_label: String::new(),
            column_label: String::new(),
            rows: vec!["a".into()],
            columns: vec!["x".into(), "y".into()],
            cells: vec![vec![cell(Some(10.0), false), cell(Some(100.0), false)]],
            higher_is_better: false,
        };
        let at = scale(&h);
        assert_eq!((at(10.0), at(100.0)), (1.0, 0.0));
        assert_eq!(fit("abcdefghij", 6.2 * 5.0), "abcd…");
    }
}
