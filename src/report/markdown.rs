//! report.md: the answers, the environment, how it was measured and a compact table, for
//! pasting into an issue or a paper (GitHub-flavoured Markdown tables).
use super::summary::{self, Rows};
use crate::analysis::questions::Questions;
use crate::analysis::Dataset;
use std::fmt::Write;

/// Escapes what would break a table cell or start markup.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn rows_list(out: &mut String, rows: &Rows) {
    for (label, value) in rows {
        let _ = writeln!(out, "- **{}**: {}", cell(label), cell(value));
    }
}

/// The whole document; `source` names the results file; `questions` are the study's.
pub fn document(data: &Dataset, source: &str, questions: &Questions) -> String {
    let mut out = format!(
        "# {}\n\n{}\n\n",
        questions.title,
        summary::overview(data, source)
    );
    out.push_str(&super::study::answers_markdown_with(
        &(questions.answers)(data),
        &(questions.tables)(data),
    ));
    out.push_str(&super::figure_files::markdown_section(
        &super::figure_files::report_figures(data),
    ));
    out.push_str(&super::copies::markdown_section(data));
    out.push_str(&super::cdf::markdown_section(data));
    out.push_str(&super::tcp_info::markdown_section(data));
    out.push_str(&super::under_load::markdown_section(data));
    out.push_str("## Environment\n\n");
    rows_list(&mut out, &summary::environment(data));
    out.push_str("\n## Machine limits (bytepath probe)\n\n");
    rows_list(&mut out, &super::limits::machine_limits(data));
    out.push_str("\n## How this was measured\n\n");
    rows_list(&mut out, &summary::method(data, questions));
    out.push_str("\n## Points\n\n");
    let (header, rows) = super::chosen_percentiles::with_columns(data, summary::table(data));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(&mut out, &header, rows);
    if let Some((header, rows)) = super::sink::points_table(data) {
        let _ = writeln!(out, "\n## The sink\n\n{}\n", super::sink::POINTS_INTRO);
        table(&mut out, &header, rows);
    }
    out
}

fn table(out: &mut String, header: &[&str], rows: Vec<Vec<String>>) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{demo_sweep, jsonl};

    #[test]
    fn the_document_holds_every_answer_and_a_row_per_point() {
        let data = parse(&jsonl(&demo_sweep(false)), "r").unwrap();
        let md = document(
            &data,
            "sweep/results.jsonl",
            &crate::sweep::answers::QUESTIONS,
        );
        assert_eq!(md.matches("\n### ").count(), 7);
        assert_eq!(md.matches("_Rests on: ").count(), 7);
        let table_rows = md.lines().filter(|l| l.starts_with("| ")).count();
        assert_eq!(
            table_rows,
            data.points.len() + 1,
            "header plus a row per point"
        );
        assert!(md.contains("| copy/stream/4096/1 | completed | "));
    }

    #[test]
    fn pipes_in_cells_are_escaped() {
        assert_eq!(cell("a|b"), "a\\|b");
    }
}
