//! How the sending side hands a message to the kernel. One file per mechanism behind the
//! `SendMechanism` trait; `build` is the one place that maps a `MechanismKind` to code.
pub mod completions;
mod copy;
mod gather;
pub mod message;
pub mod pattern;
pub mod receive;
mod send;
mod zerocopy;

use crate::config::ConfigError;
use crate::transport::Endpoint;
use std::io::{self, IoSlice};

pub use zerocopy::{pool_size as zerocopy_pool_size, ZerocopyStats};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MechanismKind {
    /// Reference: one prebuilt contiguous buffer, send() — what iperf3 and netperf do.
    Send,
    /// Two-copy: serialize the 8 fields into one buffer, then send().
    Copy,
    /// One-copy: sendmsg() with an 8-entry iovec over the fields.
    Gather,
    /// sendmsg(MSG_ZEROCOPY) over the fields, completions read from the error queue.
    Zerocopy,
}

impl MechanismKind {
    pub const ALL: [MechanismKind; 4] = [
        MechanismKind::Send,
        MechanismKind::Copy,
        MechanismKind::Gather,
        MechanismKind::Zerocopy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MechanismKind::Send => "send",
            MechanismKind::Copy => "copy",
            MechanismKind::Gather => "gather",
            MechanismKind::Zerocopy => "zerocopy",
        }
    }

    /// Whether the sending socket needs SO_ZEROCOPY.
    pub fn needs_zerocopy_socket(self) -> bool {
        self == MechanismKind::Zerocopy
    }
}

impl std::str::FromStr for MechanismKind {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        MechanismKind::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                ConfigError(format!(
                    "--mechanism {s:?}: unknown mechanism; allowed: send, copy, gather, zerocopy"
                ))
            })
    }
}

/// What one flow's sending side needs to know to build its mechanism.
#[derive(Debug, Clone, Copy)]
pub struct FlowContext {
    pub flow: u32,
    pub message_size: usize,
    /// Write the (flow, sequence) pattern into every message (for `--verify`).
    pub fill_pattern: bool,
    /// What the sender's kernel side can hold (socket send buffer, pipe size): it bounds how
    /// many messages can be in flight.
    pub send_buffer: usize,
}

/// One flow's sender. Buffers handed to the kernel by reference stay owned by the mechanism
/// until the kernel says it is done with them.
pub trait SendMechanism: Send {
    /// Hands message `seq` of this flow to the kernel, whole (partial sends are continued).
    fn send_message(&mut self, ep: &Endpoint, seq: u64) -> io::Result<()>;

    /// Waits, at most until `deadline`, for anything the kernel still holds.
    fn finish(&mut self, _ep: &Endpoint, _deadline: std::time::Instant) -> io::Result<()> {
        Ok(())
    }

    /// Zero-copy accounting, for mechanisms that have it.
    fn zerocopy_stats(&self) -> Option<ZerocopyStats> {
        None
    }
}

pub fn build(kind: MechanismKind, ctx: FlowContext) -> Box<dyn SendMechanism> {
    match kind {
        MechanismKind::Send => Box::new(send::SendReference::new(ctx)),
        MechanismKind::Copy => Box::new(copy::TwoCopy::new(ctx)),
        MechanismKind::Gather => Box::new(gather::Gather::new(ctx)),
        MechanismKind::Zerocopy => Box::new(zerocopy::Zerocopy::new(ctx)),
    }
}

/// Sends all of `buf`, continuing after partial sends and EINTR.
pub(crate) fn send_all(ep: &Endpoint, buf: &[u8]) -> io::Result<()> {
    let mut sent = 0;
    while sent < buf.len() {
        match ep.write(&buf[sent..]) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Sends a whole gather list through `send_call`, advancing the iovec after partial sends.
/// `send_call` returns how many bytes the kernel took; it is a parameter so the advance logic
/// is tested without a socket.
pub(crate) fn send_all_vectored(
    mut iov: &mut [IoSlice<'_>],
    mut send_call: impl FnMut(&[IoSlice<'_>]) -> io::Result<usize>,
) -> io::Result<()> {
    IoSlice::advance_slices(&mut iov, 0); // skip leading empty slices
    while !iov.is_empty() {
        match send_call(iov) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut iov, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gather_through(parts: &[&[u8]], steps: &[usize]) -> Vec<u8> {
        let mut iov: Vec<IoSlice<'_>> = parts.iter().map(|p| IoSlice::new(p)).collect();
        let mut out = Vec::new();
        let mut step = steps.iter().cycle();
        send_all_vectored(&mut iov, |iov| {
            let want = *step.next().unwrap();
            let mut took = 0;
            for s in iov {
                let n = (want - took).min(s.len());
                out.extend_from_slice(&s[..n]);
                took += n;
                if took == want {
                    break;
                }
            }
            Ok(took)
        })
        .unwrap();
        out
    }

    #[test]
    fn partial_sends_advance_the_iovec_without_losing_or_repeating_bytes() {
        let fields: Vec<Vec<u8>> = (0..8u8).map(|i| vec![i; 5]).collect();
        let parts: Vec<&[u8]> = fields.iter().map(|f| f.as_slice()).collect();
        let expected: Vec<u8> = fields.concat();
        for steps in [&[1usize][..], &[3, 7], &[5], &[13, 2], &[40]] {
            assert_eq!(gather_through(&parts, steps), expected, "steps {steps:?}");
        }
    }

    #[test]
    fn a_send_that_takes_nothing_is_an_error_not_a_hang() {
        let data = [1u8; 4];
        let mut iov = [IoSlice::new(&data)];
        let err = send_all_vectored(&mut iov, |_| Ok(0)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WriteZero);
    }

    #[test]
    fn interrupted_sends_are_retried() {
        let data = [7u8; 4];
        let mut iov = [IoSlice::new(&data)];
        let mut calls = 0;
        send_all_vectored(&mut iov, |iov| {
            calls += 1;
            if calls == 1 {
                Err(io::ErrorKind::Interrupted.into())
            } else {
                Ok(iov[0].len())
            }
        })
        .unwrap();
        assert_eq!(calls, 2);
    }

    #[test]
    fn mechanism_names_round_trip_and_unknown_ones_are_refused() {
        for m in MechanismKind::ALL {
            assert_eq!(m.name().parse::<MechanismKind>().unwrap(), m);
        }
        let err = "zero".parse::<MechanismKind>().unwrap_err().0;
        assert!(err.contains("\"zero\"") && err.contains("send, copy, gather, zerocopy"));
    }
}
