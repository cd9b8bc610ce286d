//! The server's one line per session on stderr: text (escaped, so a client's bytes cannot forge
//! log lines or terminal sequences) or, with `--log-format json`, one JSON object, the audit
//! line: when, from where, who (the identity the handshake proved: the driver's key by name
//! and fingerprint, or the token), and what came of it.
use crate::config::remote::KEY_BYTES;
use crate::remote::escaped;
use crate::remote::identity::{describe, fingerprint, ServerIdentity};
use crate::remote::protocol::{ErrorCode, Message, RunRequest};

/// What a session that was not refused did: what ran here, the bytes it moved, and the
/// session's own words on it.
pub(in crate::remote) struct Served {
    /// What ran on this server (after its limits), `None` when nothing did (busy, a check).
    pub(in crate::remote) ran: Option<String>,
    /// The bytes the run moved, both directions together, `None` where not counted.
    pub(in crate::remote) bytes: Option<u64>,
    pub(in crate::remote) detail: String,
}

/// A session's words alone: nothing ran, no bytes counted.
impl From<String> for Served {
    fn from(detail: String) -> Served {
        Served {
            ran: None,
            bytes: None,
            detail,
        }
    }
}

impl From<&str> for Served {
    fn from(detail: &str) -> Served {
        Served::from(detail.to_string())
    }
}

pub(super) struct SessionLine<'a> {
    pub(super) id: u64,
    pub(super) peer: &'a str,
    /// Who the handshake proved (`identity`): the driver's key, "token", "none (--insecure)",
    /// or `None` (not authenticated).
    pub(super) identity: Option<&'a str>,
    /// What the client asked for (its request, as it sent it), `None` before a request.
    pub(super) asked: Option<&'a str>,
    /// What ran here, `None` when nothing did.
    pub(super) ran: Option<&'a str>,
    /// The bytes the run moved, both directions together, `None` where nothing was counted.
    pub(super) bytes: Option<u64>,
    /// The refusal's code, `None` when the session ended as it should.
    pub(super) code: Option<ErrorCode>,
    /// The session's words on how it went, or why it was refused.
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
                "asked": self.asked,
                "ran": self.ran,
                "bytes": self.bytes,
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
        let mut fields = String::new();
        if let Some(identity) = self.identity {
            fields.push_str(&format!(" identity={identity:?}"));
        }
        if let Some(asked) = self.asked {
            // Debug form: quotes and control characters escaped, so no field can be forged.
            fields.push_str(&format!(" asked={asked:?}"));
        }
        if let Some(ran) = self.ran {
            fields.push_str(&format!(" ran={ran:?}"));
        }
        if let Some(bytes) = self.bytes {
            fields.push_str(&format!(" bytes={bytes}"));
        }
        format!(
            "session {} from {}: {}{fields}",
            self.id,
            self.peer,
            escaped(&detail)
        )
    }
}

/// Who the handshake proved, for the audit line: under Noise IK the driver's key, by its name
/// in `--authorized-drivers` and its fingerprint (with "and token" when the token was proved
/// too); "token" for a handshake keyed by the token alone.
pub(super) fn identity(
    driver: Option<[u8; KEY_BYTES]>,
    server: Option<&ServerIdentity>,
    token: bool,
) -> String {
    let Some(key) = driver else {
        return "token".into();
    };
    let named = server.and_then(|i| i.driver(&key));
    // The handshake refuses keys outside the list, so an unnamed key is only a fallback.
    let key = named.map_or_else(|| format!("key {}", fingerprint(&key)), describe);
    match token {
        true => format!("{key} and token"),
        false => key,
    }
}

