//! `--bidir`: each stream flow carries data both ways at once (as iperf3 --bidir). Besides
//! the forward pair (the sending end's sender thread, the receiving end's receiver thread),
//! the receiving end sends on a second descriptor of its socket from a thread of its own, and
//! the sending end receives on one of its own: four threads per flow, each side sending and
//! receiving on separate threads. The reverse threads run on their side's CPU; the statistics,
//! slices and --messages follow the forward receiver, and the record gives each direction.
use super::worker::{Job, Role, Worker};
use super::{side_worker, Shared};
use crate::config::RunSpec;
use crate::transport::{Endpoint, FlowEnds};
use std::io;

/// A second descriptor of a socket end, so another thread can use the other direction.
fn other_direction(ep: &Endpoint) -> io::Result<Endpoint> {
    let fd = ep
        .socket_fd()
        .ok_or_else(|| io::Error::other("--bidir needs a socket end"))?;
    Ok(Endpoint::socket(fd.try_clone_to_owned()?))
}

/// The reverse direction's sender (on the flow's receiving end) and receiver (on its sending
/// end).
pub fn reverse_workers(
    spec: &RunSpec,
    flow: usize,
    pair: &FlowEnds,
    shared: &Shared,
) -> io::Result<[(Worker, Job); 2]> {
    let placement = spec.placement(flow);
    let send_end = other_direction(&pair.receiver)?;
    let receive_end = other_direction(&pair.sender)?;
    let mut sender = side_worker(spec, flow, Role::Sender, send_end, pair.send_buffer, shared)?;
    let mut receiver = side_worker(
        spec,
        flow,
        Role::Receiver,
        receive_end,
        pair.send_buffer,
        shared,
    )?;
    sender.0.cpu = placement.receiver_cpu;
    receiver.0.cpu = placement.sender_cpu;
    receiver.0.slices = None;
    receiver.0.count = None;
    sender.0.reverse = true;
    receiver.0.reverse = true;
    Ok([sender, receiver])
}
