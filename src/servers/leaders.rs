//! The leaders answer of one client count as data: every pair of the models ranked (one Holm
//! family), the models left unranked because the load generator limited them, and how it is
//! told: a one-line summary ("uring leads at 1000 clients; 3 of 15 pairs decided, Holm over
//! 15"), which the answer's text keeps, and under it in report.md and report.html a compact
//! table of the pairs (model × model: ratio, interval, state, `analysis::pairs_table`) instead
//! of one sentence listing every pair.
use crate::analysis::pairs_table::{self, PairsTable};
use crate::analysis::separated::{leadership, Leadership, Rounds, Words};
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

    /// The summary ("Most requests/s: uring leads at 1000 clients; …") above a row per pair
    /// (model, against, ratio, interval, state), read from the leader's side where it is the
    /// second of the pair: the report renders it under the answer to `question` as every pairs
    /// table (`report::study::answers_markdown_with`), ipc's fastest answer's too.
    pub fn pairs_table(&self, question: &'static str) -> PairsTable {
        let rows = match &self.leadership {
            Some(l) => {
                let names: Vec<String> = self.ranked.iter().map(|(n, _)| n.clone()).collect();
                pairs_table::rows(&names, l, self.words, self.margin)
            }
            None => Vec::new(),
        };
        PairsTable {
            question,
            summary: format!("{}: {}.", capitalized(self.figure), self.summary()),
            names: ["model", "against"],
            ratio: "ratio",
            rows,
        }
    }
}

#[cfg(test)]
impl Leaders {
    /// Each pair's cells, as the table shows them.
    pub fn rows(&self) -> Vec<Vec<String>> {
        self.pairs_table("").cells()
    }
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