/// What a request asks for, in the client's own terms (before this server's limits).
pub(super) fn asked(message: &Message) -> String {
    let run = |r: &RunRequest| {
        format!(
            "{} {}{} {} B x{} {} for {} ms",
            r.transport,
            r.pattern,
            if r.reverse { " reverse" } else { "" },
            r.message_size,
            r.threads,
            r.mechanism,
            r.duration_ms
        )
    };
    match message {
        Message::Run { request } => format!("run {}", run(request)),
        Message::Bye => "check (hello only)".into(),
        Message::FileRun { request: r } => {
            format!("file {} B {} {} cache", r.size, r.mechanism, r.cache)
        }
        Message::PeerRun { peer, request, .. } => {
            format!("peer run toward {peer}: {}", run(request))
        }
        Message::ServersRun {
            model,
            size,
            server_threads,
            clients,
            ..
        } => format!("servers {model} {size} B x{server_threads} threads, {clients} clients"),
        other => other.kind().to_string(),
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
            asked: Some("run tcp stream 4096 B x1\nforged"),
            ran: None,
            bytes: None,
            code: Some(ErrorCode::Limit),
            detail: "asked \u{1b}[2J\nforged line",
        };
        let v: serde_json::Value = serde_json::from_str(&line.render(true)).unwrap();
        assert_eq!(v["session"], 7);
        assert_eq!(v["peer"], "192.0.2.1:4000");
        assert_eq!(v["identity"], "token");
        assert_eq!(v["result"], "refused");
        assert_eq!(v["code"], "limit");
        assert_eq!(v["asked"], "run tcp stream 4096 B x1\nforged");
        assert_eq!((v["ran"].is_null(), v["bytes"].is_null()), (true, true));
        assert_eq!(v["detail"], "asked \u{1b}[2J\nforged line");
        assert!(v["time_unix_ms"].as_u64().unwrap() > 1_600_000_000_000);
        let text = line.render(false);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.starts_with("session 7 from 192.0.2.1:4000: refused (Limit): "));
        assert!(
            text.ends_with(" asked=\"run tcp stream 4096 B x1\\nforged\""),
            "{text}"
        );
    }
}

#[cfg(test)]
mod identity_tests {
    use super::*;
    use crate::config::remote::NamedKey;

    #[test]
    fn the_identity_names_the_drivers_key_by_its_name_and_fingerprint() {
        let server = ServerIdentity {
            keys: crate::remote::identity::generate().unwrap(),
            authorized_drivers: vec![NamedKey {
                key: [0xab; 32],
                name: "laptop of ana".into(),
            }],
        };
        let named = identity(Some([0xab; 32]), Some(&server), false);
        assert_eq!(named, "key laptop of ana (abababababababab)");
        let both = identity(Some([0xab; 32]), Some(&server), true);
        assert_eq!(both, "key laptop of ana (abababababababab) and token");
        assert_eq!(identity(None, None, true), "token");
        let line = SessionLine {
            id: 1,
            peer: "127.0.0.1:9",
            identity: Some(&named),
            asked: Some("check (hello only)"),
            ran: None,
            bytes: None,
            code: None,
            detail: "checked",
        };
        let text = line.render(false);
        assert!(
            text.contains(" identity=\"key laptop of ana (abababababababab)\" asked="),
            "{text}"
        );
    }
}

#[cfg(test)]
mod served_tests {
    use super::*;

    #[test]
    fn a_run_line_names_what_ran_and_its_bytes_in_both_forms() {
        let line = SessionLine {
            id: 3,
            peer: "[::1]:5000",
            identity: Some("token"),
            asked: Some("run tcp rr 4096 B x2 send for 1000 ms"),
            ran: Some("tcp rr 4096 B x2 send for 1000 ms"),
            bytes: Some(123_456),
            code: None,
            detail: "done",
        };
        let v: serde_json::Value = serde_json::from_str(&line.render(true)).unwrap();
        assert_eq!(v["ran"], "tcp rr 4096 B x2 send for 1000 ms");
        assert_eq!(v["bytes"], 123_456);
        assert_eq!(v["result"], "ok");
        let text = line.render(false);
        assert!(
            text.contains(" ran=\"tcp rr 4096 B x2 send for 1000 ms\" bytes=123456"),
            "{text}"
        );
    }
}
