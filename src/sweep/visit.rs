//! One visit of a sweep: the point's run in its placement, with the machine watched around
//! it (and, in a copies visit, the kernel's tracepoints open around it), saved to
//! visits.jsonl as it ends; a visit that fails is made once more at once.
use super::study::Sweep;
use super::watch;
use crate::config::watch::run_cpus;
use crate::engine::RunOutcome;
use crate::environment::mem_available;
use crate::error::Error;
use crate::measure::copies::CopyCounter;
use crate::record::{self, RunRecord, SweepPoint, UnderLoadVisit, VisitInfo, VisitKind};
use crate::report::visit_folder::VisitFolder;
use crate::stats::schedule::PlannedVisit;
use crate::study::rounds::Made;
use crate::study::Underway;

impl Sweep<'_> {
    /// Makes one visit and saves it. A visit that fails is made once more at once: on a loaded
    /// machine a short visit can be starved of the CPU and complete nothing. Both stay in
    /// visits.jsonl; the second replaces the first in the point's figures, and its record
    /// says so.
    pub(super) fn make_visit(
        &mut self,
        run: &mut Underway<'_, VisitFolder>,
        planned: &PlannedVisit,
    ) -> Result<Made, Error> {
        let key = self.points[planned.point].key();
        for attempt in 0..2 {
            self.progress().start(planned, &key);
            let visit = self.visit(run, planned);
            run.folder.append(&visit)?;
            let value = serde_json::to_value(&visit).expect("a record serializes");
            self.progress().finish(planned, &value);
            let (interrupted, failed) = (visit.interrupted, visit.status == "failed");
            let disturbed = watch::disturbed(&visit);
            self.log.add(visit);
            if interrupted {
                return Ok(Made::Interrupted);
            }
            if !failed || attempt == 1 {
                return Ok(if disturbed {
                    Made::Disturbed
                } else {
                    Made::Quiet
                });
            }
        }
        Ok(Made::Quiet)
    }

    /// Measures one visit; a visit that cannot run becomes a failed record, never an error.
    fn visit(&mut self, run: &Underway<'_, VisitFolder>, planned: &PlannedVisit) -> RunRecord {
        let point = &self.points[planned.point];
        let counters = planned.kind == VisitKind::Counters;
        let mut spec = self.sides.place(self.spec.run_spec(point, counters));
        spec.profile = planned.kind == VisitKind::Profile;
        let cpus = run_cpus(&self.spec.pinning, point.threads, &self.spec.cpus);
        let watch = run.machine.watch(&cpus);
        // `--count-copies`: the tracepoints open in the copies visit only.
        let counter = (planned.kind == VisitKind::Copies).then(|| CopyCounter::start(&cpus));
        let outcome = match mem_available() {
            Some(available) => spec.check_memory(available).map_err(Error::from),
            None => Ok(()),
        }
        .and_then(|()| self.sides.run(&spec, run.interrupt));
        let counts = counter.map(|c| c.and_then(CopyCounter::stop));
        let outcome = outcome.unwrap_or_else(|e| RunOutcome::not_run(&spec, e.to_string()));
        let (wall_s, interference) = watch.end(self.spec.watch.quiet_threshold);
        // The visit's threads are gone; what they freed would stay in their arenas.
        crate::sys::release_free_memory();
        let mut record = record::build(&spec, &outcome, self.env.clone());
        if let Some(counts) = counts {
            record.copies = Some(copies_block(&spec, &record, counts, planned.round));
        }
        record.command = "sweep".into();
        record.sweep_point = Some(self.sweep_point(planned.point));
        record.under_load_visit = self.under_load_visit(point);
        record.visit = Some(VisitInfo {
            key: point.key(),
            round: planned.round,
            kind: planned.kind,
            position: self.position,
            wall_s,
            seed: self.spec.seed,
            interference: Some(interference),
        });
        self.position += 1;
        record
    }

    /// `--count-copies`: why the tracepoints cannot be opened here, if they cannot: opened
    /// (tracefs mounted and unmounted where bytepath mounts it) and closed once before the
    /// copies round, and said on one line.
    pub(super) fn tracepoints_refused(&self) -> Option<String> {
        let cpus = run_cpus(&self.spec.pinning, 1, &self.spec.cpus);
        let why = CopyCounter::start(&cpus)
            .and_then(CopyCounter::stop)
            .err()?;
        eprintln!(
            "bytepath: --count-copies: copies not counted: {why}; the sweep goes on without \
             its copies visits"
        );
        Some(why)
    }

    /// Which of its `--under-load` pair an rr point is; `None` without the flag.
    fn under_load_visit(&self, point: &crate::config::point::Point) -> Option<UnderLoadVisit> {
        self.spec.under_load?;
        Some(match point.under_load {
            true => UnderLoadVisit::Loaded,
            false => UnderLoadVisit::Unloaded,
        })
    }

    pub(super) fn sweep_point(&self, index: usize) -> SweepPoint {
        SweepPoint {
            index,
            total: self.points.len(),
            key: self.points[index].key(),
        }
    }
}

/// A copies visit's block: what the tracepoints counted over the visit, or why nothing.
fn copies_block(
    spec: &crate::config::RunSpec,
    record: &RunRecord,
    counts: Result<crate::measure::copies::CopyCounts, String>,
    round: usize,
) -> crate::record::copies::CopiesReport {
    let about = format!(
        "the point's copies visit (round {}, {:.1} s measured) with the kernel's tracepoints \
         open; the point's other figures come from its headline visits, which opened none",
        round + 1,
        record.measured_s
    );
    crate::record::copies::report(spec, record, counts, about)
}
