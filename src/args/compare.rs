//! `bytepath compare OLD NEW [--fail-on-regression PCT] [--margin PCT] [--between-spread PCT]
//! [--json]`: the flags -> `compare::run`.
use crate::cli::CompareArgs;
use crate::config::parse_percent;
use crate::error::{Error, Status};

pub fn command(args: &CompareArgs) -> Result<Status, Error> {
    let limit = match &args.fail_on_regression {
        Some(text) => Some(parse_percent("--fail-on-regression", text, 100.0)?),
        None => None,
    };
    let between_spread = match &args.between_spread {
        Some(text) => Some(between_spread(text)?),
        None => None,
    };
    let options = crate::compare::Options {
        limit,
        margin: args.margin.share()?,
        normalize: super::normalize::canary(&args.normalize)?,
        between_spread,
        json: args.json.json,
    };
    crate::compare::run(&args.old, &args.new, options)
}

/// `--between-spread PCT`: an A/A pair's τ, 0 (a machine whose sweeps agree within their
/// visits) up to 50 % (beyond that no point could be judged at all).
fn between_spread(text: &str) -> Result<f64, crate::error::ConfigError> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(p) if (0.0..=50.0).contains(&p) => Ok(p / 100.0),
        _ => Err(crate::error::ConfigError(format!(
            "--between-spread {text:?}: allowed: a percentage from 0 to 50, such as 4.8% (the between-sweep τ of an A/A pair that bench/noise.sh or bench/repeatability.sh measured)"
        ))),
    }
}
