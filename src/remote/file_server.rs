//! file study: `bytepath server`'s side of `file --remote`. One control session is one
//! transfer: the server writes the test file in a temporary folder of its own, prepares its
//! page cache, takes one data connection, sends the file with the asked mechanism when the
//! client says go, closes the connection (the client's EOF), reports its usage, and removes the
//! folder when the session ends, whatever happened.
use super::protocol::{self, ErrorCode, FileRequest, Message, COOKIE_BYTES};
use super::server::{accept_flows, expect, out_of_order, refuse, send, Limits, Refusal, State};
use crate::config::{self, Pattern};
use crate::error::ConfigError;
use crate::file::mechanisms::FileMechanism;
use crate::file::test_files::{self, ServedFile, TestFolder};
use crate::file::{self as study, transfer, Cache};
use crate::measure::counters::CounterSelection;
use crate::transport::Endpoint;
use std::fs::File;
use std::io;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Duration;

/// A request, checked against this server's limits.
struct Checked {
    mechanism: FileMechanism,
    cache: Cache,
    chunk: usize,
    counters: CounterSelection,
}

/// Serves one `FileRun`: checks it, claims the server (one test at a time), and runs it.
pub(super) fn serve(
    stream: &mut TcpStream,
    request: &FileRequest,
    state: &State,
) -> Result<String, Refusal> {
    let checked = check(request, &state.config.limits)?;
    let Some(mut claim) = Claim::take(&state.busy) else {
        let message = "another run is in progress; this server runs one at a time".to_string();
        let _ = protocol::write_message(stream, &Message::Busy { message });
        return Ok("busy: another run is in progress".into());
    };
    let result = serve_claimed(stream, request, &checked, state, &mut claim);
    let what = format!(
        "file {} B {} {} cache",
        request.size, request.mechanism, request.cache
    );
    result.map(|done| format!("{what}: {done}"))
}

/// The server's one-test-at-a-time flag, held by this session: released once, early (before
/// `FileSent`, so the client's next transfer is not told busy) or on drop, whatever happened;
/// never after another session has taken it.
struct Claim<'a> {
    busy: &'a AtomicBool,
    held: bool,
}

impl<'a> Claim<'a> {
    fn take(busy: &'a AtomicBool) -> Option<Claim<'a>> {
        busy.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| Claim { busy, held: true })
    }

