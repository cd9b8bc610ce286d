//! Verdicts that hold: every comparison is one of three states. *Beats* (or *slower*) when the
//! ratio's interval excludes 1; *equivalent within ±M* when two one-sided tests place the ratio
//! inside [1 − M, 1 + M] (Schuirmann 1987: the 1 − 2α interval lies inside the margin);
//! *undecided* otherwise, never "not different". The tests a question makes together are one
//! family, controlled by Holm's step-down (family-wise error, Holm 1979) or Benjamini–Hochberg
//! (false-discovery rate, 1995), and each interval is shown at the level its test used: Holm's
//! step-down level α/(m − i + 1) for the i-th smallest p, the level at which the step-down
//! stopped for the rest; for BH the FCR-adjusted level α·R/m (Benjamini & Yekutieli 2005).
//! Step-down levels make each interval agree with its own test; they are not simultaneous (all
//! of a family's intervals cover together less often than the smallest level says), and every
//! answer that prints them says "step-down level".
//! No estimate decides anything from a zero or non-finite standard error (a spread of exactly
//! nothing is a measurement that did not vary, not certainty) or from fewer than
//! `interval::MIN_PAIRS` pairs, and none is "equivalent" from fewer than
//! `interval::MIN_EQUIVALENCE_PAIRS`: every user of `judge*` gets these rules here.
use super::interval;
pub use super::interval::percent;
use super::student::{t_cdf, t_quantile, two_sided_p};
use super::visits::{RatioInterval, RoundCorrelation};

/// The error rate every family is held to.
pub const ALPHA: f64 = 0.05;
/// The default equivalence margin (a share: 0.05 = ±5 %).
pub const DEFAULT_MARGIN: f64 = 0.05;

/// One comparison's state. The ratio is "A over B" with higher better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The (adjusted) interval lies wholly above 1.
    Beats,
    /// The (adjusted) interval lies wholly below 1.
    Slower,
    /// Two one-sided tests place the ratio within ±margin of 1.
    Equivalent,
    /// Neither: the evidence does not decide.
    Undecided,
}

/// How a family of tests is controlled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Correction {
    /// Holm's step-down: the chance of any false claim in the family stays ≤ α.
    #[serde(rename = "holm")]
    Holm,
    /// Benjamini–Hochberg: the expected share of false claims among claims stays ≤ α.
    #[serde(rename = "benjamini-hochberg")]
    BenjaminiHochberg,
}

impl Correction {
    pub fn name(self) -> &'static str {
        match self {
            Correction::Holm => "Holm",
            Correction::BenjaminiHochberg => "Benjamini–Hochberg",
        }
    }
}

/// A log-ratio estimate with its standard error and degrees of freedom: what a test needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogEstimate {
    pub log_ratio: f64,
    pub se: f64,
    pub df: f64,
    /// The pairs (rounds, visits, repetitions) the estimate rests on; `None` where it does not
    /// rest on pairs (a block estimate, a robust centre), so the too-few rule does not apply.
    pub pairs: Option<usize>,
}

impl LogEstimate {
    /// Recovers the estimate behind a 95 % `RatioInterval` (paired or Welch), whose half-width
    /// on the log scale is t(0.975, ⌊df⌋) · se.
    pub fn from_interval(r: &RatioInterval) -> LogEstimate {
        let df = r.df.floor().max(1.0);
        let half = 0.5 * (r.high.ln() - r.low.ln());
        LogEstimate {
            log_ratio: r.ratio.ln(),
            se: half / super::t_975(df as usize),
            df,
            pairs: Some(r.n),
        }
    }

    /// Whether the estimate carries a spread a test can use: a finite ratio with a finite
    /// standard error above zero on finite degrees of freedom.
    pub fn has_spread(&self) -> bool {
        self.se.is_finite() && self.se > 0.0 && self.log_ratio.is_finite() && self.df.is_finite()
    }

