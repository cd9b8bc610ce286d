//! mesh: `bytepath server`'s side of a peer run. A mesh driver asks this server (the source
//! host) to run one point against another `bytepath server` (the destination) exactly as
//! `bytepath run --remote` would from here, and to send the run record back. The destination's
//! address must lie inside this server's `--allow-peers`: it is resolved once, checked, and
//! the run connects to that very address (a name that resolves elsewhere later changes
//! nothing). While the run goes on, a `Stop` from the driver, or the driver's disappearance,
//! interrupts it; the record then says it was interrupted.
use super::{refuse, send, spec_for, take_turn, Refusal, Served, State};
use crate::config::network::Placement;
use crate::config::{Network, RunSpec, Target};
use crate::engine::RunOutcome;
use crate::environment::Environment;
use crate::remote::channel::ControlStream;
use crate::remote::client::RemotePeer;
use crate::remote::protocol::{self, ErrorCode, FrameError, Message, RunRequest};
use std::net::{IpAddr, Shutdown, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// While the run goes on, how often the session looks for the driver's `Stop`.
const DRIVER_POLL: Duration = Duration::from_millis(200);

/// Serves one `PeerRun`: checks the peer against `--allow-peers` and the request against the
/// limits, claims this server (one test at a time), runs, and sends the record.
pub(super) fn serve(
    stream: &mut ControlStream,
    peer: &str,
    (src, dst): (&str, &str),
    request: &RunRequest,
    state: &State,
) -> Result<Served, Refusal> {
    let target = allowed_target(peer, &state.config.allow_peers)?;
    let spec = RunSpec {
        network: Network {
            placement: Placement::Remote,
            ..Network::default()
        },
        ..spec_for(request, &state.config.limits)?
    };
    let Some(claim) = take_turn(stream, state) else {
        return Ok("busy: another run is in progress".into());
    };
    let started = unix_ms();
    let unanswered = Arc::default();
    let (token, reverse) = (state.config.token.clone(), request.reverse);
    let peer_run =
        RemotePeer::for_peer_run(target.clone(), token, reverse, Arc::clone(&unanswered));
    // A mechanism or receive path this kernel lacks is skipped with the probe's reason, as a
    // point on one host is (the destination's kernel answers for its own side when it sets up).
    let probed = crate::mechanism::supported(spec.mechanism)
        .and_then(|()| crate::mechanism::receive::path::supported(spec.recv_path));
    let outcome = match probed {
        Ok(()) => run_watched(stream, &spec, peer_run),
        Err(reason) => RunOutcome::skipped(&spec, format!("on the source host: {reason}")),
    };
    drop(claim);
    let ended = unix_ms();
    let (record, status, bytes) = record_of(&spec, &outcome, (src, dst))?;
    send(stream, &Message::PeerRecord { record })?;
    let ran = format!(
        "peer run {src} -> {dst} (toward {target}): {} {} {} B x{} {}",
        spec.transport.name(),
        spec.pattern.name(),
        spec.message_size,
        spec.threads,
        spec.mechanism.name(),
    );
    // Why the peer answered no bytepath hello: for this log only, never the driver's record.
    let why = match unanswered.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(why) => format!(" (no bytepath hello: {why})"),
        None => String::new(),
    };
    Ok(Served {
        detail: format!("{ran}: {status}{why}, from {started} to {ended} unix ms"),
        ran: Some(ran),
        bytes: Some(bytes),
    })
}

/// The run's record as the driver gets it (`command` mesh, `src`, `dst`), its status and the
/// bytes it moved.
fn record_of(
    spec: &RunSpec,
    outcome: &RunOutcome,
    (src, dst): (&str, &str),
) -> Result<(serde_json::Value, String, u64), Refusal> {
    let cpus = crate::sys::affinity::allowed_cpus().unwrap_or_default();
    let mut record = crate::record::build(spec, outcome, Environment::detect(&cpus));
    record.command = "mesh".into();
    record.src = Some(src.to_string());
    record.dst = Some(dst.to_string());
    let status = record.status.clone();
    let bytes = record.transfer.sender_sent_bytes + record.transfer.receiver_sent_bytes;
    let record = serde_json::to_value(&record).map_err(|e| {
        refuse(
            ErrorCode::Failed,
            format!("the record does not serialize: {e}"),
        )
    })?;
    Ok((record, status, bytes))
}

