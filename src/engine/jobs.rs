//! What each side of a flow does (its `Job`), by pattern and role: the mechanism it sends
//! with and the receive path it takes bytes with. Built before the start barrier; nothing
//! here runs on the measured path.
use super::crr;
use super::worker::{Job, Role};
use crate::config::{Pattern, RunSpec};
use crate::mechanism::receive::{Receiver, RecvMode};
use crate::mechanism::{self, FlowContext};
use crate::transport::Endpoint;
use std::io;

/// What one side of a flow does, by pattern and role: the mechanism it sends with and the
/// receive path it takes bytes with.
pub(super) fn job(
    spec: &RunSpec,
    role: Role,
    ctx: FlowContext,
    endpoint: &Endpoint,
) -> io::Result<Job> {
    let receiver = |mode| {
        Receiver::new(
            ctx.flow,
            spec.message_size,
            mode,
            spec.spin,
            spec.verify,
            spec.recv_path,
        )
    };
    Ok(match (spec.pattern, role) {
        (Pattern::Stream, Role::Sender) => Job::StreamSend(mechanism::build(spec.mechanism, ctx)?),
        (Pattern::Stream, Role::Receiver) => {
            Job::StreamReceive(receiver(stream_receive_mode(spec)))
        }
        (Pattern::Rr, _) => {
            let mode = match spec.framing() {
                Some(framing) => RecvMode::Datagrams(framing),
                None => RecvMode::WholeMessage {
                    max_call: spec.recv_call_size(),
                },
            };
            let mech = mechanism::build(spec.mechanism, ctx)?;
            match role {
                Role::Sender => Job::RrClient(mech, receiver(mode)),
                Role::Receiver => Job::RrServer(receiver(mode), mech),
            }
        }
        (Pattern::Crr, _) => {
            let mode = RecvMode::WholeMessage {
                max_call: spec.recv_call_size(),
            };
            let mech = mechanism::build(spec.mechanism, ctx)?;
            crr_job(spec, role, endpoint, mech, receiver(mode))?
        }
    })
}

/// How a stream's receiver takes bytes: datagrams, `--recv-size` chunks, or whole messages.
fn stream_receive_mode(spec: &RunSpec) -> RecvMode {
    match (spec.framing(), spec.recv_size) {
        (Some(framing), _) => RecvMode::Datagrams(framing),
        (None, Some(chunk)) => RecvMode::Chunks { chunk },
        (None, None) => RecvMode::WholeMessage {
            max_call: spec.message_size,
        },
    }
}

/// A crr side: the client connects to the server's listener for every transaction.
fn crr_job(
    spec: &RunSpec,
    role: Role,
    endpoint: &Endpoint,
    mech: Box<dyn mechanism::SendMechanism>,
    receiver: Receiver,
) -> io::Result<Job> {
    let (target, listener) = crr::sides_of(spec.transport, endpoint)?;
    let nodelay = spec.socket_options().nodelay;
    Ok(match role {
        Role::Sender => Job::CrrClient(
            mech,
            receiver,
            crr::CrrClient {
                // Read here, in set-up, not in the client's measured loop: the table can
                // take a while to read when it holds many sockets.
                time_wait_before: target.port().and_then(crr::time_wait_towards),
                target,
                linger_zero: spec.crr.linger_zero,
                nodelay,
            },
        ),
        Role::Receiver => Job::CrrServer(receiver, mech, listener, nodelay),
    })
}
