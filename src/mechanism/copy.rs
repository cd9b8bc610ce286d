//! `copy` (two-copy): serialize the 8 heap fields into one contiguous buffer (copy 1), then
//! send(2) it (copy 2, into the kernel).
use super::buffer::MessageBuffer;
use super::descriptor::{MechanismDescriptor, MechanismKind};
use super::message::Message;
use super::{pattern, send_all, FlowContext, SendMechanism};
use crate::transport::Endpoint;
use std::io;

static DESCRIPTOR: MechanismDescriptor =
    MechanismDescriptor::copying("copy", "serialize 8 fields, send", |ctx| {
        Ok(Box::new(TwoCopy::new(ctx)))
    });

impl MechanismKind {
    /// `copy`: two copies, the baseline the one-copy and zero-copy paths are set against.
    pub const COPY: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}

pub struct TwoCopy {
    message: Message,
    wire: MessageBuffer,
    ctx: FlowContext,
}

impl TwoCopy {
    pub fn new(ctx: FlowContext) -> Self {
        TwoCopy {
            message: Message::new(ctx.message_size, ctx.flow),
            wire: MessageBuffer::new(ctx.message_size),
            ctx,
        }
    }
}

impl SendMechanism for TwoCopy {
    fn send_message(&mut self, ep: &Endpoint, seq: u64) -> io::Result<()> {
        if self.ctx.fill_pattern {
            self.message.fill(pattern::message_seed(self.ctx.flow, seq));
        }
        self.message.serialize_into(&mut self.wire);
        send_all(ep, &self.wire)
    }
}
