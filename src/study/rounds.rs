//! The round loop the visiting studies (sweep, ipc, servers) share. A round starts with the
//! canary; its visits go in the order the schedule drew (`stats::schedule`), Ctrl-C checked
//! before each; a visit others disturbed (beyond the quiet threshold) is made once more at the
//! end of its round, so that both stay in the folder and the study counts the second. The
//! study decides which visits a round makes (`Visits::step`: the sweep skips what `--resume`
//! kept and ends a round when the budget is spent) and how one is made.
use super::folder::StudyFolder;
use super::{Ending, Underway};
use crate::error::Error;
use crate::stats::schedule::{PlannedVisit, Schedule};

/// How one visit went, for its round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    Quiet,
    /// Others used the machine beyond the quiet threshold: made once more at the round's end.
    Disturbed,
    /// Ctrl-C arrived during it: the rounds end.
    Interrupted,
}

/// What a round does with a planned visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Make,
    /// Already made (kept by `--resume`) or never to be made (skipped by this kernel).
    Pass,
    /// The round ends before this visit (the budget is spent).
    EndRound,
}

/// A study measured in rounds of visits.
pub trait Visits<F> {
    /// What the round does with `planned`; `new_group`: it opens a group of the round.
    fn step(&self, _planned: &PlannedVisit, _new_group: bool) -> Step {
        Step::Make
    }

    /// Makes one visit (`again`: a disturbed one made once more at its round's end), saves it
    /// and says how it went.
    fn make(
        &mut self,
        run: &mut Underway<'_, F>,
        planned: &PlannedVisit,
        again: bool,
    ) -> Result<Made, Error>;
}

/// One round: the canary (when the round plans any visit), its visits in order, then the
/// disturbed ones once more. Whether Ctrl-C ended it.
pub fn round<F: StudyFolder>(
    run: &mut Underway<'_, F>,
    visits: Vec<PlannedVisit>,
    study: &mut impl Visits<F>,
) -> Result<Ending, Error> {
    if let Some(first) = visits.first() {
        run.canary(first.round)?;
    }
    let mut group = None;
    let mut disturbed = Vec::new();
    for planned in visits {
        if run.interrupted() {
            return Ok(Ending::Interrupted);
        }
        let new_group = group != Some(planned.group);
        match study.step(&planned, new_group) {
            Step::EndRound => break,
            Step::Pass => {
                group = Some(planned.group);
                continue;
            }
            Step::Make => group = Some(planned.group),
        }
        match study.make(run, &planned, false)? {
            Made::Interrupted => return Ok(Ending::Interrupted),
            Made::Disturbed => disturbed.push(planned),
            Made::Quiet => {}
        }
    }
    for planned in disturbed {
        if run.interrupted() {
            return Ok(Ending::Interrupted);
        }
        if study.make(run, &planned, true)? == Made::Interrupted {
            return Ok(Ending::Interrupted);
        }
    }
    Ok(Ending::Completed)
}

/// `rounds` rounds of every group, as ipc and servers make them.
pub fn every_group<F: StudyFolder>(
    run: &mut Underway<'_, F>,
    mut schedule: Schedule,
    rounds: usize,
    study: &mut impl Visits<F>,
) -> Result<Ending, Error> {
    let all: Vec<usize> = (0..schedule.group_count()).collect();
    for r in 0..rounds {
        if round(run, schedule.round(r, &all, true), study)? == Ending::Interrupted {
            return Ok(Ending::Interrupted);
        }
    }
    Ok(Ending::Completed)
}

/// The points of each group, in the order the groups first appear: what one round visits back
/// to back (the points one comparison holds equal, as `group_of` names them).
pub fn groups<P, G: PartialEq>(points: &[P], group_of: impl Fn(&P) -> G) -> Vec<Vec<usize>> {
    let mut groups: Vec<(G, Vec<usize>)> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let at = group_of(p);
        match groups.iter_mut().find(|(g, _)| *g == at) {
            Some((_, members)) => members.push(i),
            None => groups.push((at, vec![i])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}