    /// The estimate from rounds whose log-ratios follow each other with lag-1 autocorrelation
    /// `rho` (bias-corrected, in [0, 0.95]; `RoundCorrelation::rho`): the variance of a mean of
    /// n AR(1) values is σ²/n · (1 + ρ)/(1 − ρ), so the standard error grows by that factor's
    /// root; the degrees of freedom become those of the spread's own estimate, whose variance
    /// grows by (1 + ρ²)/(1 − ρ²) (Bartlett 1946), so df = (n − 1)(1 − ρ²)/(1 + ρ²). The pairs
    /// stay the pairs: the too-few rules count rounds made, not their worth.
    pub fn widened(self, rho: f64) -> LogEstimate {
        if rho <= 0.0 || !rho.is_finite() {
            return self;
        }
        let rho = rho.min(0.95);
        LogEstimate {
            se: self.se * ((1.0 + rho) / (1.0 - rho)).sqrt(),
            df: (self.df * (1.0 - rho * rho) / (1.0 + rho * rho)).max(1.0),
            ..self
        }
    }

    /// The ratio's interval at `confidence` (0.95, 0.90, …).
    pub fn interval(&self, confidence: f64) -> (f64, f64) {
        let half = t_quantile(0.5 + confidence / 2.0, self.df) * self.se;
        ((self.log_ratio - half).exp(), (self.log_ratio + half).exp())
    }

    /// Two-sided p-value of "the ratio is 1".
    /// 1 (no evidence) where the standard error is zero or not finite.
    pub fn p_difference(&self) -> f64 {
        if !self.has_spread() {
            return 1.0;
        }
        two_sided_p(self.log_ratio / self.se, self.df)
    }

    /// TOST p-value of "the ratio lies outside [1 − margin, 1 + margin]": the larger of the
    /// two one-sided p-values; 1 where the standard error is zero or not finite.
    pub fn p_equivalence(&self, margin: f64) -> f64 {
        let (low, high) = ((1.0 - margin).ln(), (1.0 + margin).ln());
        if !self.has_spread() {
            return 1.0;
        }
        let above_low = 1.0 - t_cdf((self.log_ratio - low) / self.se, self.df);
        let below_high = t_cdf((self.log_ratio - high) / self.se, self.df);
        above_low.max(below_high)
    }
}

/// One test's outcome within its family, with the intervals its two tests used.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Judged {
    pub state: Verdict,
    pub ratio: f64,
    /// The difference test's interval, at `confidence`.
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
    /// The equivalence test's interval, at `equivalence_confidence` (1 − 2α per test).
    pub equivalence_low: f64,
    pub equivalence_high: f64,
    pub equivalence_confidence: f64,
    pub p_value: f64,
    pub p_adjusted: f64,
    /// The pairs the interval rests on; absent in records written before intervals from too
    /// few pairs were withheld (those show their interval as they did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
}

/// A family's verdicts and how they were controlled: what an answer states beside them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Family {
    pub tests: usize,
    /// The control of the difference claims (beats / slower).
    pub correction: Correction,
    /// The control of the equivalence claims.
    pub equivalence_correction: Correction,
    pub margin: f64,
    pub alpha: f64,
    pub judged: Vec<Judged>,
    /// The rounds' lag-1 autocorrelation the estimates were widened by, where the family's
    /// owner estimated one (a sweep's crossover families); absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho: Option<RoundCorrelation>,
}

impl Family {
    /// "4 tests, Holm, margin ±5 %": the line an answer states its control with.
    pub fn control(&self) -> String {
        let equivalence = match self.equivalence_correction == self.correction {
            true => String::new(),
            false => format!(" ({} for equivalence)", self.equivalence_correction.name()),
        };
        let rho = self
            .rho
            .map(|r| format!(", {}", r.text()))
            .unwrap_or_default();
        format!(
            "{} test{}, {} at α = {}{equivalence}, equivalence margin ±{}{rho}",
            self.tests,
            if self.tests == 1 { "" } else { "s" },
            self.correction.name(),
            self.alpha,
            percent(self.margin)
        )
    }

