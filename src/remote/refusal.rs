//! A refusal: what a server session answers a peer it will not serve, as an error frame before
//! closing. In a file of its own, the vocabulary every server-side file shares (the sessions,
//! the udp join), so none of them has to import another's session code for it.
use super::protocol::{ErrorCode, FrameError, Message};

/// A refusal: sent to the client as an error frame, logged, and the connection closed.
pub(in crate::remote) struct Refusal {
    pub(in crate::remote) code: ErrorCode,
    pub(in crate::remote) message: String,
}

pub(in crate::remote) fn refuse(code: ErrorCode, message: impl Into<String>) -> Refusal {
    Refusal {
        code,
        message: message.into(),
    }
}

impl From<FrameError> for Refusal {
    fn from(e: FrameError) -> Refusal {
        refuse(e.code(), e.to_string())
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
