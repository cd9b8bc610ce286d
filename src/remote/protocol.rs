//! The control protocol between `bytepath run --remote` and `bytepath server`, version 4: the
//! messages (`Message`, `RunRequest`, `ErrorCode`). It runs on its own TCP connection, apart
//! from the data connections the engine measures; every message is one frame (`frame`: a u32
//! big-endian length and that many bytes of JSON, at most `MAX_FRAME`). Version 4 put fresh
//! random bytes in the server's hello (a recorded handshake message fails on any other
//! connection) and moved the server's release and kernel out of it, into a `system` frame
//! after authentication. Version 3 made the
//! channel secure: after the plaintext hellos, a Noise handshake keyed by the token
//! (`channel`) authenticates both ends, and every later frame travels encrypted and
//! authenticated; the token itself never crosses the wire. Version 2 added the peer run
//! (`peer_run` / `peer_record`, `bytepath mesh`). Peers of another version are refused at the
//! hello with both versions named. The protocol depends on no study: the study types it
//! carries (a file transfer's request and its side's usage, a servers point's server report)
//! live in `record::wire`, below both, and a test pins their form on the wire.
pub use super::auth::{from_hex, random_bytes, read_token, to_hex};
pub use super::frame::{read_frame, write_frame, FrameError, FrameSource, MAX_FRAME};
use crate::engine::worker::ThreadSample;
use crate::record::wire::{FileRequest, Residency, ServerReport, SideUsage};

use std::io::{self, Write};

/// The protocol version this build speaks; peers must agree exactly.
pub const VERSION: u32 = 4;

/// Bytes of fresh random material in every server hello (`ServerHello::random`).
pub const HELLO_RANDOM_BYTES: usize = 32;

/// Bytes of the session cookie a data connection presents first.
pub const COOKIE_BYTES: usize = 16;
/// What a data connection sends before anything else: the cookie, then its flow index (u32 BE).
pub const DATA_TAG_BYTES: usize = COOKIE_BYTES + 4;

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
    /// `--profile`: the server samples its side's threads over the measured phase and sends
    /// the breakdown back (`profile`, before `done`). Left out when false; a server without
    /// the "profile" capability is never asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile: bool,
    /// `--rcvbuf` / `--sndbuf`: the buffers the server sets on its data listener before any
    /// flow connects, so its accepted ends hold them from the handshake on. Left out when
    /// neither is asked; a server without the "buffers" capability is never asked.
    #[serde(default, skip_serializing_if = "no_buffers")]
    pub buffers: crate::transport::buffers::SocketBuffers,
    /// The server samples its side's TCP_INFO per slice and sends the series back
    /// (`tcp_info`, before `done`). Left out when false; a server without the "tcp_info"
    /// capability is never asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tcp_info: bool,
}

fn no_buffers(buffers: &crate::transport::buffers::SocketBuffers) -> bool {
    !buffers.is_set()
}

fn tcp() -> String {
    "tcp".into()
}

impl RunRequest {
    /// One flow of `pattern` by `mechanism` over `transport`, `message_size` bytes a message,
    /// for `duration_ms`, with nothing else asked: no warm-up, count, counters or extras.
    pub fn plain(
        (transport, mechanism, pattern): (&str, &str, &str),
        message_size: u64,
        duration_ms: u64,
    ) -> RunRequest {
        RunRequest {
            transport: transport.into(),
            mechanism: mechanism.into(),
            pattern: pattern.into(),
            message_size,
            threads: 1,
            duration_ms,
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
            profile: false,
            buffers: Default::default(),
            tcp_info: false,
        }
    }
}

