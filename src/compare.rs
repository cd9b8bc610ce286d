//! `bytepath compare OLD NEW`: per point, the ratio new/old with its confidence interval.
use crate::cli::CompareArgs;
use crate::error::{Error, Status};

pub fn command(_args: &CompareArgs) -> Result<Status, Error> {
    Err(Error::Failed("bytepath compare is being built".into()))
}
