//! Counter rows with nothing to show. A row whose every cell is n/a for one reason says only
//! that reason, once per cell: without a PMU the run table would print "n/a (no PMU)" in nine
//! rows. The run table and the probe fold such rows into one line per reason that names the
//! counters and says why; a row with a value in any cell, or with cells n/a for different
//! reasons, stays a row.
use std::fmt;

/// The reason `counters::unavailable_reason` gives an event that needs the PMU this machine
/// lacks.
pub const NO_PMU: &str = "no PMU";

/// The rows of one reason, folded into one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmeasured<'a> {
    /// The reason every cell of these rows gives.
    pub reason: &'a str,
    /// The rows' names, in the order they came.
    pub names: Vec<&'a str>,
}

/// `hardware counters (cycles, instructions): not measured: this machine exposes no PMU`.
impl fmt::Display for Unmeasured<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names.join(", ");
        match self.reason {
            NO_PMU => write!(
                f,
                "hardware counters ({names}): not measured: this machine exposes no PMU"
            ),
            // "not counted: --counters none" says it already.
            reason if reason.starts_with("not ") => write!(f, "perf counters ({names}): {reason}"),
            reason => write!(f, "perf counters ({names}): not measured: {reason}"),
        }
    }
}

/// Rows split into those shown as rows and those folded by reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded<'a> {
    /// Indexes of the rows that stay rows, in their order.
    pub kept: Vec<usize>,
    /// One line per reason, in the order of each reason's first row.
    pub unmeasured: Vec<Unmeasured<'a>>,
}

/// Folds `rows`, each a name and its cells: `Some(reason)` for a cell that is n/a for that
/// reason, `None` for a cell with a value. A row folds when it has cells and every one is
/// n/a for the same reason.
pub fn fold<'a>(rows: &[(&'a str, Vec<Option<&'a str>>)]) -> Folded<'a> {
    let mut folded = Folded {
        kept: Vec::new(),
        unmeasured: Vec::new(),
    };
    for (i, (name, cells)) in rows.iter().enumerate() {
        let Some(reason) = one_reason(cells) else {
            folded.kept.push(i);
            continue;
        };
        match folded.unmeasured.iter_mut().find(|u| u.reason == reason) {
            Some(line) => line.names.push(name),
            None => folded.unmeasured.push(Unmeasured {
                reason,
                names: vec![name],
            }),
        }
    }
    folded
}

/// The reason every cell gives, if there are cells and they all give the same one.
fn one_reason<'a>(cells: &[Option<&'a str>]) -> Option<&'a str> {
    let first = (*cells.first()?)?;
    cells.iter().all(|c| *c == Some(first)).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_n_a_for_one_reason_in_every_cell_fold_into_one_line() {
        let rows = [
            ("task_clock_ns", vec![None, None]),
            ("cycles", vec![Some(NO_PMU), Some(NO_PMU)]),
            ("instructions", vec![Some(NO_PMU), Some(NO_PMU)]),
            ("cycles_per_byte", vec![Some(NO_PMU), Some(NO_PMU)]),
        ];
        let folded = fold(&rows);
        assert_eq!(folded.kept, vec![0]);
        assert_eq!(folded.unmeasured.len(), 1);
        assert_eq!(
            folded.unmeasured[0].to_string(),
            "hardware counters (cycles, instructions, cycles_per_byte): not measured: this machine exposes no PMU"
        );
    }

    #[test]
    fn a_row_with_a_value_in_one_cell_stays_a_row() {
        let rows = [
            ("cycles", vec![Some(NO_PMU), None]),
            ("instructions", vec![None, Some(NO_PMU)]),
        ];
        let folded = fold(&rows);
        assert_eq!(folded.kept, vec![0, 1]);
        assert!(folded.unmeasured.is_empty());
    }

    #[test]
    fn different_reasons_do_not_merge() {
        let paranoid = "permission: perf_event_paranoid=2";
        let rows = [
            ("context_switches", vec![Some(paranoid), Some(paranoid)]),
            ("cycles", vec![Some(NO_PMU), Some(NO_PMU)]),
            ("mixed", vec![Some(NO_PMU), Some(paranoid)]),
            ("page_faults", vec![Some(paranoid), Some(paranoid)]),
        ];
        let folded = fold(&rows);
        assert_eq!(folded.kept, vec![2], "cells n/a for two reasons stay a row");
        let lines: Vec<String> = folded.unmeasured.iter().map(|u| u.to_string()).collect();
        assert_eq!(
            lines,
            [
                "perf counters (context_switches, page_faults): not measured: permission: perf_event_paranoid=2",
                "hardware counters (cycles): not measured: this machine exposes no PMU",
            ]
        );
    }

    /// The reason folded as "this machine exposes no PMU" is the one the counters give.
    #[test]
    fn no_pmu_is_the_reason_a_missing_pmu_gives() {
        let absent = std::io::Error::from_raw_os_error(libc::ENOENT);
        let cycles = super::super::counters::CounterEvent::Cycles;
        assert_eq!(
            super::super::counters::unavailable_reason(cycles, &absent),
            NO_PMU
        );
    }

    #[test]
    fn a_reason_that_says_not_already_is_not_said_twice() {
        let none = "not counted: --counters none";
        let folded = fold(&[
            ("cycles", vec![Some(none)]),
            ("page_faults", vec![Some(none)]),
        ]);
        assert_eq!(
            folded.unmeasured[0].to_string(),
            "perf counters (cycles, page_faults): not counted: --counters none"
        );
        assert!(
            fold(&[("empty", vec![])]).unmeasured.is_empty(),
            "no cells: no reason"
        );
    }
}
