//! `bytepath server --log-format`: how the server writes its one line per session.
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// `session N from ADDR: what happened`, escaped.
    #[default]
    Text,
    /// One JSON object a line: time, session, peer, identity, result, code, detail.
    Json,
}

#[derive(Debug, Args)]
pub struct LogFormatArgs {
    /// The session log on stderr: text lines, or one JSON object per session (an audit line).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}