    /// How many of the family ended in `state`.
    pub fn count(&self, state: Verdict) -> usize {
        self.judged.iter().filter(|j| j.state == state).count()
    }
}

/// Judges a family of estimates together under `correction` with equivalence `margin`.
pub fn judge(estimates: &[LogEstimate], correction: Correction, margin: f64) -> Family {
    judge_with(estimates, correction, correction, margin)
}

/// As `judge`, with the equivalence claims controlled by a correction of their own: a question
/// may need every "beats" held family-wise (Holm) while its map of where two mechanisms are
/// alike reads as a share of cells, for which a false-discovery rate (BH) is the fitting bound.
pub fn judge_with(
    estimates: &[LogEstimate],
    correction: Correction,
    equivalence_correction: Correction,
    margin: f64,
) -> Family {
    judge_at(
        estimates,
        (correction, equivalence_correction),
        margin,
        ALPHA,
    )
}

/// As `judge_with`, with the family held at `alpha` instead of `ALPHA`: a sweep that may look
/// at a cell twice (after its pilot rounds and after its adaptive ones) splits `ALPHA`
/// between the looks, so that whichever look it reports, the error stays within `ALPHA`.
pub fn judge_at(
    estimates: &[LogEstimate],
    (correction, equivalence_correction): (Correction, Correction),
    margin: f64,
    alpha: f64,
) -> Family {
    // An estimate from too few pairs or without a spread never rejects, so it neither decides
    // nor spends a step of the family's step-down; one from too few pairs for equivalence
    // spends none of the equivalence family's.
    let weak = |e: &LogEstimate| interval::too_few(e.pairs) || !e.has_spread();
    let weak_eq = |e: &LogEstimate| weak(e) || interval::too_few_for_equivalence(e.pairs);
    let p_of = |skip: &dyn Fn(&LogEstimate) -> bool, test: &dyn Fn(&LogEstimate) -> f64| {
        let p = |e: &LogEstimate| if skip(e) { 1.0 } else { test(e) };
        estimates.iter().map(p).collect::<Vec<f64>>()
    };
    let p = p_of(&weak, &|e| e.p_difference());
    let p_eq = p_of(&weak_eq, &|e| e.p_equivalence(margin));
    let eq_levels = levels(&p_eq, equivalence_correction, alpha);
    let (adjusted, levels) = (adjust(&p, correction), levels(&p, correction, alpha));
    let judged = estimates
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (low, high) = e.interval(1.0 - levels[i]);
            let eq_confidence = 1.0 - 2.0 * eq_levels[i];
            let (eq_low, eq_high) = e.interval(eq_confidence);
            let open = (!weak(e), !weak_eq(e));
            Judged {
                state: state_of(open, (low, high), (eq_low, eq_high), margin),
                ratio: e.log_ratio.exp(),
                low,
                high,
                confidence: 1.0 - levels[i],
                equivalence_low: eq_low,
                equivalence_high: eq_high,
                equivalence_confidence: eq_confidence,
                p_value: p[i],
                p_adjusted: adjusted[i],
                pairs: e.pairs,
            }
        })
        .collect();
    Family {
        tests: estimates.len(),
        correction,
        equivalence_correction,
        margin,
        alpha,
        judged,
        rho: None,
    }
}

/// The state of one comparison from its difference interval and its equivalence interval;
/// `open`: whether the estimate may decide at all (pairs and a spread) and whether it may be
/// equivalent (enough pairs for that). Undecided where it may not, whatever its bounds.
fn state_of(
    (decides, may_be_equivalent): (bool, bool),
    (low, high): (f64, f64),
    (eq_low, eq_high): (f64, f64),
    margin: f64,
) -> Verdict {
    if !decides {
        Verdict::Undecided
    } else if low > 1.0 {
        Verdict::Beats
    } else if high < 1.0 {
        Verdict::Slower
    } else if may_be_equivalent && eq_low > 1.0 - margin && eq_high < 1.0 + margin {
        Verdict::Equivalent
    } else {
        Verdict::Undecided
    }
}

