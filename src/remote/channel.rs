//! The control channel (protocol version 4): after the plaintext hellos, a Noise handshake
//! (`Noise_NNpsk0_25519_ChaChaPoly_SHA256`) keyed by the shared token, then every control
//! byte in ChaCha20-Poly1305 records. Both ends prove the token (the client's first message
//! only decrypts with it, the server's answer only with it and the client's fresh ephemeral
//! key), the session keys come from a fresh X25519 exchange (nobody on the path can read,
//! inject, reorder or replay a frame), and both hellos are the handshake's prologue (a hello
//! altered on the way fails the handshake). A relayed handshake gives the relay nothing: it
//! holds neither ephemeral key, and a recorded client message replayed fails on any other
//! connection (the server's hello holds fresh random bytes). With identities per host
//! (`identity`) the handshake is Noise IK instead (IKpsk1 with the token too): each end also
//! proves its static key, and the server judges the driver's before it answers. Every read is
//! bounded: until the session is authenticated by the server's deadline in all, after that
//! each frame and each record begun by a limit of its own, so no peer holds a session by
//! trickling bytes. `ControlStream` is the control connection either way; with `--insecure` it
//! is the bare TCP stream.
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::frame::{FrameSource, FRAME_PATIENCE};

mod handshake;
pub use handshake::{
    prologue, HandshakeError, Proof, Refusal, IDENTITY_PARAMS, IDENTITY_TOKEN_PARAMS, NOISE_PARAMS,
};

/// Noise's limit on one message, tag included.
const MAX_RECORD: usize = 65535;
/// The AEAD tag every record carries.
const TAG: usize = 16;

/// The control connection: the TCP stream, and its Noise transport once the handshake is done.
/// Derefs to the TCP stream for its settings and addresses (timeouts, `peer_addr`, shutdown);
/// reads and writes go through the channel. Not `DerefMut`, so no `&mut TcpStream` can be had
/// from it by accident and bypass the encryption.
pub struct ControlStream {
    tcp: TcpStream,
    secure: Option<Arc<Secure>>,
    /// While set (the server's hellos, handshake and first request), every read is bounded by
    /// it in all: no peer can keep the connection by trickling bytes.
    deadline: Option<Instant>,
    /// How long a frame, or a record, may take in all once its first byte arrived (the
    /// server's `--timeout`; `FRAME_PATIENCE` unless told): a peer trickling one byte every
    /// few seconds cannot hold a session inside one.
    whole: Duration,
    /// The frame being read must be whole by then (set by `read_frame` once it began).
    frame_until: Option<Instant>,
}

struct Secure {
    transport: snow::StatelessTransportState,
    /// The next outgoing record's nonce; held while a record set is written, so the records
    /// of two writers never interleave.
    send: Mutex<u64>,
    incoming: Mutex<Incoming>,
}

#[derive(Default)]
struct Incoming {
    nonce: u64,
    /// The record being read: its 2-byte length and as much of its ciphertext as arrived (a
    /// read timeout inside a record keeps it, so the next read goes on where this one stopped).
    record: Vec<u8>,
    /// When the record's first byte arrived: the rest must follow within `whole`.
    began: Option<Instant>,
    plain: Vec<u8>,
    at: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Which bound ended a read.
#[derive(Clone, Copy)]
enum Limit {
    Deadline,
    Frame,
    Record,
}

impl Limit {
    /// The error a read past this limit ends with. The session's deadline reads as a timeout
    /// (before a frame begins, the session is refused as one); a frame's or record's is no
    /// timeout a reader may wait through: the frame is cut there.
    fn passed(self, whole: Duration) -> io::Error {
        let within = |what: &str| {
            format!(
                "{what} begun was not whole within {} ms (bytes trickled in too slowly)",
                whole.as_millis()
            )
        };
        match self {
            Limit::Deadline => io::Error::new(
                io::ErrorKind::TimedOut,
                "the hellos, handshake and first request took longer than their deadline",
            ),
            Limit::Frame => io::Error::other(within("a frame")),
            Limit::Record => io::Error::other(within("a control record")),
        }
    }
}

impl ControlStream {
    /// The bare stream: `--insecure`, and the plaintext hellos before the handshake.
    pub fn plain(tcp: TcpStream) -> ControlStream {
        ControlStream {
            tcp,
            secure: None,
            deadline: None,
            whole: FRAME_PATIENCE,
            frame_until: None,
        }
    }

