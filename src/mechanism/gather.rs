//! `gather` (one-copy): sendmsg(2) with an 8-entry iovec over the fields; the only copy is the
//! kernel's.
use super::descriptor::{Crossover, MechanismDescriptor, MechanismKind};
use super::message::Message;
use super::{pattern, send_all_vectored, FlowContext, SendMechanism};
use crate::transport::Endpoint;
use std::io;

static DESCRIPTOR: MechanismDescriptor = MechanismDescriptor {
    crossover: Some(Crossover {
        against: MechanismKind::COPY,
        question: "From which message size does gather (one copy) beat copy (two copies)?",
        always: true,
    }),
    ..MechanismDescriptor::copying("gather", "sendmsg over 8 fields", |ctx| {
        Ok(Box::new(Gather::new(ctx)))
    })
};

impl MechanismKind {
    /// `gather`: one copy, the kernel's.
    pub const GATHER: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}

pub struct Gather {
    message: Message,
    ctx: FlowContext,
}

impl Gather {
    pub fn new(ctx: FlowContext) -> Self {
        Gather {
            message: Message::new(ctx.message_size, ctx.flow),
            ctx,
        }
    }
}

impl SendMechanism for Gather {
    fn send_message(&mut self, ep: &Endpoint, seq: u64) -> io::Result<()> {
        if self.ctx.fill_pattern {
            self.message.fill(pattern::message_seed(self.ctx.flow, seq));
        }
        let mut iov = self.message.iov();
        send_all_vectored(&mut iov, |iov| ep.write_vectored(iov))
    }
}
