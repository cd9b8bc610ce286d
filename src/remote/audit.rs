//! One audit line per control session on stderr: when, from where, who (whether the peer proved
//! the token), what it asked for, and how it ended, so an operator can answer "who used this
//! server for what" from the log alone. `json` is one JSON object a line for collectors; `text`
//! the readable line. Anything the remote side chose (a model name, an unknown kind) reaches
//! the line escaped, so a client cannot forge lines or terminal control sequences.
use serde_json::json;
use std::time::{SystemTime, UNIX_EPOCH};

/// How the server writes its session lines (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

impl LogFormat {
    pub const NAMES: &'static str = "json, text";

    pub fn parse(text: &str) -> Option<LogFormat> {
        match text.trim() {
            "text" => Some(LogFormat::Text),
            "json" => Some(LogFormat::Json),
            _ => None,
        }
    }
}

/// A line of the server's own (start, limits, refusals before a session exists), in the same
/// format as the session lines, so a `json` log stays one JSON object a line.
pub fn note(format: LogFormat, text: &str) {
    match format {
        LogFormat::Json => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let time = crate::report::folder::iso_utc(now);
            eprintln!("{}", json!({ "time": time, "server": text }));
        }
        LogFormat::Text => eprintln!("bytepath server: {text}"),
    }
}

/// Who the peer of a session is, as far as this server knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// Proved it holds the server's token.
    TokenHolder,
    /// The server has no token: anyone who connects.
    Anonymous,
    /// Did not get as far as proving anything (refused at or before authentication).
    Unproven,
}

impl Identity {
    fn name(self) -> &'static str {
        match self {
            Identity::TokenHolder => "token holder",
            Identity::Anonymous => "anonymous (no token)",
            Identity::Unproven => "unproven",
        }
    }
}

/// One finished session, as the audit line reports it.
pub struct SessionAudit<'a> {
    pub session: u64,
    pub peer: &'a str,
    pub identity: Identity,
    /// The request's kind (`run`, `file_run`, `peer_run`, `servers_run`, `bye`), or `none`.
    pub asked: &'a str,
    /// `ok` or the refusal's code.
    pub result: &'a str,
    /// What ran and what it moved, or why it was refused, in the server's words.
    pub detail: &'a str,
}

impl SessionAudit<'_> {
    /// The line, without its newline, stamped `unix_s` (seconds since the epoch, UTC).
    pub fn line(&self, format: LogFormat, unix_s: u64) -> String {
        let time = crate::report::folder::iso_utc(unix_s);
        match format {
            LogFormat::Json => json!({
                "time": time,
                "session": self.session,
                "peer": self.peer,
                "identity": self.identity.name(),
                "asked": self.asked,
                "result": self.result,
                "detail": self.detail,
            })
            .to_string(),
            LogFormat::Text => format!(
                "{time} session {} from {}: {} asked {}: {}: {}",
                self.session,
                self.peer,
                self.identity.name(),
                self.asked.escape_debug(),
                self.result,
                self.detail.escape_debug()
            ),
        }
    }

    /// Writes the line to stderr, stamped now.
    pub fn log(&self, format: LogFormat) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        eprintln!("{}", self.line(format, now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audit<'a>(detail: &'a str) -> SessionAudit<'a> {
        SessionAudit {
            session: 7,
            peer: "192.0.2.1:40000",
            identity: Identity::TokenHolder,
            asked: "run",
            result: "ok",
            detail,
        }
    }

    #[test]
    fn a_json_line_is_one_object_with_every_field_and_escapes_what_the_peer_chose() {
        let line = audit("servers x\n{\"forged\":1}").line(LogFormat::Json, 0);
        assert_eq!(line.lines().count(), 1, "{line}");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["time"], "1970-01-01T00:00:00Z");
        assert_eq!(v["session"], 7);
        assert_eq!(v["peer"], "192.0.2.1:40000");
        assert_eq!(v["identity"], "token holder");
        assert_eq!(v["asked"], "run");
        assert_eq!(v["result"], "ok");
        assert_eq!(v["detail"], "servers x\n{\"forged\":1}");
    }

    #[test]
    fn a_text_line_escapes_control_characters() {
        let line = audit("model \u{1b}[2J\nsession 8: ok").line(LogFormat::Text, 0);
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(!line.contains('\u{1b}'), "{line}");
        assert!(line.starts_with("1970-01-01T00:00:00Z session 7 from 192.0.2.1:40000"));
    }

    #[test]
    fn formats_parse_by_name_only() {
        assert_eq!(LogFormat::parse("json"), Some(LogFormat::Json));
        assert_eq!(LogFormat::parse("text"), Some(LogFormat::Text));
        assert_eq!(LogFormat::parse("xml"), None);
    }
}