    /// Bounds every read until `deadline` in all (or no more, with `None`, which also sets the
    /// read timeout back to `timeout`); either way a frame or record begun must be whole
    /// within `timeout`.
    pub fn set_deadline(&mut self, deadline: Option<Instant>, timeout: Duration) -> io::Result<()> {
        self.deadline = deadline;
        self.whole = timeout;
        match deadline {
            Some(_) => Ok(()),
            None => self.tcp.set_read_timeout(Some(timeout)),
        }
    }

    /// The earliest instant the next read must end by, and which limit it is: the session's
    /// deadline, the frame's, or the record's begun at `record_began`.
    fn bound(&self, record_began: Option<Instant>) -> Option<(Instant, Limit)> {
        [
            self.deadline.map(|t| (t, Limit::Deadline)),
            self.frame_until.map(|t| (t, Limit::Frame)),
            record_began.map(|t| (t + self.whole, Limit::Record)),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|&(t, _)| t)
    }

    /// One read of the TCP stream, within the deadline and the frame's and record's limits.
    /// The caller's read timeout is kept: a shorter one is set for this read only.
    fn read_tcp(&self, buf: &mut [u8], record_began: Option<Instant>) -> io::Result<usize> {
        let Some((until, limit)) = self.bound(record_began) else {
            return (&self.tcp).read(buf);
        };
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(limit.passed(self.whole));
        }
        let caller = self.tcp.read_timeout()?;
        if caller.is_some_and(|c| c <= left) {
            return (&self.tcp).read(buf);
        }
        self.tcp.set_read_timeout(Some(left))?;
        let read = (&self.tcp).read(buf);
        self.tcp.set_read_timeout(caller)?;
        match read {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() >= until => {
                Err(limit.passed(self.whole))
            }
            other => other,
        }
    }

    pub fn is_secure(&self) -> bool {
        self.secure.is_some()
    }

    /// A second handle on the same channel (one thread reads, another writes).
    pub fn try_clone(&self) -> io::Result<ControlStream> {
        Ok(ControlStream {
            tcp: self.tcp.try_clone()?,
            secure: self.secure.clone(),
            deadline: self.deadline,
            whole: self.whole,
            frame_until: None,
        })
    }
}

impl Deref for ControlStream {
    type Target = TcpStream;
    fn deref(&self) -> &TcpStream {
        &self.tcp
    }
}

fn tampered() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "a control record failed its integrity check: altered on the way, or not sent by the peer of this handshake",
    )
}

impl ControlStream {
    /// Reads the rest of one record into `incoming.record`; `Ok(false)` on a clean end of the
    /// connection between records. Every read is bounded (`read_tcp`): by the deadline, the
    /// frame's limit, and once the record's first byte arrived by the record's own. A read
    /// timeout inside a record keeps what arrived, so the next call goes on from there.
    fn fill_record(&self, incoming: &mut Incoming) -> io::Result<bool> {
        loop {
            let record = &mut incoming.record;
            let need = match record.len() {
                0 | 1 => 2,
                _ => 2 + u16::from_be_bytes([record[0], record[1]]) as usize,
            };
            if need > 2 && need < 2 + TAG {
                return Err(tampered());
            }
            if record.len() == need && need > 2 {
                return Ok(true);
            }
            let old = record.len();
            record.resize(need, 0);
            match self.read_tcp(&mut record[old..], incoming.began) {
                Ok(0) => {
                    record.truncate(old);
                    return match old {
                        0 => Ok(false),
                        _ => Err(io::ErrorKind::UnexpectedEof.into()),
                    };
                }
                Ok(n) => {
                    record.truncate(old + n);
                    incoming.began.get_or_insert_with(Instant::now);
                }
                Err(e) => {
                    record.truncate(old);
                    return Err(e);
                }
            }
        }
    }
}

impl Read for ControlStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(secure) = &self.secure else {
            return self.read_tcp(buf, None);
        };
        let mut guard = lock(&secure.incoming);
        let incoming = &mut *guard;
        while incoming.at == incoming.plain.len() {
            if !self.fill_record(incoming)? {
                return Ok(0);
            }
            incoming.plain.resize(incoming.record.len() - 2, 0);
            let n = secure
                .transport
                .read_message(incoming.nonce, &incoming.record[2..], &mut incoming.plain)
                .map_err(|_| tampered())?;
            incoming.plain.truncate(n);
            incoming.nonce += 1;
            incoming.at = 0;
            incoming.record.clear();
            incoming.began = None;
        }
        let n = buf.len().min(incoming.plain.len() - incoming.at);
        buf[..n].copy_from_slice(&incoming.plain[incoming.at..incoming.at + n]);
        incoming.at += n;
        Ok(n)
    }
}

