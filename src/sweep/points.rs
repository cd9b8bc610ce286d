//! Every point's record, built from its visits (`record::aggregate`): after every round, so
//! results.jsonl always matches visits.jsonl, and once more when the rounds end.
use super::spec::Point;
use super::study::{Stopped, Sweep};
use super::watch;
use crate::record::{self, RunRecord, VisitKind};

impl Sweep<'_> {
    /// Every visited point's record, in the matrix's order.
    pub(super) fn point_records(&self, stopped: Stopped) -> Vec<RunRecord> {
        self.points
            .iter()
            .enumerate()
            .filter_map(|(i, point)| self.point_record(i, point, stopped))
            .collect()
    }

    fn point_record(&self, i: usize, point: &Point, stopped: Stopped) -> Option<RunRecord> {
        let key = point.key();
        let met = self
            .log
            .need(&key, usize::MAX, self.spec.ci_target)
            .is_some_and(|n| n <= 1.0);
        let stop = match (met, stopped) {
            (true, _) => "ci_target_met",
            (false, Stopped::Interrupted) => "interrupted",
            (false, _) => "budget_spent",
        };
        let visits = self.log.of(&key);
        let counters_round = visits
            .iter()
            .filter_map(|r| r.visit.as_ref())
            .find(|v| v.kind == VisitKind::Counters)
            .map(|v| v.round);
        let plan = self.spec.visit_plan(stop, counters_round);
        let run = self.sides.place(self.spec.run_spec(point, false));
        let mut record = record::aggregate::point_record(&run, self.env.clone(), &visits, &plan)?;
        record.sweep_point = Some(self.sweep_point(i));
        if let (None, Some(why)) = (&record.copies, &self.copies_unavailable) {
            let about = "no copies visit: the tracepoints could not be opened".into();
            record.copies = Some(record::copies::not_counted(about, why));
        }
        if record.profiled_visit.is_some() {
            let remote = self.spec.remote.as_ref().map(|_| remote_role(point));
            record::profile::apply_memcpy(&mut record, self.memcpy.clone(), remote);
        }
        for earlier in self.log.replaced(&key) {
            match watch::redo_note(earlier) {
                Some(note) => record.notes.push(note),
                None => record.notes.push(replaced_note(earlier)),
            }
        }
        Some(record)
    }
}

/// The side a remote point's server runs (its memcpy cost is not this host's); a sweep never
/// runs `--reverse`, so it is the unmeasured one.
fn remote_role(point: &Point) -> crate::engine::worker::Role {
    crate::engine::processes::child_role(point.pattern)
}

/// What a point says of a visit of it made again: after a failure, or with its whole group
/// on `--resume`.
fn replaced_note(earlier: &RunRecord) -> String {
    let info = earlier.visit.as_ref().expect("a visit record");
    if earlier.status == "failed" {
        format!(
            "round {} {:?} visit failed and was made again ({})",
            info.round,
            info.kind,
            earlier.errors.join("; ")
        )
    } else {
        format!(
            "round {} {:?} visit was made again with its whole group on --resume, so that the \
             round's pairs come from one run of the tool",
            info.round, info.kind
        )
    }
}
