//! file study: `bytepath server`'s side of `file --remote`. One control session is one
//! transfer: the server writes the test file in a temporary folder of its own, prepares its
//! page cache, takes one data connection, sends the file with the asked mechanism when the
//! client says go (within --max-duration of it, or a watchdog shuts the transfer and the
//! session), closes the connection (the client's EOF), reports its usage, and removes the
//! folder when the session ends, whatever happened.
use super::watchdog::{Guarded, Watchdog};
use super::{
    accept_flows, expect, out_of_order, refuse, send, Limits, Refusal, RunClaim, Served,
    ServerConfig, State,
};
use crate::config::{self, Pattern};
use crate::engine::control::Control;
use crate::error::ConfigError;
use crate::file::mechanisms::FileMechanism;
use crate::file::test_files::{self, ServedFile, TestFolder};
use crate::file::{self as study, transfer, Cache};
use crate::measure::counters::CounterSelection;
use crate::record::wire::FileRequest;
use crate::remote::channel::ControlStream;
use crate::remote::protocol::{self, ErrorCode, Message};
use crate::transport::Endpoint;
use std::fs::File;
use std::io;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// How often the watcher looks at the client while the test file is written.
const CLIENT_WATCH: Duration = Duration::from_millis(100);

/// A request, checked against this server's limits.
struct Checked {
    mechanism: FileMechanism,
    cache: Cache,
    chunk: usize,
    counters: CounterSelection,
}

/// Serves one `FileRun`: checks it, claims the server (one test at a time), and runs it.
pub(super) fn serve(
    stream: &mut ControlStream,
    request: &FileRequest,
    state: &State,
) -> Result<Served, Refusal> {
    let checked = check(request, &state.config.limits)?;
    let Some(mut claim) = RunClaim::take(&state.busy) else {
        let message = "another run is in progress; this server runs one at a time".to_string();
        let _ = protocol::write_message(stream, &Message::Busy { message });
        return Ok("busy: another run is in progress".into());
    };
    let result = serve_claimed(stream, request, &checked, state, &mut claim);
    let what = format!(
        "file {} B {} {} cache",
        request.size, request.mechanism, request.cache
    );
    result.map(|(done, bytes)| Served {
        detail: format!("{what}: {done}"),
        ran: Some(what),
        bytes,
    })
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
    stream: &mut ControlStream,
    request: &FileRequest,
    checked: &Checked,
    state: &State,
    claim: &mut RunClaim<'_>,
) -> Result<(String, Option<u64>), Refusal> {
    let failed = |what: &str, e: io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    // Removed on drop: on every return from here, refusals and failures included.
    let folder = test_folder(request.size)?;
    let served = write_watched(stream, &folder, request, state.config.timeout)?;
    if checked.cache == Cache::Warm {
        study::read_through(&served).map_err(|e| failed("reading the test file", e))?;
    }
    let residency = study::prepare_cache(&served, checked.cache)
        .map_err(|e| failed("preparing the page cache", e))?;
    let flow = file_flow(stream, served.hash, &state.config)?;
    let rep = match expect(stream, "file_go")? {
        Message::FileGo { rep } => rep,
        other => return Err(out_of_order("file_go", &other)),
    };
    let sent = send_capped(
        stream,
        flow,
        (checked, &served),
        state.config.limits.max_duration,
    )?;
    let (server, syscalls, error) = match sent {
        Ok(side) => (Some(side.usage), Some(side.syscalls), None),
        Err(e) => (None, None, Some(format!("the server's send failed: {e}"))),
    };
    // Gone before the client hears `FileSent`: once it has its answer nothing of this
    // transfer is left here.
    let dir = folder.dir.clone();
    drop(folder);
    // A send that did not fail sent the whole file.
    let bytes = error.is_none().then_some(request.size);
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
    Ok((format!("{summary}; {} removed", dir.display()), bytes))
}

/// A temporary folder for a test file of `size` bytes, once the space for it is there.
fn test_folder(size: u64) -> Result<TestFolder, Refusal> {
    let failed = |what: &str, e: io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let temp = std::env::temp_dir();
    let available =
        test_files::available_space(&temp).map_err(|e| failed("the temporary folder", e))?;
    test_files::check_space(&[size], &temp, available)
        .map_err(|e| refuse(ErrorCode::Limit, e.0))?;
    let folder = TestFolder::create(&temp).map_err(|e| failed("creating the test folder", e))?;
    eprintln!("file study: test file in {}", folder.dir.display());
    Ok(folder)
}

