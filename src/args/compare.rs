//! `bytepath compare OLD NEW [--fail-on-regression PCT] [--margin PCT]`: the flags -> `compare::run`.
use crate::cli::CompareArgs;
use crate::config::parse_percent;
use crate::error::{Error, Status};

pub fn command(args: &CompareArgs) -> Result<Status, Error> {
    let limit = match &args.fail_on_regression {
        Some(text) => Some(parse_percent("--fail-on-regression", text, 100.0)?),
        None => None,
    };
    let normalize = super::normalize::canary(&args.normalize)?;
    crate::compare::run(&args.old, &args.new, limit, args.margin.share()?, normalize)
}
