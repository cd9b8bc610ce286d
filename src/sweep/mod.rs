//! `bytepath sweep`: a matrix of points, measured in an interleaved order, written as it goes.
use crate::cli::SweepArgs;
use crate::error::{Error, Status};
use std::sync::atomic::AtomicBool;

pub fn command(_args: &SweepArgs, _interrupt: &AtomicBool) -> Result<Status, Error> {
    Err(Error::Failed("bytepath sweep is being built".into()))
}
