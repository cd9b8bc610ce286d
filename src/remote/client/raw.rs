//! A control session opened by hand, for tools that then speak the protocol frame by frame
//! (tests, `examples/hostile_*`): the hellos, the handshake keyed by the token, and the
//! server's system frame that follows it. The client's own sessions go through `hello`.
use crate::remote::channel::{self, ControlStream};
use crate::remote::protocol::{self, Message, VERSION};
use std::net::TcpStream;
use std::time::Duration;

/// An authenticated session with the server at `address`, and the server's system; every read
/// bounded by `timeout`. `Err` says which step failed (a `busy` hello, a wrong token …).
pub fn token_session(
    address: &str,
    token: &[u8],
    timeout: Duration,
) -> Result<(ControlStream, String), String> {
    let tcp = TcpStream::connect(address).map_err(|e| format!("connecting: {e}"))?;
    let mut s = ControlStream::plain(tcp);
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let hello = protocol::encode(&Message::ClientHello {
        version: VERSION,
        capabilities: vec![],
    })
    .map_err(|e| e.to_string())?;
    protocol::write_frame(&mut s, &hello).map_err(|e| format!("its hello: {e}"))?;
    let answer = protocol::read_frame(&mut s).map_err(|e| format!("its hello: {e}"))?;
    if let Ok(Message::Busy { message }) = protocol::parse(&answer) {
        return Err(format!("turned away at its hello: {message}"));
    }
    s.client_handshake(token, &channel::prologue(&hello, &answer))
        .map_err(|e| format!("handshake: {e}"))?;
    match protocol::read_message(&mut s).map_err(|e| format!("its system: {e}"))? {
        Message::System { system } => Ok((s, system)),
        other => Err(format!("a {} message instead of its system", other.kind())),
    }
}
