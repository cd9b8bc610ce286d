//! A sink's point (`--sink`): every flow has its sending side only, a stream sender whose
//! datagrams are dropped past a veth pair; no receiving thread runs. The sender is the
//! measured side: its window and slices count the bytes the kernel accepted (for a zero-copy
//! mechanism, sends whose buffers wait for their completion before reuse, so over a run
//! accepted and completed differ by one pool at most). The per-message path is the stream
//! sender's own, unchanged; only which workers exist differs.
use super::control::Control;
use super::worker::Role;
use super::{measure, side_worker, Prepared, RunOutcome, Shared};
use crate::config::RunSpec;
use crate::error::Error;
use crate::transport::SinkConnector;
use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs one point on a sink: the sending ends from `connector`, a sender per flow, the
/// controller's phases as for any run; `watch` is told of the sender's slices.
pub fn run_watched(
    spec: &RunSpec,
    connector: &dyn SinkConnector,
    interrupt: &AtomicBool,
    watch: super::slices::SliceWatch,
) -> Result<RunOutcome, Error> {
    let ends = connector
        .connect_senders(spec.threads, spec.socket_options())
        .map_err(Error::Setup)?;
    let send_buffer_bytes = ends.first().map_or(0, |e| e.send_buffer);
    let control = Arc::new(Control::new().map_err(Error::Setup)?);
    // The start barrier: one sender per flow, and the controller.
    let shared = Shared::new(spec, spec.threads, &control);
    let workers = ends
        .into_iter()
        .enumerate()
        .map(|(flow, end)| {
            side_worker(
                spec,
                flow,
                Role::Sender,
                end.sender,
                end.send_buffer,
                &shared,
            )
        })
        .collect::<io::Result<Vec<_>>>()
        .map_err(Error::Setup)?;
    let prepared = Prepared {
        workers,
        shared,
        placement: connector.describe(),
        send_buffer_bytes,
        split: None,
    };
    measure(spec, prepared, interrupt, watch)
}
