//! A family of pairwise comparisons as a compact table instead of one sentence per family: ipc's
//! fastest transport at a size compares every pair of transports, servers' leaders every pair
//! of models, and a sentence listing 15 pairs runs to 2,000 characters. A `PairsTable` is a
//! one-line summary (who leads, the family's control) above one row per pair: the two named,
//! the ratio, its interval (or why none is shown, `stats::interval`) and the state. The report
//! layer renders it (`report::study::answers_markdown_with`, `answers_html_with`) under the
//! answer whose question it names, in place of that answer's detail lines.
use super::separated::{flipped, Leadership, Words};
use crate::stats::verdict::{interval_of, percent, Judged, Verdict};

/// One answer's family of pairs, for report.md and report.html.
#[derive(Debug, Clone, PartialEq)]
pub struct PairsTable {
    /// The answer the table belongs under.
    pub question: &'static str,
    /// "64 B: shm is fastest; 3.20 µs per round trip (3 tests, Holm …)".
    pub summary: String,
    /// What the two named columns hold ("transport", "against").
    pub names: [&'static str; 2],
    /// What the ratio is ("round trips/s, first over second").
    pub ratio: &'static str,
    pub rows: Vec<PairRow>,
}

/// One pair: the first, the second, the ratio, its interval and the state, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairRow {
    pub first: String,
    pub second: String,
    pub ratio: String,
    pub interval: String,
    pub state: String,
}

impl PairsTable {
    /// The column headings, in the order of `cells`.
    pub fn header(&self) -> Vec<&'static str> {
        vec![
            self.names[0],
            self.names[1],
            self.ratio,
            "interval",
            "state",
        ]
    }

    /// Each row's cells, in the order of `header`.
    pub fn cells(&self) -> Vec<Vec<String>> {
        self.rows.iter().map(PairRow::cells).collect()
    }
}

impl PairRow {
    /// The first, the second, the ratio, the interval and the state, as a table's cells.
    pub fn cells(&self) -> Vec<String> {
        vec![
            self.first.clone(),
            self.second.clone(),
            self.ratio.clone(),
            self.interval.clone(),
            self.state.clone(),
        ]
    }
}

/// One row per pair of `l`, read from the leader's side where the leader is the second (as
/// `separated::describe` tells them); `names` are the candidates' names in `l`'s order.
pub fn rows(names: &[String], l: &Leadership, w: Words, margin: f64) -> Vec<PairRow> {
    l.pairs
        .iter()
        .zip(&l.family.judged)
        .map(|(&(a, b), j)| {
            let (a, b, j) = match l.leader == Some(b) {
                true => (b, a, flipped(j)),
                false => (a, b, *j),
            };
            row(&names[a], &names[b], &j, w, margin)
        })
        .collect()
}

fn row(first: &str, second: &str, j: &Judged, w: Words, margin: f64) -> PairRow {
    let state = match j.state {
        Verdict::Beats => w.better.to_string(),
        Verdict::Slower => w.worse.to_string(),
        Verdict::Equivalent => format!("equivalent within ±{}", percent(margin)),
        Verdict::Undecided => "undecided".to_string(),
    };
    PairRow {
        first: first.to_string(),
        second: second.to_string(),
        ratio: format!("{:.2}×", j.ratio),
        interval: interval_of(j),
        state,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::separated::{leadership, Rounds};

    fn rounds(values: &[f64]) -> Rounds {
        values.iter().copied().enumerate().collect()
    }

    #[test]
    fn a_leader_reads_first_in_every_row_and_two_rounds_show_no_bounds() {
        let c = vec![
            ("select".to_string(), rounds(&[10.0, 10.2, 9.9, 10.1, 10.0])),
            ("epoll".to_string(), rounds(&[20.0, 20.1, 19.8, 20.2, 20.0])),
            ("uring".to_string(), rounds(&[10.0, 10.1, 9.8, 10.0, 10.2])),
        ];
        let l = leadership(&c, true, 0.05);
        let names: Vec<String> = c.iter().map(|c| c.0.clone()).collect();
        let r = rows(&names, &l, Words::RATE, 0.05);
        assert_eq!(r.len(), 3);
        let led: Vec<&PairRow> = r.iter().filter(|r| r.first == "epoll").collect();
        assert_eq!(led.len(), 2, "{r:?}");
        assert!(led.iter().all(|r| r.state == "beats"), "{r:?}");
        assert!(led[0].interval.contains(" CI "), "{r:?}");

        let two = vec![
            ("select".to_string(), rounds(&[10.0, 10.2])),
            ("epoll".to_string(), rounds(&[20.0, 20.1])),
        ];
        let l = leadership(&two, true, 0.05);
        let r = rows(&["select".into(), "epoll".into()], &l, Words::RATE, 0.05);
        assert_eq!(
            r,
            vec![PairRow {
                first: "select".into(),
                second: "epoll".into(),
                ratio: "0.50×".into(),
                interval: "too few rounds for an interval (2 pairs)".into(),
                state: "undecided".into(),
            }]
        );
    }
}
