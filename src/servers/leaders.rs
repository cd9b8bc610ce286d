//! The leaders answer of one client count as data: every pair of the models ranked (one Holm
//! family), the models left unranked because the load generator limited them, and how it is
//! told: a one-line summary ("uring leads at 1000 clients; 3 of 15 pairs decided, Holm over
//! 15"), which the answer's text keeps, and under it in report.md and report.html a compact
//! table of the pairs (model × model: ratio, interval, state) instead of one sentence listing
//! every pair.
use crate::analysis::pairs_table::{self, PairRow};
use crate::analysis::separated::{leadership, Leadership, Rounds, Words};
use crate::analysis::Answer;
use crate::report::plot::escape;
use crate::report::study::Table;
use crate::stats::verdict::{percent, Verdict};

/// One figure's leaders at one client count.
#[derive(Debug, Clone)]
pub struct Leaders {
    pub clients: u64,
    /// "most requests/s", "least server CPU per request".
    pub figure: &'static str,
    /// The models ranked: each name and its per-round figures.
    pub ranked: Vec<(String, Rounds)>,
    /// Every pair of the ranked models judged (two or more ranked).
    pub leadership: Option<Leadership>,
    /// Models not ranked: limited by the load generator at some visit, with the busiest such
    /// visit's client CPU per thread.
    pub limited: Vec<(String, f64)>,
    pub words: Words,
    pub margin: f64,
}

/// "at 1000 clients threaded was limited by the load generator (client CPU 97 % per thread)":
/// why a point is left out of a ranking.
pub fn limited_words(model: &str, clients: u64, share: f64) -> String {
    format!(
        "at {clients} clients {model} was limited by the load generator (client CPU {:.0} % per thread)",
        share * 100.0
    )
}

impl Leaders {
    /// Judges every pair of `ranked` (higher better when `most`); `limited` are named, unranked.
    pub fn judge(
        (clients, figure): (u64, &'static str),
        ranked: Vec<(String, Rounds)>,
        limited: Vec<(String, f64)>,
        most: bool,
        margin: f64,
    ) -> Leaders {
        Leaders {
            clients,
            figure,
            leadership: (ranked.len() >= 2).then(|| leadership(&ranked, most, margin)),
            ranked,
            limited,
            words: if most { Words::RATE } else { Words::COST },
            margin,
        }
    }

    fn names(&self, indices: &[usize]) -> String {
        let names: Vec<&str> = indices.iter().map(|&i| self.ranked[i].0.as_str()).collect();
        names.join(", ")
    }

    /// "uring leads at 1000 clients; 3 of 15 pairs decided, Holm over 15, margin ±5 %; at
    /// 1000 clients threaded was limited by the load generator (…): not ranked".
    pub fn summary(&self) -> String {
        let c = self.clients;
        let mut out = match (&self.leadership, self.ranked.as_slice()) {
            (Some(l), _) => match l.leader {
                Some(i) => format!("{} {} at {c} clients", self.ranked[i].0, self.words.leads),
                None => format!(
                    "no single {} at {c} clients: {} not separated",
                    self.words.noun,
                    self.names(&l.top)
                ),
            },
            (None, [(only, _)]) => match self.limited.is_empty() {
                true => format!("{only} at {c} clients (the only model measured)"),
                false => format!("{only} at {c} clients (the only model ranked)"),
            },
            (None, _) => format!("no model ranked at {c} clients"),
        };
        if let Some(l) = &self.leadership {
            let decided = l.family.tests - l.family.count(Verdict::Undecided);
            out += &format!(
                "; {decided} of {} pairs decided, {} over {}, margin ±{}",
                l.family.tests,
                l.family.correction.name(),
                l.family.tests,
                percent(self.margin)
            );
            if !l.unpaired.is_empty() {
                out += &format!("; not compared: {}", l.unpaired.join("; "));
            }
        }
        for (model, share) in &self.limited {
            out += &format!("; {}: not ranked", limited_words(model, c, *share));
        }
        out
    }

    /// Each pair as a row's cells: (model, against, ratio, interval, state), read from the
    /// leader's side where it is the second of the pair (`analysis::pairs_table`, as ipc's
    /// fastest answer; an interval over fewer than 3 rounds is not printed as numbers).
    pub fn rows(&self) -> Vec<Vec<String>> {
        let Some(l) = &self.leadership else {
            return Vec::new();
        };
        let names: Vec<String> = self.ranked.iter().map(|(name, _)| name.clone()).collect();
        pairs_table::rows(&names, l, self.words, self.margin)
            .iter()
            .map(PairRow::cells)
            .collect()
    }

    /// The pairs as a table, where two or more models were ranked.
    pub fn table(&self) -> Option<Table> {
        let rows = self.rows();
        (!rows.is_empty()).then(|| Table {
            header: vec!["model", "against", "ratio", "interval", "state"],
            marked: vec![false; rows.len()],
            rows,
        })
    }
}

/// The leaders answer in Markdown: its question and finding, per client count and figure the
/// summary and the table of its pairs, then what it rests on (the shape of every answer).
pub fn answer_markdown(a: &Answer, leaders: &[Leaders]) -> String {
    let mut out = format!("### {}\n\n{}\n\n", a.question, a.finding);
    for l in leaders {
        out += &format!("**{}**: {}.\n\n", capitalized(l.figure), l.summary());
        if let Some(t) = l.table() {
            out += &t.markdown();
            out += "\n";
        }
    }
    out + &format!("_Rests on: {}._\n\n", a.rests_on)
}

/// The leaders answer in HTML, as `answer_markdown`.
pub fn answer_html(a: &Answer, leaders: &[Leaders]) -> String {
    let mut out = format!(
        "<div class=\"answer\"><h3>{}</h3><p class=\"finding\">{}</p>",
        escape(a.question),
        escape(&a.finding)
    );
    for l in leaders {
        out += &format!(
            "<p><strong>{}</strong>: {}.</p>",
            escape(&capitalized(l.figure)),
            escape(&l.summary())
        );
        if let Some(t) = l.table() {
            out += &t.html();
        }
    }
    out + &format!(
        "<p class=\"rests-on\">Rests on: {}.</p></div>\n",
        escape(&a.rests_on)
    )
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
#[path = "leaders_tests.rs"]
mod tests;