/// Sends the file under the transfer's cap; a transfer the cap shut is refused (the session
/// ends), one that failed otherwise is the send's error, told in `FileSent`.
fn send_capped(
    stream: &ControlStream,
    flow: TcpStream,
    (checked, served): (&Checked, &ServedFile),
    cap: Duration,
) -> Result<io::Result<transfer::ServerSide>, Refusal> {
    let watchdog = transfer_cap(stream, &flow, cap)?;
    let sent = send_file(flow, checked, served);
    if watchdog.fired() {
        return Err(refuse(
            ErrorCode::Limit,
            format!(
                "the transfer passed --max-duration ({} ms from its go): the server shut it",
                cap.as_millis()
            ),
        ));
    }
    Ok(sent)
}

/// The transfer's hard cap: a client that reads slowly (or not at all) holds the one run at a
/// time no longer than `cap` from its go; then the flow and the control connection are shut,
/// whatever the client does.
fn transfer_cap(
    stream: &ControlStream,
    flow: &TcpStream,
    cap: Duration,
) -> Result<Watchdog, Refusal> {
    let failed = |e: io::Error| refuse(ErrorCode::Failed, format!("the transfer's cap: {e}"));
    let guarded = Guarded {
        control: Arc::new(Control::new().map_err(failed)?),
        endpoints: vec![Arc::new(Endpoint::socket(
            flow.try_clone().map_err(failed)?,
        ))],
        stream: TcpStream::try_clone(stream).map_err(failed)?,
    };
    Watchdog::arm(Instant::now() + cap, guarded, None).map_err(failed)
}

/// The transfer's one data connection: a data port named in `FileAccepted` with the cookie
/// (and the file's hash, when asked), and the client's tagged connection on it.
fn file_flow(
    stream: &mut ControlStream,
    hash: Option<u64>,
    config: &ServerConfig,
) -> Result<TcpStream, Refusal> {
    let (data, port) = super::run::data_port(config)?;
    let cookie = super::run::new_cookie()?;
    let accepted = Message::FileAccepted {
        data_port: port,
        cookie: protocol::to_hex(&cookie),
        hash,
    };
    send(stream, &accepted)?;
    accept_flows(stream, &data, &cookie, 1, config.timeout)?
        .pop()
        .ok_or_else(|| refuse(ErrorCode::Failed, "no data connection"))
}

/// Writes the test file while a watcher looks at the client: the write stops as soon as the
/// client leaves or the server is asked to end (the folder goes with the session). Were the
/// server killed meanwhile, the folder would stay: the line naming it is in the log, and the
/// next server removes it at start (`remove_stale_folders`).
fn write_watched(
    stream: &TcpStream,
    folder: &TestFolder,
    request: &FileRequest,
    timeout: Duration,
) -> Result<ServedFile, Refusal> {
    let failed = |what: &str, e: io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let watched = stream
        .try_clone()
        .map_err(|e| failed("watching the client", e))?;
    let abandon = AtomicBool::new(false);
    let written = AtomicBool::new(false);
    let served = std::thread::scope(|scope| {
        scope.spawn(|| watch_client(&watched, &abandon, &written));
        let served = folder.write(request.size, request.verify, &abandon);
        written.store(true, Ordering::Release);
        served
    });
    // The watcher's poll set the connection's receive timeout (one per socket, shared by
    // both descriptors): the session's own comes back.
    let _ = stream.set_read_timeout(Some(timeout));
    served.map_err(|e| match e.kind() {
        io::ErrorKind::Interrupted => refuse(
            ErrorCode::Failed,
            "the client left, or the server was asked to end, while the test file was written; the write stopped there",
        ),
        _ => failed("writing the test file", e),
    })
}

/// Until `written`: sets `abandon` once the client has closed the control connection (or it
/// failed) or the server is asked to end.
fn watch_client(stream: &TcpStream, abandon: &AtomicBool, written: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(CLIENT_WATCH));
    let mut byte = [0u8; 1];
    while !written.load(Ordering::Acquire) {
        let gone = match stream.peek(&mut byte) {
            Ok(0) => true,
            // Something the client sent early: it is still there; the session reads it later.
            Ok(_) => {
                std::thread::sleep(CLIENT_WATCH);
                false
            }
            Err(e) => !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
            ),
        };
        if gone || super::stopping() {
            abandon.store(true, Ordering::Release);
            return;
        }
    }
}

/// Removes the test folders a server killed mid-transfer left in `parent`: those named for
/// this process's id (a restarted container's PID 1 reuses its number) or for a process that
/// no longer exists. A folder of a live `bytepath file` on this host is left alone.
pub(crate) fn remove_stale_folders(parent: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(test_files::FOLDER_PREFIX))
            .and_then(|rest| rest.split('-').next()?.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = pid != me && std::path::Path::new(&format!("/proc/{pid}")).exists();
        if !alive && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
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
