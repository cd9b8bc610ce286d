//! The server's one line per session on stderr: text (escaped, so a client's bytes cannot forge
//! log lines or terminal sequences) or, with `--log-format json`, one JSON object, the audit
//! line: when, from where, who (the identity the handshake proved), and what came of it.
use crate::remote::escaped;
use crate::remote::protocol::ErrorCode;

pub(super) struct SessionLine<'a> {
    pub(super) id: u64,
    pub(super) peer: &'a str,
    /// "token" once the handshake proved it, "none (--insecure)", or `None` (not authenticated).
    pub(super) identity: Option<&'static str>,
    /// The refusal's code, `None` when the session ended as it should.
    pub(super) code: Option<ErrorCode>,
    /// What was asked and what ran (its figures' bytes where a run moved any), or why not.
    pub(super) detail: &'a str,
}

impl SessionLine<'_> {
    pub(super) fn render(&self, json: bool) -> String {
        if json {
            let time_unix_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            return serde_json::json!({
                "time_unix_ms": time_unix_ms,
                "session": self.id,
                "peer": self.peer,
                "identity": self.identity,
                "result": if self.code.is_some() { "refused" } else { "ok" },
                "code": self.code,
                "detail": self.detail,
            })
            .to_string();
        }
        let detail = match self.code {
            Some(code) => format!("refused ({code:?}): {}", self.detail),
            None => self.detail.to_string(),
        };
        format!(
            "session {} from {}: {}",
            self.id,
            self.peer,
            escaped(&detail)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_line_holds_every_field_and_text_is_escaped() {
        let line = SessionLine {
            id: 7,
            peer: "192.0.2.1:4000",
            identity: Some("token"),
            code: Some(ErrorCode::Limit),
            detail: "asked \u{1b}[2J\nforged line",
        };
        let v: serde_json::Value = serde_json::from_str(&line.render(true)).unwrap();
        assert_eq!(v["session"], 7);
        assert_eq!(v["peer"], "192.0.2.1:4000");
        assert_eq!(v["identity"], "token");
        assert_eq!(v["result"], "refused");
        assert_eq!(v["code"], "limit");
        assert_eq!(v["detail"], "asked \u{1b}[2J\nforged line");
        assert!(v["time_unix_ms"].as_u64().unwrap() > 1_600_000_000_000);
        let text = line.render(false);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.starts_with("session 7 from 192.0.2.1:4000: refused (Limit): "));
    }
}
