//! The control protocol between `bytepath run --remote` and `bytepath server`, version 2. It runs
//! on its own TCP connection, apart from the data connections the engine measures: every frame
//! is a u32 big-endian length and that many bytes of JSON holding one `Message`. A frame above
//! `MAX_FRAME` is refused before anything is allocated for it, so no peer can make the other
//! allocate more than `MAX_FRAME`. Token authentication is HMAC-SHA256 (RFC 2104) over a fresh
//! server nonce: the token itself never crosses the wire. Version 2 added the peer run
//! (`peer_run` / `peer_record`, `bytepath mesh`): a driver asks one server to run a point
//! against another server and send the record back; version 1 peers are refused at the hello
//! with both versions named.
use crate::engine::worker::ThreadSample;
use crate::file::record::{Residency, SideUsage};
pub use crate::file::server::FileRequest;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

/// The protocol version this build speaks; peers must agree exactly.
pub const VERSION: u32 = 2;

/// The largest frame either side accepts. The largest message is one thread's sample (results
/// come as one frame per thread, so the thread count does not matter): its latency histogram
/// (1 ns..100 s at 3 significant digits) has at most ~39,000 buckets, each written as at most
/// ~22 bytes of JSON (`[99999999999,9999999],`), about 860 KB in the very worst case; 1 MiB
/// holds that and the sample's other fields.
pub const MAX_FRAME: usize = 1 << 20;

/// Bytes of the session cookie a data connection presents first.
pub const COOKIE_BYTES: usize = 16;
/// What a data connection sends before anything else: the cookie, then its flow index (u32 BE).
pub const DATA_TAG_BYTES: usize = COOKIE_BYTES + 4;

/// Bytes of the server's challenge nonce.
const NONCE_BYTES: usize = 32;
/// Binds the proof to this protocol, so it cannot be replayed as some other HMAC. It names the
/// protocol, not its version (the hello refuses other versions before any proof is made), so
/// it stayed as it was when version 2 came.
const AUTH_CONTEXT: &[u8] = b"bytepath control v1 auth";

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

/// What the client asks the server to run: the `RunSpec` fields its side needs.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// "tcp" or "udp" (a server without the "udp" capability refuses anything but tcp).
    #[serde(default = "tcp")]
    pub transport: String,
    pub mechanism: String,
    pub pattern: String,
    pub message_size: u64,
    pub threads: u64,
    pub duration_ms: u64,
    pub warmup_ms: u64,
    /// Bytes the whole run is bounded by (`--bytes`/`--messages`), if it is bounded.
    pub total_bytes: Option<u64>,
    pub recv_size: Option<u64>,
    pub spin: bool,
    pub verify: bool,
    pub counters: String,
    /// `--reverse` (stream only): the server runs the measured side, the receiver, and sends
    /// its slices back. Left out when false, so a plain request reads as version 1 always did;
    /// a server without the "reverse" capability refuses the field as unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reverse: bool,
    /// `--udp-split` (udp only): a message larger than one datagram goes as several. Left out
    /// when false, like `reverse`, so a tcp request reads as it always did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub udp_split: bool,
    /// io_uring mechanisms: sends submitted together. Left out for other mechanisms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    /// How the server's receiving side takes bytes ("recv" when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recv: Option<String>,
}

fn tcp() -> String {
    "tcp".into()
}