/// One control frame's content.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Message {
    ClientHello {
        version: u32,
        capabilities: Vec<String>,
    },
    /// Says nothing of the server's release or kernel: those come after authentication
    /// (`System`).
    ServerHello {
        version: u32,
        capabilities: Vec<String>,
        /// Fresh random bytes (`HELLO_RANDOM_BYTES`, hex) for this connection alone. The hellos
        /// are the handshake's prologue, so a client's handshake message recorded on another
        /// connection fails on this one as a wrong token.
        random: String,
        /// Whether the Noise handshake (keyed by the token) follows; false only for a server
        /// started with `--insecure`.
        secure: bool,
        /// The server's public key (64 hex digits) when it runs with `--identity`: the driver
        /// checks it against its `--trusted-servers`, and the handshake (Noise IK) proves it.
        /// Left out otherwise, so a token server's hello reads as before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        identity: Option<String>,
    },
    /// The server's first frame once the client is authenticated (after the handshake; with
    /// `--insecure`, right after the hellos): its bytepath version and kernel, for the record.
    System {
        system: String,
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
    /// With `profile`, before `Done`: the server's side's CPU breakdown, or why there is none.
    Profile {
        profile: Box<crate::measure::profile::Profile>,
    },
    /// With `tcp_info`, before `Done`: each of the server's sides' TCP_INFO readings (at most
    /// `MAX_PEER_READINGS` in all, `engine::tcp_peer`), or why there are none.
    TcpInfo {
        series: Vec<crate::engine::tcp_sampler::TcpSeries>,
        unavailable_reason: Option<String>,
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
        /// The connections the driver's point opens in all (its clients and its stalled
        /// clients) when each client keeps one: the model stops listening once that many are
        /// in. Absent for a point whose clients reconnect per request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connections: Option<u64>,
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
        report: Box<ServerReport>,
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
    // the canary (issue 25): `bytepath mesh` asks each host's server for one per round.
    /// Measure the canary on this server now (on its own CPUs), between runs.
    Canary,
    /// The canary's figures, measured on the server.
    CanaryTaken {
        canary: Box<crate::probe::canary::Canary>,
    },
}

impl Message {
    /// The message's kind, for "expected X, got Y" lines.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::ClientHello { .. } => "client_hello",
            Message::ServerHello { .. } => "server_hello",
            Message::System { .. } => "system",
            Message::Run { .. } => "run",
            Message::Accepted { .. } => "accepted",
            Message::Joined => "joined",
            Message::Ready => "ready",
            Message::Go => "go",
            Message::Slices { .. } => "slices",
            Message::Profile { .. } => "profile",
            Message::TcpInfo { .. } => "tcp_info",
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
            Message::Canary => "canary",
            Message::CanaryTaken { .. } => "canary_taken",
        }
    }
}

/// The error code a frame that could not be read is refused with.
impl FrameError {
    pub fn code(&self) -> ErrorCode {
        match self {
            FrameError::Idle => ErrorCode::Timeout,
            FrameError::Oversized => ErrorCode::Oversized,
            FrameError::Malformed(_) => ErrorCode::Malformed,
            FrameError::Closed | FrameError::Truncated { .. } | FrameError::Io(_) => {
                ErrorCode::Truncated
            }
        }
    }
}

/// Parses one frame's body.
pub fn parse(body: &[u8]) -> Result<Message, FrameError> {
    serde_json::from_slice(body).map_err(|e| FrameError::Malformed(e.to_string()))
}

/// Reads and parses one message.
pub fn read_message(r: &mut impl FrameSource) -> Result<Message, FrameError> {
    parse(&read_frame(r)?)
}

/// A message's frame body: its JSON.
pub fn encode(message: &Message) -> io::Result<Vec<u8>> {
    let body = serde_json::to_vec(message).map_err(io::Error::other)?;
    if body.len() > MAX_FRAME {
        return Err(io::Error::other(format!(
            "a {} message of {} bytes is above the {MAX_FRAME}-byte frame limit",
            message.kind(),
            body.len()
        )));
    }
    Ok(body)
}

