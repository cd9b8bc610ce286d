//! `send`: the reference path. One prebuilt contiguous buffer handed to send(2), as iperf3 and
//! netperf do; `copy − send` is what serialization alone costs.
use super::buffer::MessageBuffer;
use super::descriptor::{MechanismDescriptor, MechanismKind};
use super::{pattern, send_all, FlowContext, SendMechanism};
use crate::transport::Endpoint;
use std::io;

static DESCRIPTOR: MechanismDescriptor =
    MechanismDescriptor::copying("send", "reference, one prebuilt buffer", |ctx| {
        Ok(Box::new(SendReference::new(ctx)))
    });

impl MechanismKind {
    /// `send`: the reference the other paths are set against.
    pub const SEND: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}

pub struct SendReference {
    buf: MessageBuffer,
    ctx: FlowContext,
}

impl SendReference {
    pub fn new(ctx: FlowContext) -> Self {
        let mut buf = MessageBuffer::new(ctx.message_size);
        pattern::fill(pattern::message_seed(ctx.flow, 0), 0, &mut buf);
        SendReference { buf, ctx }
    }
}

impl SendMechanism for SendReference {
    fn send_message(&mut self, ep: &Endpoint, seq: u64) -> io::Result<()> {
        if self.ctx.fill_pattern {
            pattern::fill(pattern::message_seed(self.ctx.flow, seq), 0, &mut self.buf);
        }
        send_all(ep, &self.buf)
    }
}
