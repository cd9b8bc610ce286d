//! The leaders answer's summary, table cells and rendering, from synthetic rounds.
use super::*;
use crate::analysis::Answer;
use crate::report::study::{answers_html_with, answers_markdown_with};

fn rounds(values: &[f64]) -> Rounds {
    values.iter().copied().enumerate().collect()
}

fn three_models() -> Leaders {
    let ranked = vec![
        ("epoll".to_string(), rounds(&[100.0, 104.0, 98.0])),
        ("uring".to_string(), rounds(&[290.0, 312.0, 303.8])),
        ("select".to_string(), rounds(&[50.0, 51.0, 49.5])),
    ];
    let limited = vec![("threaded".to_string(), 0.97)];
    Leaders::judge((1000, "most requests/s"), ranked, limited, true, 0.05)
}

#[test]
fn the_summary_names_the_leader_the_pairs_decided_and_who_was_not_ranked() {
    assert_eq!(
        three_models().summary(),
        "uring leads at 1000 clients; 3 of 3 pairs decided, Holm over 3, margin ±5 %; at 1000 \
         clients threaded was limited by the load generator (client CPU 97 % per thread): not ranked"
    );
    let alone = Leaders::judge(
        (15, "most requests/s"),
        vec![("epoll".into(), rounds(&[1.0, 2.0]))],
        vec![("threaded".into(), 1.0)],
        true,
        0.05,
    );
    assert!(alone.leadership.is_none() && alone.rows().is_empty());
    assert!(
        alone.summary().starts_with(
            "epoll at 15 clients (the only model ranked); at 15 clients threaded was limited"
        ),
        "{}",
        alone.summary()
    );
}

#[test]
fn each_row_is_a_pair_read_from_the_leaders_side() {
    let rows = three_models().rows();
    let heads: Vec<[&str; 2]> = rows
        .iter()
        .map(|r| [r[0].as_str(), r[1].as_str()])
        .collect();
    assert_eq!(
        heads,
        [["uring", "epoll"], ["epoll", "select"], ["uring", "select"]],
        "epoll against uring turned to uring's side"
    );
    assert_eq!(
        rows[0][2], "3.00×",
        "the geometric mean of 2.9, 3.0 and 3.1"
    );
    assert_eq!(rows[0][4], "beats");
    assert!(
        rows[0][3].contains(" CI 2.") && rows[0][3].contains(" to 3."),
        "{:?}",
        rows[0]
    );
    assert!(rows.iter().all(|r| r[4] == "beats"), "{rows:?}");
}

#[test]
fn an_interval_from_fewer_than_three_pairs_is_not_printed_as_numbers() {
    let l = Leaders::judge(
        (5, "least server CPU per request"),
        vec![
            ("epoll".into(), rounds(&[100.0, 104.0])),
            ("uring".into(), rounds(&[90.0, 91.0])),
        ],
        Vec::new(),
        false,
        0.05,
    );
    let rows = l.rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][3], "too few rounds for an interval (2 pairs)");
}

#[test]
fn the_answer_renders_a_summary_and_a_table_per_figure() {
    let a = Answer {
        question: "Which leads?",
        finding: "Per client count:".into(),
        details: vec!["the short form".into()],
        rests_on: "paired rounds".into(),
        verdict: None,
    };
    let tables = [three_models().pairs_table("Which leads?")];
    let md = answers_markdown_with(std::slice::from_ref(&a), &tables);
    assert!(md.contains("### Which leads?\n\nPer client count:\n\nMost requests/s: uring leads at 1000 clients; 3 of 3"), "{md}");
    assert!(
        md.contains("| model | against | ratio | interval | state |\n"),
        "{md}"
    );
    assert!(md.contains("| uring | epoll | 3.00× |"), "{md}");
    assert!(md.ends_with("_Rests on: paired rounds._\n\n"), "{md}");
    assert!(
        !md.contains("the short form"),
        "the table replaces the text"
    );
    let html = answers_html_with(std::slice::from_ref(&a), &tables);
    assert!(
        html.contains("<p class=\"pairs\">Most requests/s: uring leads"),
        "{html}"
    );
    assert!(
        html.contains("<td>uring</td><td>epoll</td><td>3.00×</td>"),
        "{html}"
    );
    assert!(html.ends_with("</p></div>\n"), "{html}");
}
