//! `--log-format`: how `bytepath server` writes its audit line per session.
use clap::Args;

#[derive(Debug, Args)]
pub struct LogFormatArgs {
    /// How each session's audit line on stderr is written: text (readable) or json (one
    /// object a line: time, peer, identity, asked, result, detail).
    #[arg(long, default_value = "text")]
    pub log_format: String,
}