/// One control frame's content.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Message {
    ClientHello {
        version: u32,
        capabilities: Vec<String>,
    },
    ServerHello {
        version: u32,
        capabilities: Vec<String>,
        /// The server's bytepath version and kernel, for the record.
        system: String,
        /// Hex nonce to prove the token on, when the server requires one.
        challenge: Option<String>,
    },
    Auth {
        /// Hex HMAC-SHA256 of the challenge, keyed with the token.
        proof: String,
    },
    Run {
        request: RunRequest,
    },
    Accepted {
        data_port: u16,
        /// Hex; every data connection presents these bytes first.
        cookie: String,
        /// udp only: the server's data port of every flow, in flow order (`data_port` is the
        /// first). Each flow's socket first sends its tag (cookie + flow index) as one "hello"
        /// datagram to its port and repeats it until the server echoes it back; the server then
        /// takes only that address's datagrams on that port. Absent for tcp.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        udp_ports: Vec<u16>,
    },
    /// udp only, client to server: every flow's hello was echoed and no more hellos will be
    /// sent, so the server may clear the repeats from its sockets before the data begins.
    Joined,
    /// The server's workers are set up and waiting for `Go`.
    Ready,
    /// Warm-up starts now on the server; the measured phase follows it.
    Go,
    /// The client's run ended: stop the server's side now.
    Stop,
    /// One of the server's worker threads, after it finished.
    Sample {
        sample: Box<ThreadSample>,
    },
    /// With `reverse`, before `Done`: the measured side's per-slice totals over the whole
    /// measured phase (the client keeps as many slices as its own schedule used).
    Slices {
        slice_ns: u64,
        bytes: Vec<u64>,
        messages: Vec<u64>,
    },
    /// Every sample was sent; `error` says why the server's side failed, if it did.
    Done {
        samples: u32,
        error: Option<String>,
    },
    Busy {
        message: String,
    },
    Error {
        code: ErrorCode,
        message: String,
    },
    Bye,
    // file study: `file --remote`, one control session per transfer. The server writes the test
    // file and prepares its cache before `FileAccepted`, so the client's clock, started at
    // `FileGo`, covers the sending only (and one round trip).
    FileRun {
        request: FileRequest,
    },
    FileAccepted {
        data_port: u16,
        /// Hex; the one data connection presents these bytes first (flow index 0).
        cookie: String,
        /// The file's xxh3-64, when the request asked to verify.
        hash: Option<u64>,
    },
    /// Send the file now; `rep` only names the transfer in the server's log.
    FileGo {
        rep: u32,
    },
    /// The file was sent (or failed to be) and the data connection closed.
    FileSent {
        /// The sending thread's usage over the send calls; absent when sending failed.
        server: Option<SideUsage>,
        syscalls: Option<u64>,
        /// What mincore said just before `FileAccepted`, after the cache was prepared.
        residency: Residency,
        error: Option<String>,
    },
    // servers study: `bytepath servers --remote`, one control session per point.
    /// Fork this server model on a listener of the server's own (`--bind`, port 0).
    ServersRun {
        model: String,
        size: u64,
        server_threads: u64,
        clients: u64,
    },
    /// The model runs and listens on `port`; the client's load generator may connect.
    ServersAccepted {
        port: u16,
    },
    /// The model cannot run on this server (io_uring unavailable): the point is skipped.
    ServersSkipped {
        reason: String,
    },
    /// The client's measured window starts now.
    ServersWindow,
    /// The client's measured window ended: measure no more and report.
    ServersStop,
    /// What the server process alone cost over the window.
    ServersReport {
        report: Box<crate::servers::process::ServerReport>,
    },
    // mesh: `bytepath mesh`, one control session per (pair, point, visit). The driver asks
    // the source host's server to run the point against `peer` as a `--remote` client would
    // (stream: this server sends and the peer receives and measures; rr: this server asks).
    /// Run `request` against the `bytepath server` at `peer` (HOST:PORT), only if its address
    /// is inside `--allow-peers`. `src` and `dst` are how the driver names the two hosts, for
    /// the record. While it runs, `Stop` from the driver interrupts it (the record says so).
    PeerRun {
        peer: String,
        src: String,
        dst: String,
        request: RunRequest,
    },
    /// The run record of a `peer_run`, as `bytepath run --json` would print it on this server
    /// (completed, failed or interrupted); a refused request gets an `error` frame instead.
    PeerRecord {
        record: serde_json::Value,
    },
}

