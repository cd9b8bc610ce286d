//! Flows inside one machine without the network stack: AF_UNIX stream socket pairs
//! (socketpair(2), unix(7)), pipe pairs (pipe(7)) and shared-memory rings, both sides in this
//! process.
use super::{Endpoint, FlowConnector, FlowEnds, SocketOptions};
use crate::sys::ring::Ring;
use crate::sys::{fdio, socket};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;

pub struct UnixPair;

impl FlowConnector for UnixPair {
    fn connect(&self, flows: usize, _options: SocketOptions) -> io::Result<Vec<FlowEnds>> {
        (0..flows)
            .map(|_| {
                let (a, b) = UnixStream::pair()?;
                let send_buffer =
                    socket::get_int_option(a.as_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF)? as usize;
                Ok(FlowEnds {
                    sender: Endpoint::socket(a),
                    receiver: Endpoint::socket(b),
                    send_buffer,
                })
            })
            .collect()
    }

    fn describe(&self) -> String {
        "AF_UNIX stream socket pair, both sides in one process".into()
    }
}

pub struct PipePair;

impl FlowConnector for PipePair {
    fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowEnds>> {
        (0..flows)
            .map(|_| {
                let (to_receiver_r, to_receiver_w) = fdio::pipe()?;
                let (to_sender_r, to_sender_w) = fdio::pipe()?;
                if options.nonblocking_reads {
                    fdio::set_nonblocking(to_receiver_r.as_fd())?;
                    fdio::set_nonblocking(to_sender_r.as_fd())?;
                }
                if let Some(bytes) = options.pipe_size {
                    fdio::set_pipe_size(to_receiver_w.as_fd(), bytes)?;
                    fdio::set_pipe_size(to_sender_w.as_fd(), bytes)?;
                }
                let send_buffer = fdio::pipe_size(to_receiver_w.as_fd())?;
                Ok(FlowEnds {
                    sender: Endpoint::pipes(to_sender_r, to_receiver_w),
                    receiver: Endpoint::pipes(to_receiver_r, to_sender_w),
                    send_buffer,
                })
            })
            .collect()
    }

    fn describe(&self) -> String {
        "two pipes per flow (one each way), both sides in one process".into()
    }
}

/// Ring size when no `--pipe-size` is given: the default pipe buffer, so the two compare alike.
const DEFAULT_RING: usize = 64 << 10;

pub struct ShmRings;

impl FlowConnector for ShmRings {
    fn connect(&self, flows: usize, options: SocketOptions) -> io::Result<Vec<FlowEnds>> {
        let size = options.pipe_size.unwrap_or(DEFAULT_RING);
        (0..flows)
            .map(|_| {
                let to_receiver = Arc::new(Ring::new(size)?);
                let to_sender = Arc::new(Ring::new(size)?);
                let send_buffer = to_receiver.capacity();
                Ok(FlowEnds {
                    sender: Endpoint::rings(to_sender.clone(), to_receiver.clone()),
                    receiver: Endpoint::rings(to_receiver, to_sender),
                    send_buffer,
                })
            })
            .collect()
    }

    fn describe(&self) -> String {
        "two shared-memory rings per flow (spin-then-futex), both sides in one process".into()
    }
}
