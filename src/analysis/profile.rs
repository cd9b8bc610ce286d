//! Where the CPU goes, from the points' `--profile` blocks (each side sampled in a visit of its
//! own): per mechanism, the largest category of each side and how the share of the copy
//! categories (user→kernel, kernel→user, in user space) changes with the message size, each
//! share with its 95 % Wilson interval, and the change from the smallest to the largest size
//! tested on batch means over time blocks (`profile_change`). Given only where the results hold
//! profiles.
use super::profile_change::{Changes, SideWindows};
use super::{mechanism_rank, size_label, Answer, Dataset};
use crate::measure::profile::block::wilson;
use crate::measure::profile::{Profile, ProfileBlock};

/// One side of a profiled point: its name and block, or why it has none.
#[derive(Debug, Clone)]
pub struct SideProfile {
    pub side: String,
    pub profile: Result<ProfileBlock, String>,
}

/// A point whose record carries profile blocks.
#[derive(Debug, Clone)]
pub struct Profiled {
    /// What the report groups by: the mechanism, with pattern and flows when they vary.
    pub series: String,
    pub mechanism: String,
    /// What orders the points of a series (message or file size, clients).
    pub size: f64,
    /// How the point is named in the text and under its bars ("64 KiB", "100 clients").
    pub at: String,
    pub sides: Vec<SideProfile>,
}

