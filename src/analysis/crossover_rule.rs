//! What a crossover family is judged with, beyond its cells: the equivalence margin and how
//! many looks the sweep took at each cell. A sweep with adaptive rounds looks at a cell after
//! its pilot rounds and, if the cell's group was still undecided, once more after the rounds
//! its pilot fixed; each look is held at α / looks (Bonferroni over the looks), so whichever
//! look a cell is reported at, the chance of a false claim or a missed interval stays within α.
//! The sweep records both in its folder's `rounds.json`; the report reads them back from there.
use crate::stats::verdict::{ALPHA, DEFAULT_MARGIN};

/// The file a sweep records its rounds per group in (and the looks and margin of the rule).
pub const ROUNDS_JSON: &str = "rounds.json";

/// Looks a sweep with adaptive rounds takes at a cell: after the pilot, after its own rounds.
pub const ADAPTIVE_LOOKS: usize = 2;

/// Each mechanism the report asks a crossover question about and the path it is set against:
/// the one-copy and zero-copy sends against two-copy `copy`, then the same call without
/// io_uring, io_uring without zero copy, and user-memory send for the pipe and page-cache
/// paths.
pub const PAIRS: [(&str, &str); 7] = [
    ("gather", "copy"),
    ("zerocopy", "copy"),
    ("uring", "send"),
    ("uring-gather", "gather"),
    ("uring-zc", "uring"),
    ("splice", "send"),
    ("sendfile", "send"),
];

/// The margin and looks a crossover family is judged with.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// Equivalence margin, a share (0.05 = ±5 %).
    pub margin: f64,
    /// Looks the sweep took at each cell (1: no adaptive rounds).
    pub looks: usize,
    /// The pilot's rounds: after adaptive rounds a cell's interval is Stein's, the mean of all
    /// its rounds with the spread of these first ones on their degrees of freedom.
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
    /// The pilot whose spread a cell's interval takes (Stein), when the sweep took adaptive
    /// rounds; `None` for a sweep that looked once (its interval is the plain paired one).
    pub fn stein_pilot(&self) -> Option<usize> {
        (self.looks > 1 && self.pilot_rounds >= 2).then_some(self.pilot_rounds)
    }

    /// The error rate each look is held to.
    pub fn alpha(&self) -> f64 {
        ALPHA / self.looks.max(1) as f64
    }

    /// The settings a `rounds.json` document records; `None` when it records neither.
    pub fn from_rounds(document: &serde_json::Value) -> Option<Settings> {
        let looks = document.get("looks")?.as_u64()? as usize;
        let margin = document.get("margin")?.as_f64()?;
        let pilot_rounds = document
            .get("pilot_rounds")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0) as usize;
        (looks >= 1 && margin > 0.0 && margin < 1.0).then_some(Settings {
            margin,
            looks,
            pilot_rounds,
        })
    }

    /// "each cell looked at twice (after the pilot, after its adaptive rounds), each look at
    /// α = 0.025": what a family's basis adds when the sweep had adaptive rounds.
    pub fn looks_text(&self) -> Option<String> {
        (self.looks > 1).then(|| {
            format!(
                "each cell looked at up to {} times (after the pilot rounds, and after the rounds the pilot's spread fixed for a group still undecided), each look at α = {} (Bonferroni over the looks), so the reported look keeps its error within {ALPHA}; after adaptive rounds a cell's interval is Stein's two-stage interval (the mean of all its rounds, the spread of its {} pilot rounds on their {} degrees of freedom), which keeps its level however the round count followed the pilot's spread",
                self.looks,
                self.alpha(),
                self.pilot_rounds,
                self.pilot_rounds.saturating_sub(1)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_come_back_from_rounds_json_and_halve_alpha_for_two_looks() {
        let doc = serde_json::json!({"looks": 2, "margin": 0.03, "groups": []});
        let s = Settings::from_rounds(&doc).unwrap();
        assert_eq!((s.looks, s.margin, s.alpha()), (2, 0.03, 0.025));
        assert!(s.looks_text().unwrap().contains("α = 0.025"));
        assert_eq!(Settings::default().alpha(), ALPHA);
        assert_eq!(Settings::default().looks_text(), None);
        assert_eq!(
            Settings::from_rounds(&serde_json::json!({"looks": 0, "margin": 0.05})),
            None
        );
    }
}
