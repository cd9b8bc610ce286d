//! `bytepath servers --connection` (clap only): whether each client keeps its connection or
//! opens one per request, or both in one study.
use clap::Args;

#[derive(Debug, Args, Default, serde::Serialize, serde::Deserialize)]
pub struct ConnectionArgs {
    /// persistent (each client keeps one connection for the whole point) or per-request (each
    /// client closes after every echo and connects again, so each request pays the handshake
    /// and the server model's accept path); `persistent,per-request` measures both as a point
    /// dimension, visited back to back in each round, and the report compares them (paired).
    #[arg(long, default_value = "persistent")]
    pub connection: String,
}

/// The connection modes asked for, in order, each once (`true`: per-request); one line naming
/// the value otherwise, or saying that `--requests-per-connection` (which ends a client)
/// cannot go with per-request.
pub fn modes(
    args: &ConnectionArgs,
    requests_per_connection: bool,
) -> Result<Vec<bool>, crate::error::ConfigError> {
    let mut out = Vec::new();
    for text in args.connection.split(',').map(str::trim) {
        let per_request = match text {
            "persistent" => false,
            "per-request" if requests_per_connection => return Err(crate::error::ConfigError(
                "--connection per-request with --requests-per-connection: per-request already opens a connection for every request; drop one of them".into(),
            )),
            "per-request" => true,
            other => {
                return Err(crate::error::ConfigError(format!(
                    "--connection {other:?}: allowed: persistent, per-request, or both comma-separated"
                )))
            }
        };
        if out.contains(&per_request) {
            return Err(crate::error::ConfigError(format!(
                "--connection {:?}: {text} is named twice; allowed: persistent, per-request, each once",
                args.connection
            )));
        }
        out.push(per_request);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, rpc: bool) -> Result<Vec<bool>, String> {
        let args = ConnectionArgs {
            connection: text.into(),
        };
        modes(&args, rpc).map_err(|e| e.0)
    }

    #[test]
    fn both_modes_in_the_order_given_and_each_once() {
        assert_eq!(parse("persistent", false), Ok(vec![false]));
        assert_eq!(
            parse("per-request,persistent", false),
            Ok(vec![true, false])
        );
        let e = parse("persistent,persistent", false).unwrap_err();
        assert!(e.contains("named twice"), "{e}");
        let e = parse("persistent,pooled", false).unwrap_err();
        assert!(e.starts_with("--connection \"pooled\": allowed"), "{e}");
        let e = parse("persistent,per-request", true).unwrap_err();
        assert!(e.contains("--requests-per-connection"), "{e}");
    }
}
