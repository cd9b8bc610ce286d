//! `--quiet-threshold`, `--settle` and `--settle-limit` → `Watch`.
use crate::cli::watch::WatchArgs;
use crate::config::parse::{parse_duration, parse_percent};
use crate::config::watch::{Watch, DEFAULT_QUIET_THRESHOLD, DEFAULT_SETTLE_LIMIT};
use crate::error::ConfigError;

pub fn watch(args: &WatchArgs) -> Result<Watch, ConfigError> {
    let quiet_threshold = match &args.quiet_threshold {
        Some(text) => parse_percent("--quiet-threshold", text, 100.0)?,
        None => DEFAULT_QUIET_THRESHOLD,
    };
    let limit = match &args.settle_limit {
        Some(text) => parse_duration("--settle-limit", text, false)?,
        None => DEFAULT_SETTLE_LIMIT,
    };
    let settle = match args.settle.as_deref().map(str::trim) {
        None | Some("on") => Some(limit),
        Some("off") => {
            if args.settle_limit.is_some() {
                return Err(ConfigError(
                    "--settle-limit with --settle off: the limit applies only when settling".into(),
                ));
            }
            None
        }
        Some(other) => {
            return Err(ConfigError(format!(
                "--settle {other:?}: expected on or off"
            )))
        }
    };
    Ok(Watch {
        quiet_threshold,
        settle,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: Option<&str>, s: Option<&str>, l: Option<&str>) -> Result<Watch, ConfigError> {
        watch(&WatchArgs {
            quiet_threshold: q.map(Into::into),
            settle: s.map(Into::into),
            settle_limit: l.map(Into::into),
        })
    }

    #[test]
    fn defaults_settle_for_thirty_seconds_at_a_tenth() {
        assert_eq!(parse(None, None, None).unwrap(), Watch::default());
    }

    #[test]
    fn values_are_read_and_bad_ones_named() {
        let w = parse(Some("25%"), Some("on"), Some("5s")).unwrap();
        assert_eq!(w.quiet_threshold, 0.25);
        assert_eq!(w.settle, Some(std::time::Duration::from_secs(5)));
        assert_eq!(parse(None, Some("off"), None).unwrap().settle, None);
        let e = parse(None, Some("maybe"), None).unwrap_err().0;
        assert!(
            e.contains("--settle \"maybe\"") && e.contains("on or off"),
            "{e}"
        );
        assert!(parse(Some("0"), None, None)
            .unwrap_err()
            .0
            .contains("--quiet-threshold"));
        assert!(parse(None, Some("off"), Some("5s")).is_err());
    }
}