    fn release(&mut self) {
        if std::mem::take(&mut self.held) {
            self.busy.store(false, Ordering::Release);
        }
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

fn check(request: &FileRequest, limits: &Limits) -> Result<Checked, Refusal> {
    let invalid = |e: ConfigError| refuse(ErrorCode::Refused, e.0);
    let mechanism = FileMechanism::parse(&request.mechanism).map_err(invalid)?;
    let cache = match request.cache.as_str() {
        "warm" => Cache::Warm,
        "cold" => Cache::Cold,
        other => {
            return Err(refuse(
                ErrorCode::Refused,
                format!("cache {other:?}: allowed: warm, cold"),
            ))
        }
    };
    let chunk = match request.chunk {
        c if c > 0 && c <= study::MAX_CHUNK => c as usize,
        c => {
            return Err(refuse(
                ErrorCode::Refused,
                format!("chunk {c} bytes: allowed: 1 B to 64 MiB"),
            ))
        }
    };
    if mechanism == FileMechanism::Splice {
        study::check_pipe_size(chunk, &request.chunk.to_string()).map_err(invalid)?;
    }
    let size = request.size;
    if size == 0 {
        return Err(refuse(
            ErrorCode::Refused,
            "file size 0 bytes: allowed: above 0",
        ));
    }
    if size > limits.max_file_size {
        return Err(refuse(
            ErrorCode::Limit,
            format!(
                "file size {size} bytes: this server allows up to {} bytes (--max-file-size)",
                limits.max_file_size
            ),
        ));
    }
    if let Some(max_bytes) = limits.max_bytes.filter(|&m| size > m) {
        return Err(refuse(
            ErrorCode::Limit,
            format!(
                "file size {size} bytes: this server allows up to {max_bytes} bytes per run (--max-bytes)"
            ),
        ));
    }
    Ok(Checked {
        mechanism,
        cache,
        chunk,
        counters: config::parse_counters(&request.counters, Pattern::Stream).map_err(invalid)?,
    })
}

fn serve_claimed(
    stream: &mut TcpStream,
    request: &FileRequest,
    checked: &Checked,
    state: &State,
    claim: &mut Claim<'_>,
) -> Result<String, Refusal> {
    let failed = |what: &str, e: io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let temp = std::env::temp_dir();
    let available =
        test_files::available_space(&temp).map_err(|e| failed("the temporary folder", e))?;
    test_files::check_space(&[request.size], &temp, available)
        .map_err(|e| refuse(ErrorCode::Limit, e.0))?;
    // Removed on drop: on every return from here, refusals and failures included.
    let folder = TestFolder::create(&temp).map_err(|e| failed("creating the test folder", e))?;
    eprintln!("file study: test file in {}", folder.dir.display());
    // The server has no Ctrl-C of its own to stop a write early; were it killed meanwhile, the
    // folder would stay, which is why the line above names it.
    let never = AtomicBool::new(false);
    let served = folder
        .write(request.size, request.verify, &never)
        .map_err(|e| failed("writing the test file", e))?;
    if checked.cache == Cache::Warm {
        study::read_through(&served).map_err(|e| failed("reading the test file", e))?;
    }
    let residency = study::prepare_cache(&served, checked.cache)
        .map_err(|e| failed("preparing the page cache", e))?;
    let data = TcpListener::bind((state.config.bind, 0))
        .map_err(|e| failed("binding the data port", e))?;
    let port = data
        .local_addr()
        .map_err(|e| failed("the data port", e))?
        .port();
    let cookie: [u8; COOKIE_BYTES] =
        protocol::random_bytes().map_err(|e| failed("making the session cookie", e))?;
    send(
        stream,
        &Message::FileAccepted {
            data_port: port,
            cookie: protocol::to_hex(&cookie),
            hash: served.hash,
        },
    )?;
    let flow = accept_flows(&data, &cookie, 1, state.config.timeout)?
        .pop()
        .ok_or_else(|| refuse(ErrorCode::Failed, "no data connection"))?;
    drop(data);
    let rep = match expect(stream, "file_go")? {
        Message::FileGo { rep } => rep,
        other => return Err(out_of_order("file_go", &other)),
    };
    let sent = send_file(flow, checked, &served);
    let (server, syscalls, error) = match sent {
        Ok(side) => (Some(side.usage), Some(side.syscalls), None),
        Err(e) => (None, None, Some(format!("the server's send failed: {e}"))),
    };
    // Gone before the client hears `FileSent`: once it has its answer nothing of this
    // transfer is left here.
    let dir = folder.dir.clone();
    drop(folder);
    let summary = match &error {
        Some(e) => format!("rep {rep}: {e}"),
        None => format!("rep {rep}: sent in {} calls", syscalls.unwrap_or(0)),
    };
    claim.release();
    send(
        stream,
        &Message::FileSent {
            server,
            syscalls,
            residency,
            error,
        },
    )?;
    // The client's Bye, so it has read FileSent before the connection closes.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = protocol::read_message(stream);
    Ok(format!("{summary}; {} removed", dir.display()))
}

/// Sends the file on the data connection and closes it, measured like a local transfer's
/// server thread (the same function).
fn send_file(
    flow: TcpStream,
    checked: &Checked,
    served: &ServedFile,
) -> io::Result<transfer::ServerSide> {
    let file = File::open(&served.path)?;
    let sender = checked.mechanism.sender(checked.chunk)?;
    transfer::serve(
        Endpoint::socket(flow),
        sender,
        (&file, served.len),
        checked.counters,
        &Barrier::new(1),
        transfer::Plan::ONCE,
    )
}
