//! What a crossover family is judged with, beyond its cells: the equivalence margin and how
//! many looks the sweep took at each cell. A sweep with adaptive rounds looks at a cell after
//! its pilot rounds and, if the cell's group was still undecided, once more after its share of
//! the rounds the budget left. The two looks split α (Bonferroni over the looks): 0.01 at the
//! pilot, whose few rounds settle only large differences, and 0.04 at the end, where the
//! equivalence answers are made; whichever look a cell is reported at, the chance of a false
//! claim or a missed interval stays within α.
//! The sweep records both in its folder's `rounds.json`; the report reads them back from there.
use crate::mechanism::MechanismKind;
use crate::stats::verdict::{ALPHA, DEFAULT_MARGIN};

/// The file a sweep records its rounds per group in (and the looks and margin of the rule).
pub const ROUNDS_JSON: &str = "rounds.json";

/// What the report reads back of `rounds.json`: the rule's looks and margin and the rounds of
/// its pilot (the groups' own rounds are for people and `bench/`).
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub struct RoundsHead {
    #[serde(default)]
    pub looks: Option<u64>,
    #[serde(default)]
    pub margin: Option<f64>,
    #[serde(default)]
    pub pilot_rounds: Option<u64>,
}

/// Looks a sweep with adaptive rounds takes at a cell: after the pilot, after its own rounds.
pub const ADAPTIVE_LOOKS: usize = 2;

/// The share of α the pilot's look spends; the last look gets the rest. In simulation (the
/// default sweep, 5 % per visit) a 0.01 / 0.04 split read a true 1.00 equivalent at the
/// default budget in 86 % of reports where 0.025 / 0.025 did in 77 %.
pub const PILOT_ALPHA: f64 = 0.01;

/// Each mechanism the report asks a crossover question about and the path it is set against,
/// as their descriptors say (`MechanismDescriptor::crossover`), in the mechanisms' order: the
/// one-copy and zero-copy sends against two-copy `copy`, then the same call without io_uring,
/// io_uring without zero copy, and user-memory send for the pipe and page-cache paths. A
/// question's place in this list is its number in `rounds.json`.
pub fn pairs() -> Vec<(&'static str, &'static str)> {
    MechanismKind::ALL
        .iter()
        .filter_map(|m| Some((m.name(), m.crossover.as_ref()?.against.name())))
        .collect()
}

/// The margin and looks a crossover family is judged with.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// Equivalence margin, a share (0.05 = ±5 %).
    pub margin: f64,
    /// Looks the sweep took at each cell (1: no adaptive rounds).
    pub looks: usize,
    /// The pilot's rounds (the first look).
    #[serde(default)]
    pub pilot_rounds: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            margin: DEFAULT_MARGIN,
            looks: 1,
            pilot_rounds: 0,
        }
    }
}

impl Settings {
    /// Each look's α: the pilot's and the last one's, or the whole α at one look.
    pub fn alpha_looks(&self) -> Vec<f64> {
        if self.looks > 1 {
            vec![PILOT_ALPHA, self.alpha()]
        } else {
            vec![self.alpha()]
        }
    }

    /// The error rate the last look (the report's) is held to.
    pub fn alpha(&self) -> f64 {
        if self.looks > 1 {
            ALPHA - PILOT_ALPHA
        } else {
            ALPHA
        }
    }

    /// The settings a `rounds.json` document records; `None` when it records neither.
    pub fn from_rounds(document: &RoundsHead) -> Option<Settings> {
        let looks = document.looks? as usize;
        let margin = document.margin?;
        let pilot_rounds = document.pilot_rounds.unwrap_or(0) as usize;
        (looks >= 1 && margin > 0.0 && margin < 1.0).then_some(Settings {
            margin,
            looks,
            pilot_rounds,
        })
    }

    /// Whether a cell over `pairs` rounds rests on the pilot's rounds alone, so that it is
    /// reported at the pilot's look and judged at its α: with adaptive rounds recorded, a cell
    /// of no more rounds than the pilot's got none after it (its group was decided at the
    /// pilot, or the budget left it none; a cell that lost pilot rounds to failed visits is
    /// judged at the smaller α too, which only makes it stricter).
    pub fn pilot_only(&self, pairs: Option<usize>) -> bool {
        self.looks > 1 && self.pilot_rounds > 0 && pairs.is_some_and(|n| n <= self.pilot_rounds)
    }

    /// What a family's basis adds when the sweep had adaptive rounds: its looks and their α.
    pub fn looks_text(&self) -> Option<String> {
        (self.looks > 1).then(|| {
            format!(
                "each cell looked at up to {} times: after its {} pilot rounds at α = {PILOT_ALPHA}, and, for a group still undecided, after its equal share of the rounds the budget left (a total fixed before those rounds, without its own figures) at α = {} (Bonferroni over the looks), so the reported look keeps its error within {ALPHA}; a cell whose rounds are the pilot's alone (its group decided there) is reported at the pilot's look, judged at α = {PILOT_ALPHA}; a cell's interval is the paired one over all its rounds, widened by the rounds' autocorrelation",
                self.looks,
                self.pilot_rounds,
                self.alpha(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_come_back_from_rounds_json_and_split_alpha_for_two_looks() {
        let doc = r#"{"looks": 2, "margin": 0.03, "groups": []}"#;
        let s = Settings::from_rounds(&serde_json::from_str(doc).unwrap()).unwrap();
        assert_eq!((s.looks, s.margin, s.alpha()), (2, 0.03, 0.04));
        let text = s.looks_text().unwrap();
        assert!(
            text.contains("at α = 0.01,") && text.contains("at α = 0.04"),
            "{text}"
        );
        assert_eq!(Settings::default().alpha(), ALPHA);
        assert_eq!(Settings::default().looks_text(), None);
        assert_eq!(
            Settings::from_rounds(&RoundsHead {
                looks: Some(0),
                margin: Some(0.05),
                pilot_rounds: None
            }),
            None
        );
    }

    /// `rounds.json` numbers its questions by their place here: the seven a sweep has always
    /// asked keep theirs (a new mechanism's question comes after them).
    #[test]
    fn the_questions_are_numbered_as_rounds_json_has_always_numbered_them() {
        assert_eq!(
            pairs()[..7],
            [
                ("gather", "copy"),
                ("zerocopy", "copy"),
                ("uring", "send"),
                ("uring-gather", "gather"),
                ("uring-zc", "uring"),
                ("splice", "send"),
                ("sendfile", "send"),
            ]
        );
    }
}
