//! io_uring senders: `uring` (IORING_OP_SEND), `uring-gather` (IORING_OP_SENDMSG over the 8
//! fields) and `uring-zc` (IORING_OP_SEND_ZC). Being built on branch uring-send.
use super::{FlowContext, MechanismKind, SendMechanism};
use std::io;

pub fn build(kind: MechanismKind, _ctx: FlowContext) -> io::Result<Box<dyn SendMechanism>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{} is not built yet", kind.name()),
    ))
}

pub fn probe(kind: MechanismKind) -> Result<(), String> {
    Err(format!("{} is not built yet", kind.name()))
}
