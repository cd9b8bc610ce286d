//! `--health-port`: plain HTTP `GET /healthz` answered with the server's state, for
//! liveness and readiness probes that must not take a control slot nor log a refused session
//! every few seconds. Anyone who can reach the port may ask, so the endpoint is built for a
//! hostile client: each connection is answered on a thread of its own, so a silent one delays
//! no probe; at most `AT_ONCE` are held, `PER_SOURCE` from one source, and a newcomer evicts
//! the oldest rather than wait (`pool`); a read of at most `MAX_REQUEST` bytes under one
//! overall deadline, a tiny fixed response, and nothing the client sent is echoed or logged.
use super::pool::{Place, Pool, Source};
use super::{shutdown, State};
use crate::error::Error;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most a request may be; a probe's is about 100 bytes.
const MAX_REQUEST: usize = 1024;
/// The whole exchange's deadline: a client that trickles holds the endpoint this long at most.
const DEADLINE: Duration = Duration::from_secs(1);
/// Connections answered at once. A probe takes well under a millisecond, so more than a few at
/// once are strangers; this bounds the threads they cost.
const AT_ONCE: usize = 16;
/// From one source at once: a kubelet's readiness and liveness probes may overlap.
const PER_SOURCE: usize = 2;

/// Binds the health port (on --bind) and serves it on a thread of its own, when asked for.
pub(super) fn start(state: &Arc<State>) -> Result<(), Error> {
    let Some(port) = state.config.health_port else {
        return Ok(());
    };
    let bind = state.config.bind;
    let listener = TcpListener::bind((bind, port)).map_err(|e| {
        Error::Failed(format!(
            "--bind {bind} --health-port {port}: cannot listen: {e}"
        ))
    })?;
    let state = state.clone();
    let held = Arc::new(Pool::new(AT_ONCE, PER_SOURCE));
    std::thread::Builder::new()
        .name("bytepath-health".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                take(stream, &state, &held);
            }
        })
        .map_err(Error::Setup)?;
    Ok(())
}

/// A new connection: its place among those held (evicting the oldest when need be), then a
/// thread that answers it; dropped when it has no address or no thread can start.
fn take(stream: TcpStream, state: &Arc<State>, held: &Arc<Pool>) {
    let Ok(peer) = stream.peer_addr() else {
        return;
    };
    let Ok(place) = held.hold(Source::of(peer.ip()), &stream) else {
        return;
    };
    let state = state.clone();
    // The place moves into the thread: let go of when it ends, or with the closure unrun.
    let _ = std::thread::Builder::new()
        .name("bytepath-probe".into())
        .spawn(move || answer(stream, &state, place));
}

/// The server's state as the probe sees it: the status line and a one-line JSON body.
fn state_of(state: &State) -> (&'static str, String) {
    let ending = shutdown::stopping();
    let running = state.busy.load(Ordering::Acquire);
    let sessions = state.open.load(Ordering::Acquire);
    let (status, word) = match (ending, running) {
        (true, _) => ("503 Service Unavailable", "ending"),
        (false, true) => ("200 OK", "running"),
        (false, false) => ("200 OK", "idle"),
    };
    let body = format!("{{\"state\":\"{word}\",\"sessions\":{sessions}}}\n");
    (status, body)
}

fn answer(mut stream: TcpStream, state: &State, _place: Place) {
    let until = Instant::now() + DEADLINE;
    let Some(request) = read_head(&stream, until) else {
        return;
    };
    let (status, body) = if is_healthz(&request) {
        state_of(state)
    } else {
        ("404 Not Found", "only GET /healthz is served here\n".into())
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.set_write_timeout(Some(DEADLINE));
    let _ = stream.write_all(response.as_bytes());
}

/// The request's head (up to the blank line), read under the deadline and the size bound;
/// `None` when the client is too slow, sends too much, or leaves.
fn read_head(mut stream: &TcpStream, until: Instant) -> Option<Vec<u8>> {
    let mut head = Vec::with_capacity(256);
    let mut piece = [0u8; 256];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let left = until.checked_duration_since(Instant::now())?;
        stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        let n = stream.read(&mut piece).ok().filter(|&n| n > 0)?;
        head.extend_from_slice(&piece[..n]);
        if head.len() > MAX_REQUEST {
            return None;
        }
    }
    Some(head)
}

/// `GET /healthz` (or with a query), any HTTP/1.x version.
fn is_healthz(head: &[u8]) -> bool {
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut words = line.split(|&b| b == b' ');
    let (method, target) = (words.next(), words.next());
    let path = target.map(|t| t.split(|&b| b == b'?').next().unwrap_or_default());
    method == Some(b"GET".as_slice()) && path == Some(b"/healthz".as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_healthz_is_healthz() {
        assert!(is_healthz(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(is_healthz(b"GET /healthz?verbose=1 HTTP/1.0\r\n\r\n"));
        assert!(!is_healthz(b"POST /healthz HTTP/1.1\r\n\r\n"));
        assert!(!is_healthz(b"GET /healthzz HTTP/1.1\r\n\r\n"));
        assert!(!is_healthz(b"GET / HTTP/1.1\r\n\r\n"));
        assert!(!is_healthz(b"\r\n\r\n"));
    }
}
