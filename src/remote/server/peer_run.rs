//! mesh: `bytepath server`'s side of a peer run. A mesh driver asks this server (the source
//! host) to run one point against another `bytepath server` (the destination) exactly as
//! `bytepath run --remote` would from here, and to send the run record back. The destination's
//! control port must be in this server's `--peer-ports` and its address inside its
//! `--allow-peers`: it is resolved once, checked, and the run connects to that very address (a
//! name that resolves elsewhere later changes nothing). A refusal of the destination, and a
//! destination that answers no bytepath hello, are answered in the same words for every cause
//! and after the same fixed delay (`REFUSED_AFTER`), so the driver cannot use this server to
//! learn what a name resolves to, nor which ports are closed, filtered or open; the cause goes
//! to the server's log. While the run goes on, a `Stop` from the driver, or the driver's
//! disappearance, interrupts it; the record then says it was interrupted.
use super::{refuse, send, spec_for, take_turn, Refusal, Served, State};
use crate::config::network::Placement;
use crate::config::{Network, RunSpec, Target};
use crate::engine::RunOutcome;
use crate::environment::Environment;
use crate::remote::allow::{AllowPeers, PeerPorts};
use crate::remote::channel::ControlStream;
use crate::remote::client::RemotePeer;
use crate::remote::protocol::{self, ErrorCode, FrameError, Message, RunRequest};
use std::net::{IpAddr, Shutdown, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// While the run goes on, how often the session looks for the driver's `Stop`.
const DRIVER_POLL: Duration = Duration::from_millis(200);
/// When, after the request, a refused destination or one that answered no bytepath hello is
/// answered: past the longest such a hello takes, with a second to build the record, so every
/// cause takes the same time.
pub(super) const REFUSED_AFTER: Duration =
    Duration::from_secs(RemotePeer::PEER_HELLO_BUDGET.as_secs() + 1);

/// Serves one `PeerRun`: checks the peer against `--peer-ports` and `--allow-peers` and the
/// request against the limits, claims this server (one test at a time), runs, and sends the
/// record.
pub(super) fn serve(
    stream: &mut ControlStream,
    peer: &str,
    (src, dst): (&str, &str),
    request: &RunRequest,
    state: &State,
) -> Result<Served, Refusal> {
    let asked = Instant::now();
    let own_port = stream.local_addr().map_or(state.config.port, |a| a.port());
    let allowed = (&state.config.allow_peers, &state.config.peer_ports);
    let target = allowed_target(peer, allowed, own_port).inspect_err(|refusal| {
        if refusal.logged.is_some() {
            answer_at(asked + REFUSED_AFTER);
        }
    })?;
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
    let unanswered: Arc<Mutex<Option<String>>> = Arc::default();
    let (token, reverse) = (state.config.token.clone(), request.reverse);
    let peer_run =
        RemotePeer::for_peer_run(target.clone(), token, reverse, Arc::clone(&unanswered));
    let outcome = run_probed(stream, &spec, peer_run);
    drop(claim);
    // Why the peer answered no bytepath hello: for this log only, never the driver's record.
    let unanswered = unanswered.lock().unwrap_or_else(|p| p.into_inner()).take();
    let why = match unanswered {
        Some(why) => {
            answer_at(asked + REFUSED_AFTER);
            format!(" (no bytepath hello: {why})")
        }
        None => String::new(),
    };
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
    Ok(Served {
        detail: format!("{ran}: {status}{why}, from {started} to {ended} unix ms"),
        ran: Some(ran),
        bytes: Some(bytes),
    })
}

/// The run, or a skipped outcome when a mechanism or receive path this kernel lacks is asked
/// for, with the probe's reason, as a point on one host is (the destination's kernel answers
/// for its own side when it sets up).
fn run_probed(stream: &mut ControlStream, spec: &RunSpec, peer: RemotePeer) -> RunOutcome {
    let probed = crate::mechanism::supported(spec.mechanism)
        .and_then(|()| crate::mechanism::receive::path::supported(spec.recv_path));
    match probed {
        Ok(()) => run_watched(stream, spec, peer),
        Err(reason) => RunOutcome::skipped(spec, format!("on the source host: {reason}")),
    }
}

/// Waits until `when` (the fixed time a refusal is answered at), or until the server is asked
/// to end.
fn answer_at(when: Instant) {
    while !super::stopping() {
        let left = when.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(DRIVER_POLL));
    }
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

/// The peer as a target this server may send to: its port in `--peer-ports` (`own_port`, this
/// server's control port, when the flag was left out), then the first address its name
/// resolves to that `--allow-peers` holds, written as that address so nothing resolves again.
/// Refused in the same words whatever the cause (`refused_peer`).
fn allowed_target(
    peer: &str,
    (allowed, ports): (&AllowPeers, &PeerPorts),
    own_port: u16,
) -> Result<Target, Refusal> {
    if allowed.is_empty() {
        return Err(refuse(
            ErrorCode::Forbidden,
            "this server runs no test toward another host: it was started without --allow-peers",
        ));
    }
    let target = crate::config::parse_remote(peer)
        .map_err(|e| refuse(ErrorCode::Refused, format!("peer: {}", e.0)))?;
    if !ports.allows(target.port, own_port) {
        let own = if ports.is_default() {
            format!(" ({own_port})")
        } else {
            String::new()
        };
        let why = format!("port {} is outside --peer-ports {ports}{own}", target.port);
        return Err(refused_peer(&target, why));
    }
    let addrs: Vec<IpAddr> = match (target.host.as_str(), target.port).to_socket_addrs() {
        Ok(addrs) => addrs.map(|a| a.ip()).collect(),
        Err(e) => return Err(refused_peer(&target, format!("does not resolve here: {e}"))),
    };
    match addrs.iter().find(|a| allowed.allows(**a)) {
        Some(addr) => Ok(Target {
            host: addr.to_string(),
            port: target.port,
        }),
        None => {
            let shown: Vec<String> = addrs.iter().map(IpAddr::to_string).collect();
            let why = format!(
                "resolves to {}, outside --allow-peers {allowed}",
                shown.join(", ")
            );
            Err(refused_peer(&target, why))
        }
    }
}

/// A destination refused: the driver is told only that, the log why.
fn refused_peer(target: &Target, why: String) -> Refusal {
    Refusal {
        logged: Some(format!("peer {target} refused: {why}")),
        ..refuse(
            ErrorCode::Forbidden,
            format!("peer {target}: not a host and port this server may run tests toward (its --allow-peers and --peer-ports; the server's log says why)"),
        )
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

    fn target(peer: &str, allowed: &str, ports: Option<&str>) -> Result<Target, Refusal> {
        let allowed = AllowPeers::parse(Some(allowed)).unwrap();
        let ports = PeerPorts::parse(ports).unwrap();
        allowed_target(peer, (&allowed, &ports), 7000)
    }

    #[test]
    fn a_peer_inside_both_lists_is_pinned_to_its_address() {
        let pinned = target("localhost:7000", "127.0.0.0/8", None)
            .unwrap_or_else(|r| panic!("{}", r.message));
        assert_eq!((pinned.host.as_str(), pinned.port), ("127.0.0.1", 7000));
        let listed = target("127.0.0.2:5401", "127.0.0.0/8", Some("5301,5400-5410"))
            .unwrap_or_else(|r| panic!("{}", r.message));
        assert_eq!(listed.port, 5401);
    }

    #[test]
    fn every_refused_peer_is_told_the_same_words_and_the_log_why() {
        let cases = [
            (
                "10.9.9.9:7000",
                None,
                "resolves to 10.9.9.9, outside --allow-peers 127.0.0.0/8",
            ),
            (
                "127.0.0.1:7001",
                None,
                "port 7001 is outside --peer-ports this server's own port (7000)",
            ),
            (
                "127.0.0.1:22",
                Some("5301"),
                "port 22 is outside --peer-ports 5301",
            ),
            ("no-such-host.invalid:7000", None, "does not resolve here"),
        ];
        for (peer, ports, why) in cases {
            let refused = target(peer, "127.0.0.0/8", ports).err().unwrap();
            assert_eq!(refused.code, ErrorCode::Forbidden);
            let told = refused.message.replace(peer, "PEER");
            assert_eq!(
                told,
                "peer PEER: not a host and port this server may run tests toward (its --allow-peers and --peer-ports; the server's log says why)"
            );
            let logged = refused.logged.unwrap();
            assert!(logged.contains(why), "{logged}");
        }
        let none = allowed_target(
            "127.0.0.1:7000",
            (&AllowPeers::default(), &PeerPorts::default()),
            7000,
        )
        .err()
        .unwrap();
        assert!(
            none.message.contains("--allow-peers") && none.logged.is_none(),
            "{}",
            none.message
        );
    }

    #[test]
    fn a_refusal_waits_past_the_longest_hello() {
        assert!(REFUSED_AFTER > RemotePeer::PEER_HELLO_BUDGET);
        let start = Instant::now();
        answer_at(start + Duration::from_millis(300));
        assert!(start.elapsed() >= Duration::from_millis(300));
    }
}
