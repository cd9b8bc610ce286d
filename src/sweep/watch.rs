//! How the sweep reads a visit record's interference block: whether others disturbed it, and
//! the note a point record carries for a disturbed visit that was made again.
use crate::record::RunRecord;

/// Whether the visit's interference block marks it disturbed (a visit without one is not).
pub fn disturbed(visit: &RunRecord) -> bool {
    visit
        .visit
        .as_ref()
        .and_then(|v| v.interference.as_ref())
        .is_some_and(|i| i.disturbed)
}

/// The note for a replaced visit that was disturbed (not failed); `None` otherwise.
pub fn redo_note(replaced: &RunRecord) -> Option<String> {
    let info = replaced.visit.as_ref()?;
    let block = info.interference.as_ref().filter(|i| i.disturbed)?;
    if replaced.status == "failed" {
        return None;
    }
    Some(format!(
        "round {} {:?} visit was disturbed (others used {:.0} % and steal {:.0} % of the run's {} CPU(s), above the quiet threshold of {:.0} %) and was made again at the end of its round",
        info.round,
        info.kind,
        block.others_cpu_share * 100.0,
        block.steal_share * 100.0,
        block.cpus,
        block.threshold * 100.0
    ))
}
