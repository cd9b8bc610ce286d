//! `--normalize canary` → whether `compare` divides out the machine's change.
use crate::cli::normalize::NormalizeArgs;
use crate::error::ConfigError;

pub fn canary(args: &NormalizeArgs) -> Result<bool, ConfigError> {
    match args.normalize.as_deref().map(str::trim) {
        None => Ok(false),
        Some("canary") => Ok(true),
        Some(other) => Err(ConfigError(format!(
            "--normalize {other:?}: expected canary"
        ))),
    }
}
