//! How the sending side hands a message to the kernel. One file per mechanism holds its
//! descriptor (`descriptor::MechanismDescriptor`: name, help, transports, patterns, kernel
//! probe, constructor, what `--verify` holds it to) and its sender behind `SendMechanism`;
//! `MechanismKind::ALL` below lists them, and the rest of bytepath reads that list.
pub(crate) mod buffer;
pub(crate) mod completions;
mod copy;
pub(crate) mod descriptor;
mod gather;
pub(crate) mod message;
pub(crate) mod page_refs;
pub(crate) mod pattern;
pub(crate) mod receive;
mod send;
mod sendfile;
mod sendmmsg;
mod splice;
mod uring;
pub(crate) mod verify;
mod zerocopy;

use crate::transport::datagram::Framing;
use crate::transport::Endpoint;
use std::io::{self, IoSlice};

pub use descriptor::{MechanismDescriptor, MechanismKind, Transports};
pub use page_refs::SpliceStats;
pub use zerocopy::{pool_size as zerocopy_pool_size, ZerocopyStats};

impl MechanismKind {
    /// Every send mechanism, in the order the command line lists them and the reports sort
    /// them: the reference, the copies, the batch of copies (sendmmsg), zero copy, io_uring,
    /// then the pipe and page-cache paths. A new mechanism is a file of its own (its descriptor and its sender) and a line
    /// here.
    pub const ALL: &'static [MechanismKind] = &[
        MechanismKind::SEND,
        MechanismKind::COPY,
        MechanismKind::GATHER,
        MechanismKind::SENDMMSG,
        MechanismKind::ZEROCOPY,
        MechanismKind::URING,
        MechanismKind::URING_GATHER,
        MechanismKind::URING_ZC,
        MechanismKind::SPLICE,
        MechanismKind::SENDFILE,
    ];
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
    /// io_uring mechanisms: sends submitted together (`--queue-depth`).
    pub queue_depth: u32,
    /// Every message must be on its way when `send_message` returns (rr: the peer answers only
    /// a whole request). Stream lets a batching mechanism hold messages until its batch is full.
    pub flush_each: bool,
    /// Datagram transports: how each message maps onto datagrams and sends, so a mechanism
    /// sizes what it hands the kernel at set-up, not on the first message.
    pub framing: Option<Framing>,
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

    /// Page-reference accounting (`splice`, `sendfile`): gifted pages, fresh pages, pieces,
    /// system calls per message.
    fn splice_stats(&self) -> Option<SpliceStats> {
        None
    }
}

/// The mechanism of one flow's sender, built by its descriptor: a mechanism that needs
/// kernel objects (a ring, a pipe, a memfd) creates them here, so a failure is a set-up error
/// of the run, not of a message.
pub fn build(kind: MechanismKind, ctx: FlowContext) -> io::Result<Box<dyn SendMechanism>> {
    (kind.build)(ctx)
}

/// Whether this kernel offers what `kind` needs, tried at run time; `Err` is the reason, in
/// one line, for the point to be skipped with. Each mechanism is tried once per process: a
/// sweep asks before every point.
pub fn supported(kind: MechanismKind) -> Result<(), String> {
    type Tried = Vec<(&'static str, Result<(), String>)>;
    static TRIED: std::sync::Mutex<Tried> = std::sync::Mutex::new(Vec::new());
    let tried = |kind: MechanismKind| {
        let done = TRIED.lock().unwrap_or_else(|p| p.into_inner());
        done.iter()
            .find(|(name, _)| *name == kind.name())
            .map(|(_, result)| result.clone())
    };
    if let Some(result) = tried(kind) {
        return result;
    }
    // Probed without the lock: a probe sends on loopback, and a second caller at worst
    // probes once more.
    let result = (kind.probe)();
    let mut done = TRIED.lock().unwrap_or_else(|p| p.into_inner());
    if !done.iter().any(|(name, _)| *name == kind.name()) {
        done.push((kind.name(), result.clone()));
    }
    result
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
    use crate::transport::{SocketOptions, Transport};

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
    fn every_stream_connector_carries_bytes_both_ways_and_ends_with_eof() {
        for t in Transport::ALL.into_iter().filter(|t| !t.is_datagram()) {
            let flows = crate::transport::connector(t)
                .connect(1, SocketOptions::default())
                .unwrap();
            let f = &flows[0];
            assert_eq!(f.sender.write(b"ping").unwrap(), 4, "{t:?}");
            let mut buf = [0u8; 8];
            assert_eq!(f.receiver.read(&mut buf, false).unwrap(), 4);
            // A gather write may be short: loop as senders do.
            let mut iov = [IoSlice::new(b"po"), IoSlice::new(b"ng")];
            send_all_vectored(&mut iov, |iov| f.receiver.write_vectored(iov)).unwrap();
            let mut got = 0;
            while got < 4 {
                got += f.sender.read(&mut buf[got..4], false).unwrap();
            }
            assert_eq!(&buf[..4], b"pong", "{t:?}");
            f.sender.finish_writing().unwrap();
            assert_eq!(f.receiver.read(&mut buf, false).unwrap(), 0, "{t:?}: EOF");
            assert!(f.send_buffer > 0);
        }
    }
}
