//! `uring`: io_uring IORING_OP_SEND of one contiguous buffer per message, `--queue-depth`
//! sends linked per submission (io_uring_prep_send(3)); the ring is `uring`'s shared code.
use super::super::descriptor::{Crossover, MechanismDescriptor, MechanismKind};
use super::super::descriptor::{Patterns, Reuse, Transports};
use super::{build, slot_per_queue_entry, supported, SEND_SOCKETS, SEND_SOCKETS_ONLY};
use crate::sys::uring_send::SendOp;

static DESCRIPTOR: MechanismDescriptor = MechanismDescriptor {
    name: "uring",
    help: "io_uring send",
    transports: Transports::Only {
        transports: SEND_SOCKETS,
        because: SEND_SOCKETS_ONLY,
    },
    patterns: Patterns {
        crr: Ok(()),
        bidir: false,
    },
    probe: || supported(SendOp::Send),
    build: |ctx| build::<Box<[u8]>>(SendOp::Send, ctx),
    reuse: Reuse::OnResult,
    buffers: slot_per_queue_entry,
    zerocopy_socket: false,
    nodelay: false,
    uses_queue_depth: true,
    zero_copy: None,
    datagram_sends: crate::mechanism::descriptor::any_send,
    crossover: Some(Crossover {
        against: MechanismKind::SEND,
        question: "From which message size does io_uring send (uring) beat send()?",
        always: false,
    }),
};

impl MechanismKind {
    /// `uring`: io_uring IORING_OP_SEND of a contiguous buffer.
    pub const URING: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}