/// One comparison judged alone (a family of one: no correction changes it).
pub fn judge_one(r: &RatioInterval, margin: f64) -> Judged {
    judge(&[LogEstimate::from_interval(r)], Correction::Holm, margin).judged[0]
}

/// Adjusted p-values: Holm's max_{j≤i} (m − j + 1) p_(j), or BH's min_{j≥i} m p_(j) / j.
pub fn adjust(p: &[f64], correction: Correction) -> Vec<f64> {
    let m = p.len();
    let order = ascending(p);
    let mut out = vec![0.0; m];
    match correction {
        Correction::Holm => {
            let mut running: f64 = 0.0;
            for (rank, &i) in order.iter().enumerate() {
                running = running.max(((m - rank) as f64 * p[i]).min(1.0));
                out[i] = running;
            }
        }
        Correction::BenjaminiHochberg => {
            let mut running: f64 = 1.0;
            for (rank, &i) in order.iter().enumerate().rev() {
                running = running.min(m as f64 * p[i] / (rank + 1) as f64);
                out[i] = running.min(1.0);
            }
        }
    }
    out
}

/// The two-sided level each test's interval is shown at, so that the interval excludes 1
/// exactly when the controlled test rejects.
pub fn levels(p: &[f64], correction: Correction, alpha: f64) -> Vec<f64> {
    let m = p.len();
    let adjusted = adjust(p, correction);
    let rejected = adjusted.iter().filter(|a| **a <= alpha).count();
    match correction {
        Correction::Holm => {
            let order = ascending(p);
            let mut out = vec![alpha / (m - rejected).max(1) as f64; m];
            for (rank, &i) in order.iter().enumerate().take(rejected) {
                out[i] = alpha / (m - rank) as f64;
            }
            out
        }
        Correction::BenjaminiHochberg => {
            vec![alpha * rejected.max(1) as f64 / m.max(1) as f64; m]
        }
    }
}

fn ascending(p: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    order
}

/// "beats: 1.40× (95 % CI 1.30 to 1.51)", "equivalent within ±5 %: 1.01× (90 % CI 0.98 to
/// 1.03)", "undecided: 1.03× (95 % CI 0.97 to 1.10)": the state with the interval its test used;
/// "undecided: 1.13× (too few rounds for an interval (2 pairs))" below `interval::MIN_PAIRS`.
pub fn describe(j: &Judged, margin: f64, higher: &str, lower: &str) -> String {
    let (word, low, high, confidence) = match j.state {
        Verdict::Beats => (higher.to_string(), j.low, j.high, j.confidence),
        Verdict::Slower => (lower.to_string(), j.low, j.high, j.confidence),
        Verdict::Equivalent => (
            format!("equivalent within ±{}", percent(margin)),
            j.equivalence_low,
            j.equivalence_high,
            j.equivalence_confidence,
        ),
        Verdict::Undecided => ("undecided".to_string(), j.low, j.high, j.confidence),
    };
    format!(
        "{word}: {}",
        interval::ratio(j.ratio, (low, high), confidence, j.pairs)
    )
}

/// The interval `describe` shows for `j`, without the state: "95 % CI 1.30 to 1.51" or the
/// too-few text, for tables that give the state a column of its own.
pub fn interval_of(j: &Judged) -> String {
    let (low, high, confidence) = match j.state {
        Verdict::Equivalent => (
            j.equivalence_low,
            j.equivalence_high,
            j.equivalence_confidence,
        ),
        _ => (j.low, j.high, j.confidence),
    };
    interval::ci(confidence, j.pairs, || {
        (format!("{low:.2}"), format!("{high:.2}"))
    })
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
