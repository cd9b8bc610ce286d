//! `uring-gather`: io_uring IORING_OP_SENDMSG with the 8-entry iovec over the message's
//! fields, `--queue-depth` sends linked per submission (io_uring_prep_sendmsg(3)); the ring is
//! `uring`'s shared code.
use super::super::descriptor::{Crossover, MechanismDescriptor, MechanismKind};
use super::super::descriptor::{Patterns, Reuse, Transports};
use super::super::message::Message;
use super::{build, slot_per_queue_entry, supported, STREAM_SOCKETS, STREAM_SOCKETS_ONLY};
use crate::sys::uring_send::SendOp;

static DESCRIPTOR: MechanismDescriptor = MechanismDescriptor {
    name: "uring-gather",
    help: "io_uring sendmsg over 8 fields",
    transports: Transports::Only {
        transports: STREAM_SOCKETS,
        because: STREAM_SOCKETS_ONLY,
    },
    patterns: Patterns {
        crr: Ok(()),
        bidir: false,
    },
    probe: || supported(SendOp::SendMsg),
    build: |ctx| build::<Message>(SendOp::SendMsg, ctx),
    reuse: Reuse::OnResult,
    buffers: slot_per_queue_entry,
    zerocopy_socket: false,
    nodelay: false,
    uses_queue_depth: true,
    zero_copy: None,
    datagram_sends: crate::mechanism::descriptor::any_send,
    crossover: Some(Crossover {
        against: MechanismKind::GATHER,
        question:
            "From which message size does io_uring sendmsg (uring-gather) beat sendmsg (gather)?",
        always: false,
    }),
};

impl MechanismKind {
    /// `uring-gather`: io_uring IORING_OP_SENDMSG over the fields.
    pub const URING_GATHER: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}