/// Every point of `data` with a profile, in mechanism, series and size order.
pub fn profiled(data: &Dataset) -> Vec<Profiled> {
    let mut out: Vec<Profiled> = data
        .points
        .iter()
        .filter_map(|p| {
            let record = data.records.get(p.line.checked_sub(1)?)?;
            let sides: Vec<SideProfile> = record
                .sides
                .as_ref()?
                .iter()
                .filter_map(|s| {
                    Some(SideProfile {
                        side: s.side.clone().unwrap_or_else(|| "?".into()),
                        profile: match s.profile.clone()? {
                            Profile::Measured(b) => Ok(*b),
                            Profile::Unavailable { reason } => Err(reason),
                        },
                    })
                })
                .collect();
            (!sides.is_empty()).then(|| Profiled {
                series: format!("{} ({}, {} flow(s))", p.mechanism, p.pattern, p.threads),
                mechanism: p.mechanism.clone(),
                size: p.size,
                at: size_label(p.size),
                sides,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        (mechanism_rank(&a.mechanism), &a.series)
            .cmp(&(mechanism_rank(&b.mechanism), &b.series))
            .then(a.size.total_cmp(&b.size))
    });
    out
}

/// The copy categories' share of a block, with its 95 % interval.
pub fn copy_share(b: &ProfileBlock) -> (f64, f64, f64) {
    let copies: u64 = b
        .categories
        .iter()
        .filter(|c| c.name.is_copy())
        .map(|c| c.samples)
        .sum();
    wilson(copies, b.samples)
}

/// The largest category of a block, and its share.
fn largest(b: &ProfileBlock) -> (&'static str, f64) {
    b.categories
        .iter()
        .max_by_key(|c| c.samples)
        .map_or(("none", 0.0), |c| (c.name.name(), c.share))
}

const QUESTION: &str =
    "Where does each mechanism's CPU go, and how does the copy share change with size?";

/// The answer, or `None` when no point was profiled.
pub fn answer(data: &Dataset) -> Option<Answer> {
    answer_for(&profiled(data), "profile visit")
}

/// The answer over `points` (any study's, sorted by series and size); `visit` names what was
/// sampled ("profile visit", "profiled transfer").
pub fn answer_for(points: &[Profiled], visit: &str) -> Option<Answer> {
    if points.is_empty() {
        return None;
    }
    let mut series: Vec<&str> = points.iter().map(|p| p.series.as_str()).collect();
    series.dedup();
    let mut findings = Vec::new();
    let mut verdicts = Vec::new();
    let mut details = Vec::new();
    let changes = Changes::judge(side_windows(points, &series));
    for name in &series {
        let of: Vec<&Profiled> = points.iter().filter(|p| p.series == *name).collect();
        let (finding, verdict) = series_finding(name, &of, &changes);
        findings.push(finding);
        verdicts.push(verdict);
        details.extend(of.iter().flat_map(|p| point_details(p)));
    }
    let samples: u64 = points
        .iter()
        .flat_map(|p| &p.sides)
        .filter_map(|s| s.profile.as_ref().ok())
        .map(|b| b.samples)
        .sum();
    let event = points
        .iter()
        .flat_map(|p| &p.sides)
        .find_map(|s| s.profile.as_ref().ok())
        .map_or("no event".to_string(), |b| {
            format!("{} at {} Hz ({})", b.event, b.frequency_hz, b.event_reason)
        });
    Some(Answer {
        question: QUESTION,
        finding: findings.join(" "),
        details,
        rests_on: format!(
            "the {visit} of {} point(s), each side's threads sampled on their own ({event}; \
             {samples} samples in all); shares are of a side's samples with 95 % Wilson \
             intervals, which cover sampling noise only, not run-to-run variation; samples \
             taken where interrupts come back on were charged to their caller where the call \
             chain allowed; {}",
            points.len(),
            changes.method()
        ),
        verdict: Some(verdicts.join("; ")),
    })
}

/// Each series' sides at its smallest and largest profiled size, with their time blocks.
fn side_windows(points: &[Profiled], series: &[&str]) -> Vec<SideWindows> {
    let mut out = Vec::new();
    for name in series {
        let of: Vec<&Profiled> = points.iter().filter(|p| p.series == *name).collect();
        let (Some(first), Some(last)) = (of.first(), of.last()) else {
            continue;
        };
        if of.len() < 2 {
            continue;
        }
        let blocks = |p: &Profiled, i: usize| -> Vec<f64> {
            p.sides
                .get(i)
                .and_then(|s| s.profile.as_ref().ok())
                .map_or(Vec::new(), |b| b.copy_share_blocks.clone())
        };
        for i in 0..last.sides.len() {
            out.push(SideWindows {
                series: name.to_string(),
                side: i,
                from: blocks(first, i),
                to: blocks(last, i),
                from_at: first.at.clone(),
                to_at: last.at.clone(),
            });
        }
    }
    out
}

/// "copy (stream, 1 flow(s)): sender mostly protocol (33 %), …; copy share sender 10 % at
/// 256 B → 26 % at 64 KiB, …", and its verdict (the largest categories only).
fn series_finding(name: &str, of: &[&Profiled], changes: &Changes) -> (String, String) {
    let (first, last) = (of[0], of[of.len() - 1]);
    let mut largest_parts = Vec::new();
    let mut trend_parts = Vec::new();
    let mut verdict = Vec::new();
    for (i, side) in last.sides.iter().enumerate() {
        let Ok(b) = &side.profile else {
            largest_parts.push(format!("{} not profiled", side.side));
            continue;
        };
        let (cat, share) = largest(b);
        largest_parts.push(format!(
            "{} mostly {cat} ({:.0} %)",
            side.side,
            100.0 * share
        ));
        verdict.push(format!("{name} {} {cat}", side.side));
        let start = first.sides.get(i).and_then(|s| s.profile.as_ref().ok());
        if let (Some(a), true) = (start, of.len() > 1) {
            let (sa, sb) = (copy_share(a).0, copy_share(b).0);
            let (text, state) = changes.text(name, i);
            trend_parts.push(format!(
                "{} {:.0} % at {} → {:.0} % at {}: {text}",
                side.side,
                100.0 * sa,
                first.at,
                100.0 * sb,
                last.at
            ));
            verdict.push(format!("{name} {} copy share {state}", side.side));
        }
    }
    let trend = if trend_parts.is_empty() {
        format!("profiled at {} only", last.at)
    } else {
        format!("copy share {}", trend_parts.join("; "))
    };
    (
        format!(
            "{name} at {}: {}; {trend}.",
            last.at,
            largest_parts.join(", ")
        ),
        verdict.join(", "),
    )
}

/// One line per side of a point: its top categories, copy share and copies' worth.
fn point_details(p: &Profiled) -> Vec<String> {
    p.sides
        .iter()
        .map(|s| match &s.profile {
            Ok(b) => {
                let (share, low, high) = copy_share(b);
                let copies = b
                    .copies_per_byte
                    .as_ref()
                    .map_or("copies' worth not measured (no memcpy cost)".into(), |c| {
                        c.label.clone()
                    });
                format!(
                    "{} {} {}: {}; copy share {:.1} % [{:.1}, {:.1}]; {copies}; {} samples",
                    p.series,
                    p.at,
                    s.side,
                    b.top_categories(4),
                    100.0 * share,
                    100.0 * low,
                    100.0 * high,
                    b.samples
                )
            }
            Err(reason) => format!(
                "{} {} {}: profile unavailable: {reason}",
                p.series, p.at, s.side
            ),
        })
        .collect()
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
