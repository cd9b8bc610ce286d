//! A per-size list of paired ratios held as one family, as the sweep's crossover questions
//! are: an answer that lists one comparison per size (file's shares of readsend, bidir's
//! forward direction against one-way, crr against rr) makes as many claims as it lists, so
//! "beats" or "slower" is controlled family-wise by Holm's step-down and "equivalent" by
//! Benjamini–Hochberg (a map of where two figures are alike), and every interval is shown at
//! the level its test used. A comparison that has no interval (too few rounds, a figure
//! missing) keeps its reason and takes no place in the family.
use super::tested::{Cell, TestedAnswer};
use crate::stats::interval;
use crate::stats::verdict::{
    judge_with, percent, Correction, Family, Judged, LogEstimate, Verdict,
};
use crate::stats::visits::RatioInterval;

/// Why the list is controlled as it is: stated beside the family in answers.json.
pub const WHY: &str = "Holm for beats/slower (each such size is a claim a reader acts on); \
     Benjamini–Hochberg for 'equivalent' (a map of the sizes where the two are alike)";

/// The comparisons of one list, judged together.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioFamily {
    /// One per comparison, in the list's order: its outcome within the family, or why it has
    /// none.
    pub cells: Vec<Result<Judged, String>>,
    pub family: Family,
}

/// Judges every comparison that has an interval as one family at equivalence `margin`.
pub fn judge(ratios: &[Result<RatioInterval, String>], margin: f64) -> RatioFamily {
    let estimates: Vec<LogEstimate> = ratios
        .iter()
        .filter_map(|r| r.as_ref().ok().map(LogEstimate::from_interval))
        .collect();
    let family = judge_with(
        &estimates,
        Correction::Holm,
        Correction::BenjaminiHochberg,
        margin,
    );
    let mut judged = family.judged.iter();
    let cells = ratios
        .iter()
        .map(|r| match r {
            Ok(_) => Ok(*judged.next().expect("one outcome per interval")),
            Err(why) => Err(why.clone()),
        })
        .collect();
    RatioFamily { cells, family }
}

impl RatioFamily {
    /// "24 tests, Holm at α = 0.05 (Benjamini–Hochberg for equivalence), equivalence margin
    /// ±5 %", or that nothing was tested.
    pub fn control(&self) -> String {
        match self.family.tests {
            0 => "no comparison had an interval to test".into(),
            _ => format!("one family: {}", self.family.control()),
        }
    }

    /// The family's cells named by `names` (one per comparison, in order), for answers.json;
    /// `None` when nothing was tested.
    pub fn tested(&self, question: &'static str, names: &[String]) -> Option<TestedAnswer> {
        if self.family.tests == 0 {
            return None;
        }
        let cells = names
            .iter()
            .zip(&self.cells)
            .filter_map(|(name, j)| j.as_ref().ok().map(|j| Cell::new(name.clone(), j)))
            .collect();
        Some(TestedAnswer::new(question, &self.family, WHY, cells))
    }
}

/// How the rests-on text states a list's control: what "each comparison alone" said before.
pub fn basis(margin: f64) -> String {
    let m = percent(margin);
    format!(
        "the list is one family: Holm's step-down for beats/slower (each interval shown at the \
         level its step used) and Benjamini–Hochberg for \"equivalent within ±{m}\" (two \
         one-sided tests placing the ratio inside [{:.2}, {:.2}] at the FCR-adjusted level), \
         both at α = {}; \"undecided\" otherwise",
        1.0 - margin,
        1.0 + margin,
        crate::stats::verdict::ALPHA
    )
}

/// "0.35× (99.8 % CI 0.30 to 0.40)" where the family decided a difference, "equivalent within
/// ±5 % (1.01×, 90 % CI 0.98 to 1.03)" where it placed the ratio within the margin, else
/// "undecided (1.03×, 99.8 % CI 0.97 to 1.10)": each at the level its test used.
pub fn text(j: &Judged, margin: f64) -> String {
    let bounds = |low: f64, high: f64| move || (format!("{low:.2}"), format!("{high:.2}"));
    match j.state {
        Verdict::Beats | Verdict::Slower => {
            interval::ratio(j.ratio, (j.low, j.high), j.confidence, j.pairs)
        }
        Verdict::Equivalent => format!(
            "equivalent within ±{} ({:.2}×, {})",
            percent(margin),
            j.ratio,
            interval::ci(
                j.equivalence_confidence,
                j.pairs,
                bounds(j.equivalence_low, j.equivalence_high)
            )
        ),
        Verdict::Undecided => format!(
            "undecided ({:.2}×, {})",
            j.ratio,
            interval::ci(j.confidence, j.pairs, bounds(j.low, j.high))
        ),
    }
}

#[cfg(test)]
#[path = "ratio_family_tests.rs"]
mod tests;
