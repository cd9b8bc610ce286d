//! What the reports of the single-study commands (`bytepath file`, `bytepath servers`) share:
//! the names of their two files, one self-contained page skeleton, one table in three formats
//! (aligned text, GitHub-flavoured Markdown, HTML), and reading a results folder back for
//! `bytepath report DIR`; and the Answers section every study's report opens with (the sweep's,
//! ipc's, file's and servers'), rendered the same way for each. Kept in one place so the
//! studies' reports look and parse alike.
use super::folder::{MARKER, RESULTS_JSONL};
use super::plot::escape;
use crate::analysis::pairs_table::PairsTable;
use crate::analysis::Answer;
use crate::error::Error;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::fmt::Write;
use std::path::Path;

pub const MARKDOWN: &str = "report.md";
pub const HTML: &str = "report.html";

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:auto;padding:0 1em}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
tr.not-completed td{color:#a00}.note{color:#555}.answer{margin-bottom:1em}\
.answer p{margin:0.2em 0}.rests-on{color:#666;font-size:0.9em}.answer ul{margin:0.2em 0}";

/// The Answers section in HTML: a heading, then per answer its question, finding, the figures
/// it rests on and the basis.
pub fn answers_html(answers: &[Answer]) -> String {
    answers_html_with(answers, &[])
}

/// As `answers_html`, with each answer that has pairs tables (`analysis::pairs_table`) showing
/// them, each under its one-line summary, in place of its detail lines.
pub fn answers_html_with(answers: &[Answer], tables: &[PairsTable]) -> String {
    let mut out = String::from("<h2 id=\"answers\">Answers</h2>\n");
    for a in answers {
        let _ = write!(
            out,
            "<div class=\"answer\"><h3>{}</h3><p class=\"finding\">{}</p>",
            escape(a.question),
            escape(&a.finding)
        );
        let own: Vec<&PairsTable> = tables.iter().filter(|t| t.question == a.question).collect();
        for t in &own {
            let _ = write!(out, "<p class=\"pairs\">{}</p>", escape(&t.summary));
            if !t.rows.is_empty() {
                out += &pairs_table(t).html();
            }
        }
        if own.is_empty() && !a.details.is_empty() {
            out.push_str("<ul>");
            for d in &a.details {
                let _ = write!(out, "<li>{}</li>", escape(d));
            }
            out.push_str("</ul>");
        }
        let _ = writeln!(
            out,
            "<p class=\"rests-on\">Rests on: {}.</p></div>",
            escape(&a.rests_on)
        );
    }
    out
}

/// The Answers section in Markdown.
pub fn answers_markdown(answers: &[Answer]) -> String {
    answers_markdown_with(answers, &[])
}

/// As `answers_markdown`, with pairs tables in place of the detail lines of their answers.
pub fn answers_markdown_with(answers: &[Answer], tables: &[PairsTable]) -> String {
    let mut out = String::from("## Answers\n\n");
    for a in answers {
        let _ = writeln!(out, "### {}\n\n{}\n", a.question, a.finding);
        let own: Vec<&PairsTable> = tables.iter().filter(|t| t.question == a.question).collect();
        for t in &own {
            let _ = writeln!(out, "{}\n", t.summary);
            if !t.rows.is_empty() {
                let _ = writeln!(out, "{}", pairs_table(t).markdown());
            }
        }
        if own.is_empty() {
            for d in &a.details {
                let _ = writeln!(out, "- {d}");
            }
            if !a.details.is_empty() {
                out.push('\n');
            }
        }
        let _ = writeln!(out, "_Rests on: {}._\n", a.rests_on);
    }
    out
}

/// A pairs table in the one table kit every study's report uses.
pub fn pairs_table(t: &PairsTable) -> Table {
    let rows = t.cells();
    Table {
        header: t.header().into_iter().map(String::from).collect(),
        marked: vec![false; rows.len()],
        rows,
    }
}

/// A table: a header and rows of the same width.
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Per row, whether it is marked as not measured (HTML only).
    pub marked: Vec<bool>,
}

impl Table {
    /// Columns padded to their widest cell, right-aligned, for stdout.
    pub fn text(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([self.header[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: Vec<&str>| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                let pad = widths[i] - c.chars().count();
                let _ = write!(s, "{}{c}  ", " ".repeat(pad));
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(self.header.iter().map(String::as_str).collect());
        for r in &self.rows {
            out += &line(r.iter().map(String::as_str).collect());
        }
        out
    }

    pub fn markdown(&self) -> String {
        // A pipe or a newline inside a cell would end the cell or the row.
        let cell = |t: &str| t.replace('|', "\\|").replace('\n', " ");
        let mut out = format!("| {} |\n|", self.header.join(" | "));
        out += &"---|".repeat(self.header.len());
        out += "\n";
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out
    }

    pub fn html(&self) -> String {
        let mut out = String::from("<table>\n<tr>");
        for h in &self.header {
            let _ = write!(out, "<th>{}</th>", escape(h));
        }
        out += "</tr>\n";
        for (i, r) in self.rows.iter().enumerate() {
            let marked = self.marked.get(i).copied().unwrap_or(false);
            out += if marked {
                "<tr class=\"not-completed\">"
            } else {
                "<tr>"
            };
            for c in r {
                let _ = write!(out, "<td>{}</td>", escape(c));
            }
            out += "</tr>\n";
        }
        out + "</table>\n"
    }
}

/// A whole page around `body` (already HTML): inline CSS, no scripts, fonts or network, and
/// well-formed XHTML so tests can parse it as XML.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head>\
         <meta charset=\"utf-8\"/><title>{}</title><style>{STYLE}</style></head><body>\n\
         <h1>{}</h1>\n{body}</body></html>\n",
        escape(title),
        escape(title)
    )
}

/// Writes report.md and report.html into the results folder, and the files of its `figures`
/// (and of the canary figure) into its figures/, first, so the pages never link a file that
/// is not there yet; a figure file an earlier report left that this one did not write goes.
/// Both pages end with the machine's section (canaries, disturbed visits).
pub fn write(
    dir: &Path,
    markdown: &str,
    html: &str,
    mut figures: Vec<super::figure_files::FigureFile>,
) -> Result<(), Error> {
    let (markdown, html, machine) = super::canary::with_machine(dir, markdown, html);
    figures.extend(
        machine.map(|f| super::figure_files::FigureFile::of(&super::figure_files::stem(&f), &f)),
    );
    super::figure_files::write_files(dir, &figures)?;
    for (name, text) in [(MARKDOWN, &markdown), (HTML, &html)] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| Error::File { path, source })?;
    }
    Ok(())
}