impl Message {
    /// The message's kind, for "expected X, got Y" lines.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::ClientHello { .. } => "client_hello",
            Message::ServerHello { .. } => "server_hello",
            Message::Auth { .. } => "auth",
            Message::Run { .. } => "run",
            Message::Accepted { .. } => "accepted",
            Message::Joined => "joined",
            Message::Ready => "ready",
            Message::Go => "go",
            Message::Slices { .. } => "slices",
            Message::Stop => "stop",
            Message::Sample { .. } => "sample",
            Message::Done { .. } => "done",
            Message::Busy { .. } => "busy",
            Message::Error { .. } => "error",
            Message::Bye => "bye",
            // file study
            Message::FileRun { .. } => "file_run",
            Message::FileAccepted { .. } => "file_accepted",
            Message::FileGo { .. } => "file_go",
            Message::FileSent { .. } => "file_sent",
            Message::ServersRun { .. } => "servers_run",
            Message::ServersAccepted { .. } => "servers_accepted",
            Message::ServersSkipped { .. } => "servers_skipped",
            Message::ServersWindow => "servers_window",
            Message::ServersStop => "servers_stop",
            Message::ServersReport { .. } => "servers_report",
            Message::PeerRun { .. } => "peer_run",
            Message::PeerRecord { .. } => "peer_record",
        }
    }
}

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The read timed out before any byte of the frame arrived (the caller may wait again).
    Idle,
    /// The peer closed the connection between frames.
    Closed,
    /// The declared length is above `MAX_FRAME` (or zero).
    Oversized(u64),
    /// The connection ended or stalled inside a frame.
    Truncated {
        expected: usize,
        got: usize,
    },
    /// The body is not a message of this protocol.
    Malformed(String),
    Io(io::Error),
}

impl FrameError {
    pub fn code(&self) -> ErrorCode {
        match self {
            FrameError::Idle => ErrorCode::Timeout,
            FrameError::Oversized(_) => ErrorCode::Oversized,
            FrameError::Malformed(_) => ErrorCode::Malformed,
            FrameError::Closed | FrameError::Truncated { .. } | FrameError::Io(_) => {
                ErrorCode::Truncated
            }
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Idle => write!(f, "no frame arrived within the timeout"),
            FrameError::Closed => write!(f, "the connection was closed"),
            FrameError::Oversized(0) => write!(
                f,
                "a frame declared 0 bytes; a frame holds 1 to {MAX_FRAME} bytes"
            ),
            FrameError::Oversized(n) => write!(
                f,
                "a frame declared {n} bytes; the limit is {MAX_FRAME} bytes"
            ),
            FrameError::Truncated { expected, got } => write!(
                f,
                "a frame ended after {got} of its {expected} bytes (connection closed or timed out)"
            ),
            FrameError::Malformed(e) => write!(f, "a frame is not a bytepath message: {e}"),
            FrameError::Io(e) => write!(f, "reading a frame failed: {e}"),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Once a frame has begun, how long its remaining bytes may take in all (read timeouts inside
/// a frame are waited through until then; a peer that stalls longer has truncated it).
const FRAME_PATIENCE: Duration = Duration::from_secs(10);

/// Fills `buf` from `r`; returns how many bytes arrived before EOF or an error. A timeout is
/// waited through while `patient_until` is in the future.
fn fill(
    r: &mut impl Read,
    buf: &mut [u8],
    patient_until: Option<Instant>,
) -> Result<usize, (usize, io::Error)> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) && patient_until.is_some_and(|t| Instant::now() < t) => {}
            Err(e) => return Err((got, e)),
        }
    }
    Ok(got)
}

