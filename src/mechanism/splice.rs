//! `splice`: being built on branch splice-send.
use super::{FlowContext, SendMechanism};
use std::io;

pub fn build(_ctx: FlowContext) -> io::Result<Box<dyn SendMechanism>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "splice is not built yet",
    ))
}

pub fn probe() -> Result<(), String> {
    Err("splice is not built yet".into())
}
