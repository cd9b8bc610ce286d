//! `--pattern crr` (connect, request, response, close; netperf's TCP_CRR, neper's tcp_crr):
//! what a transaction's connection is opened and closed with, and which runs can carry it.
//! The client closes first, so TIME_WAIT (RFC 9293 §3.6) lands on the client's ports.
use super::{bad, Pattern, RunSpec};
use crate::error::ConfigError;
use crate::mechanism::descriptor::names;
use crate::mechanism::receive::path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::transport::Transport;

/// How each crr connection ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CrrOptions {
    /// `--linger-zero`: SO_LINGER {on, 0} on the client, so its close sends RST and leaves no
    /// TIME_WAIT behind (what a client that must not run out of ports may do; the server then
    /// sees a reset, not a FIN).
    pub linger_zero: bool,
}

/// Why `mechanism` cannot carry a crr transaction, with the mechanisms among `known` that
/// can, or `None` when it can.
pub fn mechanism_refusal(mechanism: MechanismKind, known: &[MechanismKind]) -> Option<String> {
    let why = mechanism.patterns.crr.err()?;
    let allowed = names(known, |d| d.patterns.crr.is_ok());
    Some(format!("{why}; allowed: {}", allowed.join(", ")))
}

/// Refuses what a crr run cannot do, one line naming the value and what is allowed (among
/// the mechanisms `known`); and `--linger-zero` outside crr over tcp.
pub fn check(spec: &RunSpec, known: &[MechanismKind]) -> Result<(), ConfigError> {
    if spec.pattern != Pattern::Crr {
        if spec.crr.linger_zero {
            return Err(bad(format!(
                "--linger-zero with --pattern {}: applies to --pattern crr only",
                spec.pattern.name()
            )));
        }
        return Ok(());
    }
    if !matches!(spec.transport, Transport::Tcp | Transport::Unix) {
        return Err(bad(format!(
            "--pattern crr with --transport {}: a transaction opens a connection, so allowed only with tcp and unix",
            spec.transport.name()
        )));
    }
    if let Some(why) = mechanism_refusal(spec.mechanism, known) {
        return Err(bad(format!(
            "--mechanism {} with --pattern crr: {why}",
            spec.mechanism.name()
        )));
    }
    if spec.recv_path != RecvPath::Recv {
        return Err(bad(format!(
            "--recv {} with --pattern crr: allowed only with recv (each connection carries one message each way)",
            spec.recv_path.name()
        )));
    }
    if spec.processes {
        return Err(bad(
            "--processes with --pattern crr: not supported yet (the listener is shared by the two threads); drop --processes",
        ));
    }
    if spec.network.is_netns() {
        return Err(bad(NETNS_REFUSAL));
    }
    if spec.crr.linger_zero && spec.transport != Transport::Tcp {
        return Err(bad(
            "--linger-zero with --transport unix: a unix socket has no TIME_WAIT to avoid; allowed only with tcp",
        ));
    }
    Ok(())
}

/// A sweep's refusals for `--patterns` with crr: every listed mechanism must carry it (the
/// refusal names those among `known` that do), and the placement must be loopback on this
/// host.
pub fn check_sweep(
    mechanisms: &[MechanismKind],
    known: &[MechanismKind],
    recv_path: RecvPath,
    netns: bool,
    remote: bool,
) -> Result<(), ConfigError> {
    if let Some((m, why)) = mechanisms
        .iter()
        .find_map(|&m| mechanism_refusal(m, known).map(|why| (m, why)))
    {
        return Err(bad(format!(
            "--mechanisms {} with --patterns crr: {why}",
            m.name()
        )));
    }
    if recv_path != RecvPath::Recv {
        return Err(bad(format!(
            "--recv {} with --patterns crr: allowed only with recv (each connection carries one message each way)",
            recv_path.name()
        )));
    }
    if netns {
        return Err(bad(NETNS_REFUSAL));
    }
    if remote {
        return Err(bad(REMOTE_REFUSAL));
    }
    Ok(())
}

/// Why `mesh` cannot run crr yet (its pairs run through `bytepath server`).
pub const MESH_REFUSAL: &str = "--patterns crr with mesh: not supported yet (each pair runs through bytepath server, which keeps one connection per flow); allowed: stream, rr";

/// Why `--remote` cannot run crr yet.
pub const REMOTE_REFUSAL: &str = "--remote with --pattern crr: not supported yet (the remote server keeps one connection per flow; crr needs it to accept one per transaction); run crr on this host";
const NETNS_REFUSAL: &str = "--netns with --pattern crr: not supported yet (the client would connect from the other namespace per transaction); crr runs on loopback";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_message_mechanisms_carry_crr_and_the_others_say_why_not() {
        let all = MechanismKind::ALL;
        for m in [
            MechanismKind::SEND,
            MechanismKind::COPY,
            MechanismKind::GATHER,
        ] {
            assert_eq!(mechanism_refusal(m, all), None);
        }
        let why = mechanism_refusal(MechanismKind::SENDFILE, all).unwrap();
        assert!(
            why.ends_with("; allowed: send, copy, gather, uring, uring-gather"),
            "{why}"
        );
        let sweep = [MechanismKind::SEND, MechanismKind::ZEROCOPY];
        let err = check_sweep(&sweep, all, RecvPath::Recv, false, false)
            .unwrap_err()
            .0;
        assert!(
            err.starts_with("--mechanisms zerocopy with --patterns crr: zero-copy completions"),
            "{err}"
        );
        let err = check_sweep(&[MechanismKind::SEND], all, RecvPath::Recv, false, true)
            .unwrap_err()
            .0;
        assert!(err.starts_with("--remote with --pattern crr"), "{err}");
    }
}
