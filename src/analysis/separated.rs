//! Peaks and leaders without the winner's curse. Picking the highest estimate and then testing
//! the others against it tests a pair chosen because it looked far apart, so a "leader" or a
//! "peak" is claimed among equals far more often than the tests' 5 % (the winner's curse).
//! Here the tests are fixed before the estimates are seen and held together by Holm:
//! a leader is the candidate that beats every other one in all pairwise paired comparisons;
//! a peak rests on the steps between adjacent sizes (rises, falls, or not separated). Where
//! the data do not separate them the answer is "no single leader" or "no single peak", so
//! among equals a claim is made in at most α of studies (`tests` below simulate it).
use super::paired::ratio_of;
use crate::stats::verdict::{self, judge, Correction, Family, Judged, LogEstimate, Verdict};

/// One candidate's per-round figures: `(round, value)`.
pub type Rounds = Vec<(usize, f64)>;

/// The outcome of all pairwise comparisons of a set of candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct Leadership {
    /// The candidate that beats every other (Holm over all pairs), if one does.
    pub leader: Option<usize>,
    /// Candidates no other is shown to beat: the leader alone, or the ones not separated.
    pub top: Vec<usize>,
    /// The pairs tested, (better-if-beats, other), in the family's order.
    pub pairs: Vec<(usize, usize)>,
    pub family: Family,
    /// Pairs that could not be compared, with why.
    pub unpaired: Vec<String>,
}

/// Compares every pair of `candidates` (names and rounds) by paired ratio; `higher` says
/// whether a higher figure is better (requests/s) or a lower one (CPU per request).
pub fn leadership(candidates: &[(String, Rounds)], higher: bool, margin: f64) -> Leadership {
    let (mut pairs, mut estimates, mut unpaired) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..candidates.len() {
        for j in i + 1..candidates.len() {
            let ((a, ra), (b, rb)) = (&candidates[i], &candidates[j]);
            let what = format!("{a} and {b}");
            // The ratio reads "i is better" above 1 either way.
            let r = match higher {
                true => ratio_of(ra, rb, &what),
                false => ratio_of(rb, ra, &what),
            };
            match r {
                Ok(r) => {
                    pairs.push((i, j));
                    estimates.push(LogEstimate::from_interval(&r));
                }
                Err(why) => unpaired.push(why),
            }
        }
    }
    let family = judge(&estimates, Correction::Holm, margin);
    let n = candidates.len();
    let mut beats = vec![vec![false; n]; n];
    for (k, &(i, j)) in pairs.iter().enumerate() {
        match family.judged[k].state {
            Verdict::Beats => beats[i][j] = true,
            Verdict::Slower => beats[j][i] = true,
            _ => {}
        }
    }
    let leader = (0..n).find(|&i| n > 1 && (0..n).all(|j| j == i || beats[i][j]));
    let top = match leader {
        Some(i) => vec![i],
        None => (0..n).filter(|&i| (0..n).all(|j| !beats[j][i])).collect(),
    };
    Leadership {
        leader,
        top,
        pairs,
        family,
        unpaired,
    }
}

/// A pair's outcome read from its other side: the ratio and its intervals inverted.
pub fn flipped(j: &Judged) -> Judged {
    let state = match j.state {
        Verdict::Beats => Verdict::Slower,
        Verdict::Slower => Verdict::Beats,
        s => s,
    };
    Judged {
        state,
        ratio: 1.0 / j.ratio,
        low: 1.0 / j.high,
        high: 1.0 / j.low,
        equivalence_low: 1.0 / j.equivalence_high,
        equivalence_high: 1.0 / j.equivalence_low,
        ..*j
    }
}

/// The words a leadership is told in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Words {
    pub better: &'static str,
    pub worse: &'static str,
    /// "leads", "is fastest".
    pub leads: &'static str,
    /// "leader", "fastest": in "no single …".
    pub noun: &'static str,
}

impl Words {
    /// Higher is better (requests/s).
    pub const RATE: Words = Words {
        better: "beats",
        worse: "is slower",
        leads: "leads",
        noun: "leader",
    };
    /// Lower is better (CPU per request).
    pub const COST: Words = Words {
        better: "costs less",
        worse: "costs more",
        leads: "leads",
        noun: "leader",
    };
}