/// Writes one message as one frame.
pub fn write_message(w: &mut impl Write, message: &Message) -> io::Result<()> {
    write_frame(w, &encode(message)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    /// The study types the protocol carries (`record::wire`) as they travel: a change to any
    /// of them changes this snapshot, and must come with a new `VERSION`.
    #[test]
    fn the_study_types_on_the_wire_keep_their_form() {
        use crate::measure::counters::{CounterSample, CounterValue};
        let counters = CounterSample {
            values: std::array::from_fn(|_| CounterValue::Unavailable("no PMU".into())),
        };
        let usage = SideUsage {
            user_ns: 1,
            system_ns: 2,
            voluntary_switches: 3,
            involuntary_switches: 4,
            minor_faults: 5,
            major_faults: 6,
            counters: [("cycles".to_string(), counters.values[0].clone())].into(),
            profile: None,
        };
        let messages = [
            Message::FileRun {
                request: FileRequest {
                    size: 4096,
                    mechanism: "sendfile".into(),
                    chunk: 65536,
                    cache: "warm".into(),
                    verify: true,
                    counters: "none".into(),
                },
            },
            Message::FileSent {
                server: Some(usage),
                syscalls: Some(7),
                residency: Residency {
                    resident_pages: 1,
                    total_pages: 2,
                },
                error: None,
            },
            Message::ServersReport {
                report: Box::new(ServerReport {
                    counters,
                    cpu_time_ns: 10,
                    voluntary_switches: 11,
                    involuntary_switches: 12,
                    threads: 2,
                    peak_rss_bytes: Some(4096),
                    rss_at_fork_bytes: None,
                    accepted: 5,
                    allowed_cpus: vec![0, 1],
                    errors: vec!["e".into()],
                }),
            },
        ];
        let frames: Vec<String> = messages
            .iter()
            .map(|m| String::from_utf8(encode(m).unwrap()).unwrap())
            .collect();
        insta::assert_snapshot!(frames.join("\n"));
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
        let mut request = RunRequest::plain(("tcp", "copy", "stream"), 4096, 1000);
        // A plain request reads as version 1 always did, so older servers still take it.
        let plain = serde_json::to_string(&request).unwrap();
        assert!(!plain.contains("reverse"), "{plain}");
        assert!(!plain.contains("udp_split"), "{plain}");
        assert!(!plain.contains("profile"), "{plain}");
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
        // `profile` goes on the wire only when asked (a server announcing "profile" reads it).
        request.profile = true;
        let profiled = serde_json::to_string(&request).unwrap();
        assert!(profiled.contains("\"profile\":true"), "{profiled}");
        request.profile = false;
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
    fn buffers_and_tcp_info_are_asked_only_when_set_and_the_series_round_trip() {
        let mut request = RunRequest::plain(("tcp", "send", "stream"), 4096, 1000);
        let plain = serde_json::to_string(&request).unwrap();
        assert!(
            !plain.contains("buffers") && !plain.contains("tcp_info"),
            "{plain}"
        );
        request.tcp_info = true;
        request.buffers.sndbuf = Some(1 << 16);
        let asked: RunRequest =
            serde_json::from_str(&serde_json::to_string(&request).unwrap()).unwrap();
        assert_eq!(asked, request);
        let series = crate::engine::tcp_sampler::TcpSeries {
            flow: 0,
            role: crate::engine::worker::Role::Sender,
            at: vec![std::time::Duration::from_millis(100)],
            samples: vec![crate::sys::tcp_info::TcpFlowInfo {
                snd_cwnd: Some(10),
                ..Default::default()
            }],
            buffers: Some((1, 2)),
            error: None,
        };
        let mut wire = Vec::new();
        let sent = Message::TcpInfo {
            series: vec![series.clone()],
            unavailable_reason: None,
        };
        write_message(&mut wire, &sent).unwrap();
        let text = String::from_utf8_lossy(&wire[4..]).to_string();
        assert!(text.contains("\"at\":[100000000]"), "{text}");
        match read_message(&mut Cursor::new(wire)).unwrap() {
            Message::TcpInfo { series: got, .. } => assert_eq!(got, vec![series]),
            other => panic!("got {}", other.kind()),
        }
    }

    #[test]
    fn unknown_fields_and_kinds_are_malformed() {
        for body in [
            // (serde lets unit variants such as `ready` carry extra fields; they mean nothing.)
            &b"{\"type\":\"run\",\"request\":{},\"extra\":1}"[..],
            b"{\"type\":\"launch\"}",
            b"not json",
        ] {
            assert!(matches!(parse(body), Err(FrameError::Malformed(_))));
        }
    }

    proptest! {
        // Bounded for CI: 2,000 cases of up to 4 KiB each take well under a second.
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

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
