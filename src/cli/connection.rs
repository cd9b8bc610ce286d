//! `bytepath servers --connection` (clap only): whether each client keeps its connection or
//! opens one per request.
use clap::Args;

#[derive(Debug, Args, Default, serde::Serialize, serde::Deserialize)]
pub struct ConnectionArgs {
    /// persistent (each client keeps one connection for the whole point) or per-request (each
    /// client closes after every echo and connects again, so each request pays the handshake
    /// and the server model's accept path).
    #[arg(long, default_value = "persistent")]
    pub connection: String,
}

/// Whether clients connect per request; one line naming the value otherwise, or saying that
/// `--requests-per-connection` (which ends a client) cannot go with per-request.
pub fn per_request(
    args: &ConnectionArgs,
    requests_per_connection: bool,
) -> Result<bool, crate::error::ConfigError> {
    match args.connection.as_str() {
        "persistent" => Ok(false),
        "per-request" if requests_per_connection => Err(crate::error::ConfigError(
            "--connection per-request with --requests-per-connection: per-request already opens a connection for every request; drop one of them".into(),
        )),
        "per-request" => Ok(true),
        other => Err(crate::error::ConfigError(format!(
            "--connection {other:?}: allowed: persistent, per-request"
        ))),
    }
}
