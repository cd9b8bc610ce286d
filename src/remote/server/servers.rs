//! A `bytepath servers` point served from here: the model forked on a listener of its own (the
//! same fork as a point on one host), measured over the client's window, and kept serving
//! until the client's clients are gone. The model lets in only the driver: a connection from
//! any other address than the control connection's peer is closed right after accept, before
//! the model makes a thread or a buffer for it (`servers::door`). When the driver's
//! clients each keep one connection, its request counts them (`connections`, held to the
//! point's clients and --max-clients stalled ones) and the model shuts its listener once they
//! are in; a `--connection per-request` point connects again for every request and has no
//! count, only the address.
use super::limits::{servers_point, ServersPoint};
use super::{out_of_order, refuse, send, take_turn, Refusal, RunClaim, Served, State, RUN_POLL};
use crate::remote::channel::ControlStream;
use crate::remote::protocol::{self, ErrorCode, FrameError, Message};
use crate::servers::{self, door::Door, process::ServerSetup};
use std::net::TcpListener;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// Serves one `ServersRun`: the model and counts checked against the limits (a model this
/// host cannot run is skipped with the reason), the server claimed (one test at a time), and
/// the point run.
pub(super) fn serve(
    stream: &mut ControlStream,
    (model, size, server_threads, clients): (&str, u64, u64, u64),
    connections: Option<u64>,
    state: &State,
) -> Result<Served, Refusal> {
    let setup = match servers_point(model, size, server_threads, clients, &state.config)? {
        ServersPoint::Run(setup) => ServerSetup {
            door: Door {
                most: door_count(connections, clients, &state.config)?,
                ..setup.door
            },
            ..setup
        },
        ServersPoint::Skipped(reason) => {
            let skipped = Message::ServersSkipped {
                reason: reason.clone(),
            };
            send(stream, &skipped)?;
            return Ok(format!("servers {model}: skipped: {reason}").into());
        }
    };
    let Some(mut claim) = take_turn(stream, state) else {
        return Ok("busy: another run is in progress".into());
    };
    let ran = format!("servers {model} x{clients} clients");
    servers_side(stream, setup, clients as usize, state, &mut claim).map(|done| Served {
        detail: format!("{ran}: {done}"),
        ran: Some(ran),
        bytes: None,
    })
}

/// How many connections the model lets in before it stops listening: the driver's count,
/// held to the point's clients and at most as many again (its stalled clients are bounded by
/// --max-clients too); none for a point whose clients reconnect per request.
fn door_count(
    connections: Option<u64>,
    clients: u64,
    config: &super::ServerConfig,
) -> Result<Option<u64>, Refusal> {
    let most = clients + config.limits.max_clients as u64;
    match connections {
        Some(c) if c < clients || c > most => Err(refuse(
            ErrorCode::Limit,
            format!("{c} connections for {clients} clients: this server allows {clients} to {most} (the clients and up to --max-clients stalled ones)"),
        )),
        other => Ok(other),
    }
}

/// One `bytepath servers` point: forks the model on a listener of its own (the same fork as a
/// point on one host), lets the client's clients at it, measures it over the client's window,
/// and keeps it serving until the client says its clients are gone.
pub(super) fn servers_side(
    stream: &mut ControlStream,
    setup: ServerSetup<'static>,
    clients: usize,
    state: &State,
    claim: &mut RunClaim<'_>,
) -> Result<String, Refusal> {
    let failed = |what: &str, e: std::io::Error| refuse(ErrorCode::Failed, format!("{what}: {e}"));
    let driver = stream
        .peer_addr()
        .map_err(|e| failed("the driver's address", e))?;
    let setup = ServerSetup {
        door: Door::only(driver.ip(), setup.door.most),
        ..setup
    };
    let listener = TcpListener::bind((state.config.bind, 0))
        .map_err(|e| failed("binding the servers listener", e))?;
    let backlog = clients.min(i32::MAX as usize) as i32;
    crate::sys::events::set_backlog(listener.as_fd(), backlog).map_err(|e| failed("listen", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| failed("the servers listener", e))?
        .port();
    let mut server =
        servers::process::spawn(setup, listener).map_err(|e| failed("forking the server", e))?;
    let result = follow_point(stream, &mut server, port, clients, state);
    // Stopped before the client hears `bye`, so its next point does not find this one busy.
    server.close();
    claim.release();
    if result.is_ok() {
        let _ = protocol::write_message(stream, &Message::Bye);
    }
    result
}

fn follow_point(
    stream: &mut ControlStream,
    server: &mut servers::process::ServerProcess,
    port: u16,
    clients: usize,
    state: &State,
) -> Result<String, Refusal> {
    send(stream, &Message::ServersAccepted { port })?;
    // Setting up the clients (up to 10 s and a millisecond per client on the client's side)
    // and a warm-up come before the window; the window is at most --max-duration.
    let config = &state.config;
    let patience = config.limits.max_duration
        + config.timeout
        + Duration::from_secs(10)
        + Duration::from_millis(clients as u64);
    wait_for(stream, server, "servers_window", patience)?;
    server
        .start_window()
        .map_err(|e| refuse(ErrorCode::Failed, format!("starting the window: {e}")))?;
    wait_for(stream, server, "servers_stop", patience)?;
    let report = server
        .end_window(Duration::from_secs(10))
        .map_err(|e| refuse(ErrorCode::Failed, e))?;
    let summary = format!(
        "{} accepted, {} server threads, {} errors",
        report.accepted,
        report.threads,
        report.errors.len()
    );
    send(
        stream,
        &Message::ServersReport {
            report: Box::new(report),
        },
    )?;
    // The server keeps serving until the client's clients are closed and it says `bye`.
    // Whatever ends that wait, the report is already with the client.
    let _ = wait_for(stream, server, "bye", patience);
    Ok(summary)
}

/// Waits for the client's next step; a server process that ended meanwhile, a client gone,
/// or `patience` run out ends the point.
fn wait_for(
    stream: &mut ControlStream,
    server: &mut servers::process::ServerProcess,
    expecting: &str,
    patience: Duration,
) -> Result<(), Refusal> {
    let until = Instant::now() + patience;
    let _ = stream.set_read_timeout(Some(RUN_POLL));
    loop {
        let got = protocol::read_message(stream);
        match got {
            Ok(Message::ServersWindow) if expecting == "servers_window" => return Ok(()),
            Ok(Message::ServersStop) if expecting == "servers_stop" => return Ok(()),
            Ok(Message::Bye) if expecting == "bye" => return Ok(()),
            Ok(other) => return Err(out_of_order(expecting, &other)),
            Err(FrameError::Idle) => {}
            Err(FrameError::Closed) => return Err(refuse(
                ErrorCode::Truncated,
                "the client closed the control connection during the point; its server was stopped",
            )),
            Err(e) => return Err(e.into()),
        }
        if let Some(reason) = server.ended() {
            return Err(refuse(ErrorCode::Failed, reason));
        }
        if super::stopping() {
            return Err(refuse(
                ErrorCode::Failed,
                "the server was asked to end (SIGTERM or SIGINT); the point's server was stopped",
            ));
        }
        if Instant::now() > until {
            return Err(refuse(
                ErrorCode::Timeout,
                format!(
                    "no {expecting} within {} ms; the point's server was stopped",
                    patience.as_millis()
                ),
            ));
        }
    }
}