/// "A leads: A against B beats: 1.40× (…); …", or "no single leader: A, B not separated (A
/// against B undecided: …)": every pair the claim rests on, read from the leader's side.
pub fn describe(candidates: &[(String, Rounds)], l: &Leadership, w: Words, margin: f64) -> String {
    // Each pair's ratio reads "the first is better"; turned to the leader's side where the
    // leader is the second.
    let pair = |&(a, b): &(usize, usize), j: &Judged| {
        let (a, b, j) = match l.leader == Some(b) {
            true => (b, a, flipped(j)),
            false => (a, b, *j),
        };
        let (a, b) = (&candidates[a].0, &candidates[b].0);
        format!(
            "{a} against {b} {}",
            verdict::describe(&j, margin, w.better, w.worse)
        )
    };
    let pairs = |keep: &dyn Fn(usize, usize) -> bool| -> Vec<String> {
        l.pairs
            .iter()
            .zip(&l.family.judged)
            .filter(|((a, b), _)| keep(*a, *b))
            .map(|(p, j)| pair(p, j))
            .collect()
    };
    match l.leader {
        Some(i) => format!(
            "{} {}: {}",
            candidates[i].0,
            w.leads,
            pairs(&|a, b| a == i || b == i).join("; ")
        ),
        None => {
            let top: Vec<&str> = l.top.iter().map(|&i| candidates[i].0.as_str()).collect();
            format!(
                "no single {}: {} not separated ({})",
                w.noun,
                top.join(", "),
                pairs(&|_, _| true).join("; ")
            )
        }
    }
}

/// How one step between adjacent sizes came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Rises,
    Falls,
    /// Equivalent within the margin, undecided, or not comparable: not separated.
    NotSeparated,
}

/// Where a series peaks, from its adjacent steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peak {
    /// One size above both neighbours (a neighbour that exists); `falls`: a fall after it is
    /// shown.
    Single { at: usize, falls: bool },
    /// The highest stretch holds several sizes the steps do not separate.
    Plateau { from: usize, to: usize, falls: bool },
    /// More than one stretch is above its neighbours.
    Several(Vec<usize>),
    /// No step is shown at all.
    NotSeparated,
}

/// The adjacent steps of a series and the peak they support.
#[derive(Debug, Clone, PartialEq)]
pub struct Steps {
    pub steps: Vec<Step>,
    /// Per step, its judged index in `family` (none where the step could not be paired).
    pub judged: Vec<Option<usize>>,
    pub family: Family,
    pub unpaired: Vec<String>,
    pub peak: Peak,
}

/// Tests each step between adjacent sizes (ascending; the later size over the earlier, by
/// per-round paired ratio) as one Holm family, and reads the peak from the steps.
pub fn steps(series: &[(String, Rounds)], margin: f64) -> Steps {
    let (mut estimates, mut judged, mut unpaired) = (Vec::new(), Vec::new(), Vec::new());
    for w in series.windows(2) {
        let what = format!("{} and {}", w[1].0, w[0].0);
        match ratio_of(&w[1].1, &w[0].1, &what) {
            Ok(r) => {
                judged.push(Some(estimates.len()));
                estimates.push(LogEstimate::from_interval(&r));
            }
            Err(why) => {
                judged.push(None);
                unpaired.push(why);
            }
        }
    }
    let family = judge(&estimates, Correction::Holm, margin);
    let steps: Vec<Step> = judged
        .iter()
        .map(|k| match k.map(|k| family.judged[k].state) {
            Some(Verdict::Beats) => Step::Rises,
            Some(Verdict::Slower) => Step::Falls,
            _ => Step::NotSeparated,
        })
        .collect();
    let peak = peak(&steps);
    Steps {
        steps,
        judged,
        family,
        unpaired,
        peak,
    }
}

/// The peak the steps support: stretches of sizes the steps do not separate, and among them
/// those entered by a rise (or first) and left by a fall (or last).
pub fn peak(steps: &[Step]) -> Peak {
    if steps.iter().all(|s| *s == Step::NotSeparated) {
        return Peak::NotSeparated;
    }
    let mut stretches: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (i, s) in steps.iter().enumerate() {
        if *s != Step::NotSeparated {
            stretches.push((start, i));
            start = i + 1;
        }
    }
    stretches.push((start, steps.len()));
    let highs: Vec<(usize, usize)> = stretches
        .into_iter()
        .filter(|&(from, to)| {
            let entered = from == 0 || steps[from - 1] == Step::Rises;
            let left = to == steps.len() || steps[to] == Step::Falls;
            entered && left
        })
        .collect();
    match highs.as_slice() {
        [(from, to)] => {
            let falls = *to < steps.len();
            match from == to {
                true => Peak::Single { at: *from, falls },
                false => Peak::Plateau {
                    from: *from,
                    to: *to,
                    falls,
                },
            }
        }
        several => Peak::Several(several.iter().map(|h| h.0).collect()),
    }
}

#[cfg(test)]
#[path = "separated_tests.rs"]
mod tests;