/// The peer as a target with an address this server may send to: the first address its name
/// resolves to that `--allow-peers` holds, written as that address so nothing resolves again.
fn allowed_target(
    peer: &str,
    allowed: &crate::remote::allow::AllowPeers,
) -> Result<Target, Refusal> {
    if allowed.is_empty() {
        return Err(refuse(
            ErrorCode::Forbidden,
            "this server runs no test toward another host: it was started without --allow-peers",
        ));
    }
    let target = crate::config::parse_remote(peer)
        .map_err(|e| refuse(ErrorCode::Refused, format!("peer: {}", e.0)))?;
    let addrs: Vec<IpAddr> = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|e| {
            refuse(
                ErrorCode::Failed,
                format!("peer {target}: does not resolve here: {e}"),
            )
        })?
        .map(|a| a.ip())
        .collect();
    match addrs.iter().find(|a| allowed.allows(**a)) {
        Some(addr) => Ok(Target {
            host: addr.to_string(),
            port: target.port,
        }),
        None => {
            let shown: Vec<String> = addrs.iter().map(IpAddr::to_string).collect();
            Err(refuse(
                ErrorCode::Forbidden,
                format!(
                    "peer {target} ({}) is outside this server's --allow-peers {allowed}",
                    shown.join(", ")
                ),
            ))
        }
    }
}

/// Runs the point against the peer on a thread of its own while this one watches the driver:
/// its `Stop`, or its connection closing, interrupts the run. When the run ends, its thread
/// shuts the reading half of the control connection, so the watch ends at once instead of at
/// its next poll (the record is still written on the other half). A run that cannot start
/// becomes a failed outcome naming why, so the driver always gets a record.
fn run_watched(stream: &mut ControlStream, spec: &RunSpec, peer: RemotePeer) -> RunOutcome {
    let interrupt = AtomicBool::new(false);
    let _ = stream.set_read_timeout(Some(DRIVER_POLL));
    let waker = stream.try_clone();
    let outcome = std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            let outcome = crate::engine::peer::run_with_peer(spec, Box::new(peer), &interrupt)
                .unwrap_or_else(|e| RunOutcome::not_run(spec, e.to_string()));
            if let Ok(waker) = &waker {
                let _ = waker.shutdown(Shutdown::Read);
            }
            outcome
        });
        while !run.is_finished() {
            // The server asked to end: the run stops and its record says it was interrupted.
            if super::stopping() {
                interrupt.store(true, Ordering::SeqCst);
            }
            match protocol::read_message(stream) {
                Err(FrameError::Idle) => {}
                Ok(Message::Stop) => interrupt.store(true, Ordering::SeqCst),
                // The run ended (its thread shut this half), or the driver is gone or confused:
                // either way nobody reads more from it.
                Ok(_) | Err(_) => {
                    if !run.is_finished() {
                        interrupt.store(true, Ordering::SeqCst);
                    }
                    break;
                }
            }
        }
        run.join()
    });
    outcome.unwrap_or_else(|_| RunOutcome::not_run(spec, "the run's thread panicked".into()))
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::allow::AllowPeers;

    #[test]
    fn a_peer_outside_the_list_is_forbidden_and_one_inside_is_pinned_to_its_address() {
        let allowed = AllowPeers::parse(Some("127.0.0.0/8")).unwrap();
        let target =
            allowed_target("localhost:7000", &allowed).unwrap_or_else(|r| panic!("{}", r.message));
        assert_eq!((target.host.as_str(), target.port), ("127.0.0.1", 7000));
        let refused = allowed_target("10.9.9.9:7000", &allowed).err().unwrap();
        assert_eq!(refused.code, ErrorCode::Forbidden);
        assert!(
            refused.message.contains("10.9.9.9") && refused.message.contains("127.0.0.0/8"),
            "{}",
            refused.message
        );
        let none = allowed_target("127.0.0.1:7000", &AllowPeers::default())
            .err()
            .unwrap();
        assert!(none.message.contains("--allow-peers"), "{}", none.message);
    }
}
