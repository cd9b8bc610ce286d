//! Why a peer's message was refused: the codes of `Error` frames, in a file of their own so
//! that the framing (which names the code of each framing failure) and the protocol (which
//! owns the messages) both use them without importing each other.

/// Why a peer's message was refused; sent in an `Error` frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    Version,
    Auth,
    /// The run asks for more than the server's limits allow.
    Limit,
    /// The run is not one this server can do (unknown mechanism, bad size …).
    Refused,
    Malformed,
    Oversized,
    OutOfOrder,
    Truncated,
    Timeout,
    /// The server's side failed to set up or run.
    Failed,
    /// A peer run toward an address outside the server's `--allow-peers` (or a server started
    /// without it): the server is not a traffic reflector for whoever holds the token.
    Forbidden,
}
