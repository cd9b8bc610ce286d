//! `--bidir` (both directions of every stream flow at once, as iperf3 --bidir): which runs
//! can carry it.
use super::{bad, Pattern, RunSpec};
use crate::error::ConfigError;
use crate::mechanism::descriptor::names;
use crate::mechanism::receive::path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::transport::Transport;

/// Why `--remote` cannot run --bidir yet.
pub const REMOTE_REFUSAL: &str = "--bidir with --remote: not supported yet (the server runs one side of each flow in one direction); run --bidir on this host";

/// Refuses what --bidir cannot do here, one line naming the value and what is allowed (among
/// the mechanisms `known`).
pub fn check(spec: &RunSpec, known: &[MechanismKind]) -> Result<(), ConfigError> {
    if !spec.bidir {
        return Ok(());
    }
    if spec.pattern != Pattern::Stream {
        return Err(bad(format!(
            "--bidir with --pattern {}: allowed only with stream (rr and crr already go both ways)",
            spec.pattern.name()
        )));
    }
    if !matches!(spec.transport, Transport::Tcp | Transport::Unix) {
        return Err(bad(format!(
            "--bidir with --transport {}: allowed only with tcp and unix (one socket carries both directions)",
            spec.transport.name()
        )));
    }
    if !spec.mechanism.patterns.bidir {
        return Err(bad(format!(
            "--mechanism {} with --bidir: not supported yet; allowed: {}",
            spec.mechanism.name(),
            names(known, |d| d.patterns.bidir).join(", ")
        )));
    }
    let unsupported = [
        (spec.recv_path != RecvPath::Recv, "--recv other than recv"),
        (spec.processes, "--processes"),
        (spec.network.is_netns(), "--netns"),
        (
            spec.stopping.messages_per_flow.is_some(),
            "--messages/--bytes",
        ),
    ];
    if let Some((_, what)) = unsupported.iter().find(|(on, _)| *on) {
        return Err(bad(format!(
            "{what} with --bidir: not supported yet; give --duration, on loopback, with --recv recv"
        )));
    }
    Ok(())
}
