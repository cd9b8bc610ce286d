//! `compare --json`: the comparison as one JSON document on stdout, for a CI gate or a script
//! that should not parse the table: every point (old and new summaries, new/old uncorrected
//! and corrected, verdict, why not), the family's control, the between-sweep block (τ used,
//! its source, Cochran's Q and its df, the DerSimonian–Laird τ, the warning), the canary's
//! machine change and the interference counts, each with the line the text prints for it.
use super::between::Between;
use super::machine::{self, MachineChange};
use super::{describe, interference, missing_from, PointChange};
use crate::record::view::RunView;
use crate::stats::verdict::Family;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The two folders' points by key.
pub struct Sides<'a> {
    pub old: &'a BTreeMap<String, RunView>,
    pub new: &'a BTreeMap<String, RunView>,
}

type Busy = (Option<(usize, usize)>, Option<(usize, usize)>);

/// The whole document.
pub fn document(
    changes: &[PointChange],
    sides: Sides,
    (family, between): (&Family, &Between),
    (change, busy): (&Result<MachineChange, String>, Busy),
) -> Value {
    let points: Vec<Value> = changes.iter().map(point).collect();
    json!({
        "points": points,
        "only_in_old": missing_from(sides.old, sides.new),
        "only_in_new": missing_from(sides.new, sides.old),
        "family": {
            "tests": family.tests,
            "correction": family.correction,
            "equivalence_correction": family.equivalence_correction,
            "alpha": family.alpha,
            "margin": family.margin,
            "control": family.control(),
        },
        "between": between,
        "between_text": between.summary(),
        "machine": machine_block(change),
        "interference": {
            "old": busy.0.map(counts),
            "new": busy.1.map(counts),
            "line": interference::line(busy.0, busy.1),
            "note": interference::note(busy.0, busy.1),
        },
    })
}

fn point(c: &PointChange) -> Value {
    json!({
        "point": c.key,
        "old": c.old,
        "new": c.new,
        "ratio": c.ratio,
        "corrected": c.judged,
        "verdict": describe(c.verdict),
        "why_not": c.why_not,
    })
}

fn counts((disturbed, judged): (usize, usize)) -> Value {
    json!({"disturbed": disturbed, "headline_visits": judged})
}

/// The canary's comparison as far as `machine` exposes it: its line, each component's new/old
/// cost (uncorrected interval, and its Holm test where it decides), and the change it names.
fn machine_block(change: &Result<MachineChange, String>) -> Value {
    let line = machine::line(change);
    match change {
        Ok(m) => json!({
            "line": line,
            "tests": m.tests,
            "changed_by": m.beyond_margin(),
            "components": m.components.iter().map(|c| json!({
                "component": c.component.name(),
                "ratio": c.interval,
                "corrected": c.judged,
            })).collect::<Vec<_>>(),
        }),
        Err(why) => json!({"line": line, "not_compared": why}),
    }
}