/// A frame begun on the control connection must be whole within `whole`: every read until
/// then is bounded by it, however the bytes trickle.
impl FrameSource for ControlStream {
    fn frame_began(&mut self) -> Instant {
        let until = Instant::now() + self.whole;
        self.frame_until = Some(until);
        until
    }

    fn frame_ended(&mut self) {
        self.frame_until = None;
    }
}

impl Write for ControlStream {
    /// Takes all of `buf` as one or more records, written with one call.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(secure) = &self.secure else {
            return (&self.tcp).write(buf);
        };
        let mut nonce = lock(&secure.send);
        let chunks = buf.chunks(MAX_RECORD - TAG);
        let mut out = Vec::with_capacity(buf.len() + chunks.len() * (2 + TAG));
        let mut sealed = vec![0u8; MAX_RECORD];
        for chunk in chunks {
            let n = secure
                .transport
                .write_message(*nonce, chunk, &mut sealed)
                .map_err(io::Error::other)?;
            *nonce += 1;
            out.extend_from_slice(&(n as u16).to_be_bytes());
            out.extend_from_slice(&sealed[..n]);
        }
        (&self.tcp).write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        (&self.tcp).flush()
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame::FrameError;
    use super::*;
    use crate::config::remote::{KeyPair, KEY_BYTES};
    use std::net::TcpListener;

    fn pair(
        client_token: &'static [u8],
        server_token: &'static [u8],
    ) -> (
        Result<ControlStream, HandshakeError>,
        Result<ControlStream, HandshakeError>,
    ) {
        pair_via(client_token, server_token, |addr| addr)
    }

    /// Like `pair`, the client connecting to the address `via` makes of the server's.
    fn pair_via(
        client_token: &'static [u8],
        server_token: &'static [u8],
        via: impl FnOnce(std::net::SocketAddr) -> std::net::SocketAddr,
    ) -> (
        Result<ControlStream, HandshakeError>,
        Result<ControlStream, HandshakeError>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = via(listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut s = ControlStream::plain(s);
            s.server_handshake(server_token, b"hellos").map(|()| s)
        });
        let mut c = ControlStream::plain(TcpStream::connect(addr).unwrap());
        let client = c.client_handshake(client_token, b"hellos").map(|()| c);
        (client, server.join().unwrap())
    }

    const TOKEN: &[u8] = b"0123456789abcdef0123456789abcdef";

    /// A secure pair whose server reads with `read_timeout` and bounds frames and records by
    /// `whole` (and, with `deadline`, every read by it).
    fn secure_pair(
        deadline: Option<Duration>,
        whole: Duration,
        read_timeout: Duration,
    ) -> (ControlStream, ControlStream) {
        let (client, server) = pair(TOKEN, TOKEN);
        let mut server = server.unwrap();
        let deadline = deadline.map(|d| Instant::now() + d);
        server.set_deadline(deadline, whole).unwrap();
        server.set_read_timeout(Some(read_timeout)).unwrap();
        (client.unwrap(), server)
    }

    /// Writes `bytes` one at a time, `every` apart, as raw TCP (under the encryption) or, with
    /// `records`, each as a record of its own; stops quietly once the other side has gone.
    fn trickle(client: ControlStream, bytes: Vec<u8>, every: Duration, records: bool) {
        std::thread::spawn(move || {
            let mut client = client;
            for b in bytes {
                let sent = match records {
                    true => client.write_all(&[b]),
                    false => (&*client).write_all(&[b]),
                };
                if sent.is_err() {
                    return;
                }
                std::thread::sleep(every);
            }
        });
    }

    #[test]
    fn a_record_trickled_before_authentication_ends_at_the_deadline() {
        // Only the deadline can end it: the record's own limit and each read's timeout are
        // far longer than a byte's interval.
        let limit = Duration::from_secs(30);
        let (client, mut server) = secure_pair(Some(Duration::from_millis(400)), limit, limit);
        let mut record = vec![0, 64];
        record.extend_from_slice(&[0x5a; 64]);
        trickle(client, record, Duration::from_millis(100), false);
        let started = Instant::now();
        let err = super::super::frame::read_frame(&mut server).unwrap_err();
        let took = started.elapsed();
        // 66 bytes at 100 ms would take 6.6 s; the deadline ends it at 400 ms.
        assert!(took < Duration::from_millis(1500), "{took:?} ({err})");
        assert!(matches!(err, FrameError::Idle), "{err}");
    }

    #[test]
    fn a_record_begun_after_authentication_must_be_whole_within_the_limit() {
        // No deadline, and a read timeout (5 s) far above a byte's interval: only the
        // record's limit (400 ms) can end it.
        let (client, mut server) =
            secure_pair(None, Duration::from_millis(400), Duration::from_secs(5));
        let mut record = vec![0, 64];
        record.extend_from_slice(&[0x5a; 64]);
        trickle(client, record, Duration::from_millis(100), false);
        let started = Instant::now();
        let err = super::super::frame::read_frame(&mut server).unwrap_err();
        let took = started.elapsed();
        assert!(took < Duration::from_millis(1500), "{took:?} ({err})");
        assert!(
            err.to_string()
                .contains("a control record begun was not whole within 400 ms"),
            "{err}"
        );
    }

    #[test]
    fn a_frame_trickled_as_whole_records_must_be_whole_within_the_limit() {
        // Each record is whole and on time; the frame they carry (40 bytes at 100 ms a byte,
        // 4 s in all) is not whole within 400 ms.
        let (client, mut server) =
            secure_pair(None, Duration::from_millis(400), Duration::from_secs(5));
        let mut frame = 36u32.to_be_bytes().to_vec();
        frame.extend_from_slice(&[b' '; 36]);
        trickle(client, frame, Duration::from_millis(100), true);
        let started = Instant::now();
        let err = super::super::frame::read_frame(&mut server).unwrap_err();
        let took = started.elapsed();
        assert!(took < Duration::from_millis(1500), "{took:?} ({err})");
        assert!(matches!(err, FrameError::Truncated { .. }), "{err}");
    }

    /// Forwards one connection to `to`, the client's bytes paused for `pause` once `split` of
    /// them have passed; returns the address to connect to.
    fn pausing_relay(
        to: std::net::SocketAddr,
        split: usize,
        pause: Duration,
    ) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut client, _) = listener.accept().unwrap();
            let mut server = TcpStream::connect(to).unwrap();
            let (mut back_from, mut back_to) =
                (server.try_clone().unwrap(), client.try_clone().unwrap());
            std::thread::spawn(move || std::io::copy(&mut back_from, &mut back_to));
            let mut passed = 0;
            let mut buf = [0u8; 1];
            while client.read_exact(&mut buf).is_ok() {
                if passed == split {
                    std::thread::sleep(pause);
                }
                passed += 1;
                if server.write_all(&buf).is_err() {
                    return;
                }
            }
        });
        addr
    }

    #[test]
    fn a_poll_timeout_inside_a_record_keeps_what_arrived() {
        // The client's first handshake message is a 52-byte frame (ephemeral key and tag);
        // the relay then passes 10 bytes of the first record and holds the rest for 300 ms.
        let (client, server) = pair_via(TOKEN, TOKEN, |addr| {
            pausing_relay(addr, 52 + 10, Duration::from_millis(300))
        });
        let (mut client, mut server) = (client.unwrap(), server.unwrap());
        server.set_deadline(None, Duration::from_secs(5)).unwrap();
        server
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let body = b"{\"type\":\"go\"}".to_vec();
        super::super::frame::write_frame(&mut client, &body).unwrap();
        let mut idle = 0;
        let got = loop {
            match super::super::frame::read_frame(&mut server) {
                Err(FrameError::Idle) if idle < 100 => idle += 1,
                other => break other,
            }
        };
        assert_eq!(got.unwrap(), body);
        assert!(
            idle >= 2,
            "the relay's pause was waited through as polls ({idle})"
        );
    }

    #[test]
    fn bytes_cross_the_channel_whole_both_ways_and_in_large_writes() {
        let (client, server) = pair(TOKEN, TOKEN);
        let (mut client, mut server) = (client.unwrap(), server.unwrap());
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let sent = big.clone();
        let writer = std::thread::spawn(move || client.write_all(&sent).map(|()| client));
        let mut got = vec![0u8; big.len()];
        server.read_exact(&mut got).unwrap();
        assert_eq!(got, big);
        let mut client = writer.join().unwrap().unwrap();
        server.write_all(b"back").unwrap();
        let mut back = [0u8; 4];
        client.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"back");
    }

    /// An IK handshake: the server holds `server` and takes the keys `authorized` names; the
    /// driver holds `driver` and names `server_key` as the server's.
    fn identity_pair(
        (server, authorized, server_token): (KeyPair, Vec<[u8; KEY_BYTES]>, Option<&'static [u8]>),
        (driver, server_key, driver_token): (KeyPair, [u8; KEY_BYTES], Option<&'static [u8]>),
    ) -> (
        Result<ControlStream, HandshakeError>,
        Result<ControlStream, HandshakeError>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut s = ControlStream::plain(s);
            let proof = Proof {
                token: server_token,
                keys: Some(&server),
            };
            let result = s.respond(proof, b"hellos", &|key| authorized.contains(key));
            if let Err(HandshakeError::Unauthorized(_)) = &result {
                // What the server does: a plaintext refusal in place of the answer.
                let refusal = super::super::protocol::Message::Error {
                    code: super::super::protocol::ErrorCode::Auth,
                    message: "not authorized".into(),
                };
                super::super::protocol::write_message(&mut s, &refusal).unwrap();
            }
            result.map(|()| s)
        });
        let mut c = ControlStream::plain(TcpStream::connect(addr).unwrap());
        let proof = Proof {
            token: driver_token,
            keys: Some(&driver),
        };
        let client = c.initiate(proof, Some(&server_key), b"hellos").map(|()| c);
        (client, server.join().unwrap())
    }

    fn keys() -> KeyPair {
        super::super::identity::generate().unwrap()
    }

    #[test]
    fn an_authorized_driver_and_its_trusted_server_prove_each_other_and_talk() {
        const TOKEN: &[u8] = b"0123456789abcdef0123456789abcdef";
        for token in [None, Some(TOKEN)] {
            let (server, driver) = (keys(), keys());
            let (client, server_end) = identity_pair(
                (server.clone(), vec![driver.public], token),
                (driver.clone(), server.public, token),
            );
            let (mut client, mut server_end) = (client.unwrap(), server_end.unwrap());
            assert_eq!(server_end.peer_key(), Some(driver.public), "{token:?}");
            assert_eq!(client.peer_key(), Some(server.public));
            client.write_all(b"run").unwrap();
            let mut got = [0u8; 3];
            server_end.read_exact(&mut got).unwrap();
            assert_eq!(&got, b"run");
        }
    }

    #[test]
    fn an_unknown_driver_key_is_refused_before_the_server_answers() {
        let (server, driver, stranger) = (keys(), keys(), keys());
        let (client, server_end) = identity_pair(
            (server.clone(), vec![driver.public], None),
            (stranger.clone(), server.public, None),
        );
        match server_end {
            Err(HandshakeError::Unauthorized(key)) => assert_eq!(key, stranger.public),
            other => panic!("{:?}", other.err()),
        }
        match client {
            Err(HandshakeError::Answered(Refusal(_, message))) => {
                assert_eq!(message, "not authorized")
            }
            other => panic!("{:?}", other.err()),
        }
    }

    #[test]
    fn a_server_without_the_announced_key_or_the_token_fails_the_handshake() {
        const TOKEN: &[u8] = b"0123456789abcdef0123456789abcdef";
        const OTHER: &[u8] = b"fedcba9876543210fedcba9876543210";
        // An impostor announces a trusted server's key but holds another private key.
        let (server, impostor, driver) = (keys(), keys(), keys());
        let (client, server_end) = identity_pair(
            (impostor, vec![driver.public], None),
            (driver.clone(), server.public, None),
        );
        assert!(matches!(server_end, Err(HandshakeError::WrongToken)));
        assert!(client.is_err());
        // The right keys with another token: the server refuses at the first message.
        let (client, server_end) = identity_pair(
            (server.clone(), vec![driver.public], Some(TOKEN)),
            (driver, server.public, Some(OTHER)),
        );
        assert!(matches!(server_end, Err(HandshakeError::WrongToken)));
        assert!(client.is_err());
    }

    #[test]
    fn a_different_token_fails_the_handshake_on_both_sides() {
        let (client, server) = pair(
            b"0123456789abcdef0123456789abcdef",
            b"fedcba9876543210fedcba9876543210",
        );
        assert!(
            matches!(server, Err(HandshakeError::WrongToken)),
            "{:?}",
            server.err()
        );
        assert!(client.is_err());
    }
}
