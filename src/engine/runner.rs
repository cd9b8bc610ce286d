//! Where the two sides of every point run, as a study sees it: a `PointRunner` places each
//! point's spec and runs it. `sides::Sides` implements it (this host over loopback, two
//! network namespaces, or a remote `bytepath server`); a study is handed one, opened once
//! from the command line, and never picks a placement itself (the `Peer` seam's model, one
//! level up). In unit tests `study::scripted::ScriptedRunner` stands in for it with scripted
//! figures, so a study's loop is tested without measuring.
use super::slices::SliceSeen;
use super::RunOutcome;
use crate::config::RunSpec;
use crate::error::Error;
use std::sync::atomic::AtomicBool;

pub trait PointRunner {
    /// Where the sides run, in words, for a command's opening lines ("sides …"); `None` for
    /// plain loopback, which needs no mention.
    fn announce(&self) -> Option<String>;

    /// `spec` as run in this placement: its `network` says where the sides ran, so the record
    /// built from it does too. Run and record the returned spec.
    fn place(&self, spec: RunSpec) -> RunSpec;

    /// Runs one point in this placement; a point whose mechanism or receive path this kernel
    /// lacks is skipped with the probe's reason.
    fn run(&self, spec: &RunSpec, interrupt: &AtomicBool) -> Result<RunOutcome, Error>;

    /// As `run`, telling `watch` of each slice of the measured side. A placement that cannot
    /// follow slices while the run goes on tells them all after it (this default).
    fn run_watched(
        &self,
        spec: &RunSpec,
        interrupt: &AtomicBool,
        watch: &dyn Fn(SliceSeen),
    ) -> Result<RunOutcome, Error> {
        let outcome = self.run(spec, interrupt)?;
        outcome.slices.seen().for_each(watch);
        Ok(outcome)
    }
}
