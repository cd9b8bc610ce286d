//! A session's shared vocabulary on the server's side: a refusal (an error frame for the
//! client, a line for the log) and the three steps every request handler takes (send a
//! message, expect the next one, refuse one out of order). Its own file so the files that
//! serve requests (`server` and its session files, `udp`) need not import one another.
use super::channel::ControlStream;
use super::protocol::{self, ErrorCode, FrameError, Message};

/// A refusal: sent to the client as an error frame, logged, and the connection closed.
pub(in crate::remote) struct Refusal {
    pub(in crate::remote) code: ErrorCode,
    pub(in crate::remote) message: String,
    /// What the log says instead of `message`, when the client is told less than the log.
    pub(in crate::remote) logged: Option<String>,
}

pub(in crate::remote) fn refuse(code: ErrorCode, message: impl Into<String>) -> Refusal {
    Refusal {
        code,
        message: message.into(),
        logged: None,
    }
}

impl From<FrameError> for Refusal {
    fn from(e: FrameError) -> Refusal {
        refuse(e.code(), e.to_string())
    }
}

pub(in crate::remote) fn send(
    stream: &mut ControlStream,
    message: &Message,
) -> Result<(), Refusal> {
    protocol::write_message(stream, message).map_err(|e| {
        refuse(
            ErrorCode::Failed,
            format!("sending {}: {e}", message.kind()),
        )
    })
}

pub(in crate::remote) fn expect(
    stream: &mut ControlStream,
    expecting: &str,
) -> Result<Message, Refusal> {
    match protocol::read_message(stream) {
        Ok(m) => Ok(m),
        Err(FrameError::Idle) => Err(refuse(
            ErrorCode::Timeout,
            format!("no {expecting} arrived within the server's timeout"),
        )),
        Err(e) => Err(e.into()),
    }
}

pub(in crate::remote) fn out_of_order(expecting: &str, got: &Message) -> Refusal {
    refuse(
        ErrorCode::OutOfOrder,
        format!(
            "expected a {expecting} message, got a {} message",
            got.kind()
        ),
    )
}
