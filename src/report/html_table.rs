//! One HTML table of text cells, every cell escaped: the report sections that list rows (the
//! sink, TCP_INFO, latency under load) write their tables through it.
use super::plot::escape;
use std::fmt::Write;

/// `<table class="CLASS">` with `header` and one row per item of `rows`.
pub fn cells<R, C>(class: &str, header: &[&str], rows: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = C>,
    C: AsRef<str>,
{
    let mut out = format!("<table class=\"{class}\"><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell.as_ref()));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_cell_is_escaped_and_in_its_row() {
        let html = super::cells("t", &["a<b", "c"], [vec!["1 & 2", "3"], vec!["x", "y"]]);
        assert_eq!(
            html,
            "<table class=\"t\"><tr><th>a&lt;b</th><th>c</th></tr><tr><td>1 &amp; 2</td>\
             <td>3</td></tr><tr><td>x</td><td>y</td></tr></table>"
        );
    }
}