/// Reads one frame's body. Never allocates more than `MAX_FRAME` bytes, and nothing before the
/// declared length has been checked against it. A read timeout set on the stream bounds the
/// wait for a frame to begin (`Idle`); once begun, it must be complete within
/// `FRAME_PATIENCE` or it is `Truncated`.
pub fn read_frame(r: &mut impl Read) -> Result<Vec<u8>, FrameError> {
    let mut header = [0u8; 4];
    match fill(r, &mut header[..1], None) {
        Ok(0) => return Err(FrameError::Closed),
        Ok(_) => {}
        Err((_, e)) if is_timeout(&e) => return Err(FrameError::Idle),
        Err((_, e)) => return Err(FrameError::Io(e)),
    }
    let patience = Some(Instant::now() + FRAME_PATIENCE);
    match fill(r, &mut header[1..], patience) {
        Ok(3) => {}
        Ok(got) | Err((got, _)) => {
            return Err(FrameError::Truncated {
                expected: 4,
                got: 1 + got,
            })
        }
    }
    let declared = u32::from_be_bytes(header) as u64;
    if declared == 0 || declared > MAX_FRAME as u64 {
        return Err(FrameError::Oversized(declared));
    }
    let expected = declared as usize;
    let mut body = vec![0u8; expected];
    match fill(r, &mut body, patience) {
        Ok(got) if got == expected => Ok(body),
        Ok(got) | Err((got, _)) => Err(FrameError::Truncated { expected, got }),
    }
}

/// Parses one frame's body.
pub fn parse(body: &[u8]) -> Result<Message, FrameError> {
    serde_json::from_slice(body).map_err(|e| FrameError::Malformed(e.to_string()))
}

/// Reads and parses one message.
pub fn read_message(r: &mut impl Read) -> Result<Message, FrameError> {
    parse(&read_frame(r)?)
}

/// Writes one message as one frame (one write call, so a frame is never interleaved).
pub fn write_message(w: &mut impl Write, message: &Message) -> io::Result<()> {
    let body = serde_json::to_vec(message).map_err(io::Error::other)?;
    if body.len() > MAX_FRAME {
        return Err(io::Error::other(format!(
            "a {} message of {} bytes is above the {MAX_FRAME}-byte frame limit",
            message.kind(),
            body.len()
        )));
    }
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    w.write_all(&frame)?;
    w.flush()
}

/// `n` bytes from the operating system's random source.
pub fn random_bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("getrandom: {e}")))?;
    Ok(bytes)
}

pub fn new_nonce() -> io::Result<[u8; NONCE_BYTES]> {
    random_bytes()
}

/// The proof that the sender knows `token`: HMAC-SHA256(token, context || nonce).
pub fn proof(token: &[u8], nonce: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(token).expect("HMAC takes keys of any length");
    mac.update(AUTH_CONTEXT);
    mac.update(nonce);
    mac.finalize().into_bytes().to_vec()
}

/// Checks a proof in constant time.
pub fn proof_is_valid(token: &[u8], nonce: &[u8], proof: &[u8]) -> bool {
    let mut mac = Hmac::<Sha256>::new_from_slice(token).expect("HMAC takes keys of any length");
    mac.update(AUTH_CONTEXT);
    mac.update(nonce);
    mac.verify_slice(proof).is_ok()
}

pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lower- or upper-case hex; `None` for anything else (odd length, other characters).
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The token in a token file: its bytes without surrounding white space (a trailing newline).
/// `-` is the first line of standard input (how `mesh --launch ssh` hands the token to the
/// servers it starts: never on a command line, never in a file on their hosts); the rest of
/// standard input is left unread.
pub fn read_token(path: &std::path::Path) -> Result<Vec<u8>, String> {
    let text = if path.as_os_str() == "-" {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map(|_| line.into_bytes())
    } else {
        std::fs::read(path)
    }
    .map_err(|e| format!("--token-file {}: cannot be read: {e}", path.display()))?;
    let token = text.trim_ascii().to_vec();
    if token.is_empty() {
        return Err(format!(
            "--token-file {}: the file is empty; allowed: a file holding the shared token",
            path.display()
        ));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn a_message_survives_a_frame_round_trip() {
        let mut wire = Vec::new();
        let hello = Message::ClientHello {
            version: VERSION,
            capabilities: vec!["tcp".into()],
        };
        write_message(&mut wire, &hello).unwrap();
        match read_message(&mut Cursor::new(wire)).unwrap() {
            Message::ClientHello {
                version,
                capabilities,
            } => {
                assert_eq!(version, VERSION);
                assert_eq!(capabilities, ["tcp"]);
            }
            other => panic!("got {}", other.kind()),
        }
    }

    #[test]
    fn reverse_is_on_the_wire_only_when_asked_and_slices_round_trip() {
        let mut request = RunRequest {
            transport: "tcp".into(),
            mechanism: "copy".into(),
            pattern: "stream".into(),
            message_size: 4096,
            threads: 1,
            duration_ms: 1000,
            warmup_ms: 0,
            total_bytes: None,
            recv_size: None,
            spin: false,
            verify: false,
            counters: "none".into(),
            reverse: false,
            udp_split: false,
            queue_depth: None,
            recv: None,
        };
        // A plain request reads as version 1 always did, so older servers still take it.
        let plain = serde_json::to_string(&request).unwrap();
        assert!(!plain.contains("reverse"), "{plain}");
        assert!(!plain.contains("udp_split"), "{plain}");
        // A request without a transport (an older client's shape) is a tcp one.
        let no_transport = plain.replace("\"transport\":\"tcp\",", "");
        assert!(!no_transport.contains("transport"), "{no_transport}");
        let read: RunRequest = serde_json::from_str(&no_transport).unwrap();
        assert_eq!(read.transport, "tcp");
        // Accepted for tcp carries no udp ports; for udp it lists them.
        let tcp = Message::Accepted {
            data_port: 7,
            cookie: "00".into(),
            udp_ports: Vec::new(),
        };
        let tcp = serde_json::to_string(&tcp).unwrap();
        assert!(!tcp.contains("udp_ports"), "{tcp}");
        let udp = serde_json::to_string(&Message::Accepted {
            data_port: 7,
            cookie: "00".into(),
            udp_ports: vec![7, 8],
        })
        .unwrap();
        match parse(udp.as_bytes()).unwrap() {
            Message::Accepted { udp_ports, .. } => assert_eq!(udp_ports, [7, 8]),
            other => panic!("{}", other.kind()),
        }
        request.reverse = true;
        let asked: RunRequest =
            serde_json::from_str(&serde_json::to_string(&request).unwrap()).unwrap();
        assert!(asked.reverse);

        let mut wire = Vec::new();
        let slices = Message::Slices {
            slice_ns: 100_000_000,
            bytes: vec![1, 2, 3],
            messages: vec![4, 5, 6],
        };
        write_message(&mut wire, &slices).unwrap();
        match read_message(&mut Cursor::new(wire)).unwrap() {
            Message::Slices {
                slice_ns,
                bytes,
                messages,
            } => assert_eq!(
                (slice_ns, bytes, messages),
                (100_000_000, vec![1, 2, 3], vec![4, 5, 6])
            ),
            other => panic!("got {}", other.kind()),
        }
    }

    #[test]
    fn a_declared_length_above_the_limit_is_refused_before_reading_the_body() {
        let mut wire = Cursor::new(frame(&[]));
        wire.get_mut()[..4].copy_from_slice(&(1u32 << 30).to_be_bytes());
        let err = read_frame(&mut wire).unwrap_err();
        assert!(
            matches!(err, FrameError::Oversized(n) if n == 1 << 30),
            "{err}"
        );
        assert!(err.to_string().contains("1073741824"), "{err}");
        assert_eq!(wire.position(), 4, "nothing past the header was read");
    }

    #[test]
    fn a_frame_cut_short_is_truncated_and_an_empty_stream_is_closed() {
        let mut wire = frame(b"{\"type\":\"ready\"}");
        wire.truncate(10);
        let err = read_frame(&mut Cursor::new(wire)).unwrap_err();
        assert!(
            matches!(
                err,
                FrameError::Truncated {
                    expected: 16,
                    got: 6
                }
            ),
            "{err}"
        );
        assert!(matches!(
            read_frame(&mut Cursor::new(Vec::new())),
            Err(FrameError::Closed)
        ));
    }

    #[test]
    fn unknown_fields_and_kinds_are_malformed() {
        for body in [
            // (serde lets unit variants such as `ready` carry extra fields; they mean nothing.)
            &b"{\"type\":\"auth\",\"proof\":\"ab\",\"extra\":1}"[..],
            b"{\"type\":\"launch\"}",
            b"not json",
        ] {
            assert!(matches!(parse(body), Err(FrameError::Malformed(_))));
        }
    }

    #[test]
    fn the_proof_holds_for_the_token_and_nonce_it_was_made_with_only() {
        let nonce = new_nonce().unwrap();
        let p = proof(b"secret", &nonce);
        assert!(proof_is_valid(b"secret", &nonce, &p));
        assert!(!proof_is_valid(b"Secret", &nonce, &p));
        assert!(!proof_is_valid(b"secret", &new_nonce().unwrap(), &p));
        assert!(!proof_is_valid(b"secret", &nonce, &p[..31]));
    }

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_hex() {
        assert_eq!(
            from_hex(&to_hex(&[0, 1, 0xab, 0xff])).unwrap(),
            [0, 1, 0xab, 0xff]
        );
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
        assert_eq!(from_hex("é1"), None);
    }

    /// A reader that yields its bytes, then endless filler: a decoder that trusted a length or
    /// read past its frame would be caught by the count of bytes it took.
    struct Endless {
        head: Cursor<Vec<u8>>,
        taken: usize,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = match self.head.read(buf)? {
                0 => {
                    buf.fill(b' ');
                    buf.len()
                }
                n => n,
            };
            self.taken += n;
            Ok(n)
        }
    }

    proptest! {
        // Bounded for CI: 2,000 cases of up to 4 KiB each take well under a second.
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_never_panic_and_never_read_past_the_frame_limit(
            bytes in proptest::collection::vec(any::<u8>(), 0..4096),
            endless in any::<bool>(),
        ) {
            let mut finite = Cursor::new(bytes.clone());
            if let Ok(body) = read_frame(&mut finite) {
                prop_assert!(body.len() <= MAX_FRAME && body.capacity() <= MAX_FRAME);
                let _ = parse(&body);
            }
            if endless {
                let mut r = Endless { head: Cursor::new(bytes), taken: 0 };
                let got = read_frame(&mut r);
                prop_assert!(r.taken <= 4 + MAX_FRAME, "took {} bytes", r.taken);
                if let Ok(body) = got {
                    prop_assert!(body.capacity() <= MAX_FRAME);
                    let _ = parse(&body);
                }
            }
        }

        #[test]
        fn a_declared_length_is_never_trusted_beyond_the_limit(
            declared in 0u32..(MAX_FRAME as u32 + 64),
            body in proptest::collection::vec(any::<u8>(), 0..2048),
        ) {
            let mut wire = declared.to_be_bytes().to_vec();
            wire.extend_from_slice(&body);
            let mut r = Endless { head: Cursor::new(wire), taken: 0 };
            match read_frame(&mut r) {
                Ok(got) => {
                    prop_assert_eq!(got.len(), declared as usize);
                    prop_assert!(got.capacity() <= MAX_FRAME);
                    let _ = parse(&got);
                }
                Err(FrameError::Oversized(n)) => {
                    prop_assert!(n == 0 || n > MAX_FRAME as u64);
                    prop_assert_eq!(r.taken, 4);
                }
                Err(e) => prop_assert!(false, "unexpected {}", e),
            }
            prop_assert!(r.taken <= 4 + MAX_FRAME);
        }

        #[test]
        fn any_json_shaped_body_parses_or_is_malformed(
            kind in "[a-z_]{0,12}",
            field in "[a-z_]{0,10}",
            value in any::<i64>(),
        ) {
            let body = format!("{{\"type\":\"{kind}\",\"{field}\":{value}}}");
            let _ = parse(body.as_bytes());
        }
    }
}