fn read(dir: &Path, name: &str) -> Result<String, Error> {
    let path = dir.join(name);
    std::fs::read_to_string(&path).map_err(|source| Error::File { path, source })
}

fn unreadable(dir: &Path, what: String) -> Error {
    Error::Failed(format!("{}: {what}", dir.display()))
}

/// The folder's marker (sweep.json).
pub fn marker(dir: &Path) -> Result<serde_json::Value, Error> {
    serde_json::from_str(&read(dir, MARKER)?)
        .map_err(|e| unreadable(dir, format!("the marker is not JSON ({e})")))
}

/// What every study's marker holds alike: the kind of study, and its settings (`spec`) in
/// the study's own type.
#[derive(serde::Deserialize)]
struct Marker<S> {
    #[serde(default)]
    kind: Option<String>,
    spec: S,
}

/// The folder's marker's `spec`, read as the study's type `S`: an unreadable marker is the
/// outer error (as `marker` gives it), a spec that does not read as `S` the inner one.
pub fn marker_spec<S: DeserializeOwned>(dir: &Path) -> Result<Result<S, serde_json::Error>, Error> {
    let marker = marker(dir)?;
    Ok(Marker::<S>::deserialize(&marker).map(|m| m.spec))
}

/// The kind a results folder's marker names, if it has a readable one.
pub fn kind(dir: &Path) -> Option<String> {
    let marker = marker(dir).ok()?;
    Marker::<serde::de::IgnoredAny>::deserialize(&marker)
        .ok()?
        .kind
}

/// Every record in results.jsonl, in the order written.
pub fn records<T: DeserializeOwned>(dir: &Path) -> Result<Vec<T>, Error> {
    let mut out = Vec::new();
    for (i, line) in read(dir, RESULTS_JSONL)?.lines().enumerate() {
        match serde_json::from_str::<T>(line) {
            Ok(t) => out.push(t),
            // A last line cut short by a crash is what incremental writing allows for.
            Err(_) if line.trim().is_empty() => {}
            Err(e) => {
                // A record that is JSON but not a `T`: name the field that does not read.
                let why = serde_json::from_str::<serde_json::Value>(line)
                    .ok()
                    .and_then(|v| crate::record::read_as::<T>(&v).err())
                    .unwrap_or_else(|| e.to_string());
                return Err(unreadable(
                    dir,
                    format!("results.jsonl line {}: {why}", i + 1),
                ));
            }
        }
    }
    Ok(out)
}

/// A report page parsed as XML (every page is XHTML with a doctype): the tests' check that
/// it is well formed, and their way into its elements.
#[cfg(test)]
pub(crate) fn parse_xhtml(page: &str) -> roxmltree::Document<'_> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(page, options).expect("well-formed XHTML")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table {
            header: vec!["model".into(), "req/s".into()],
            rows: vec![
                vec!["epoll".into(), "123456".into()],
                vec!["a|b".into(), "<1>".into()],
            ],
            marked: vec![false, true],
        }
    }

    #[test]
    fn text_columns_are_aligned_to_the_widest_cell() {
        let text = table().text();
        let widths: Vec<usize> = text.lines().map(|l| l.chars().count()).collect();
        assert_eq!(widths, vec![13, 13, 13], "{text}"); // "epoll" + 2 + "123456"
    }

    #[test]
    fn cells_are_escaped_for_markdown_and_html() {
        let t = table();
        assert!(t.markdown().contains("| a\\|b | <1> |"), "{}", t.markdown());
        let page = page("t & u", &t.html());
        let doc = parse_xhtml(&page);
        let marked = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("not-completed"))
            .count();
        assert_eq!(marked, 1);
        assert!(page.contains("&lt;1&gt;") && page.contains("t &amp; u"));
    }
}
