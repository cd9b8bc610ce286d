//! Loopback TCP pairs and a checking reader, for `uring`'s tests and `uring_zc`'s.
use super::super::receive::Verifier;
use super::super::{FlowContext, MechanismKind, SendMechanism};
use crate::sys::socket;
use crate::transport::Endpoint;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A connected loopback TCP pair: the sender's endpoint (TCP_NODELAY, as zero copy gets
/// it) and the receiver's stream, whose receive buffer is `receive_buffer` when given.
pub fn pair(receive_buffer: Option<i32>) -> (Endpoint, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    if let Some(bytes) = receive_buffer {
        // Set on the listener so the accepted socket's window is small from the start.
        socket::set_int_option(listener.as_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, bytes).unwrap();
    }
    let sender = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    sender.set_nodelay(true).unwrap();
    let (receiver, _) = listener.accept().unwrap();
    (Endpoint::socket(sender), receiver)
}

/// Reads until EOF, after sleeping `delay`, checking every byte against flow `flow`'s
/// pattern.
pub fn reader(
    mut stream: TcpStream,
    flow: u32,
    size: usize,
    delay: Duration,
) -> JoinHandle<Verifier> {
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        let mut verifier = Verifier::new(flow, size);
        let mut buf = vec![0u8; 256 << 10];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => return verifier,
                Ok(n) => verifier.check(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => panic!("reader: {e}"),
            }
        }
    })
}

/// Sends messages `0..count` through `mech`, finishes it, and ends the stream.
pub fn send(mech: &mut dyn SendMechanism, ep: &Endpoint, count: u64) -> std::io::Result<()> {
    for seq in 0..count {
        mech.send_message(ep, seq)?;
    }
    mech.finish(ep, Instant::now() + Duration::from_secs(10))?;
    ep.finish_writing()
}

/// A flow context with the pattern written into every message.
pub fn context(size: usize, queue_depth: u32, flush_each: bool) -> FlowContext {
    FlowContext {
        flow: 3,
        message_size: size,
        fill_pattern: true,
        send_buffer: 256 << 10,
        queue_depth,
        flush_each,
        framing: None,
    }
}

/// Whether this kernel has `kind`; says why the test is skipped when not.
pub fn available(kind: MechanismKind) -> bool {
    match super::super::supported(kind) {
        Ok(()) => true,
        Err(reason) => {
            crate::skip_test(None, reason);
            false
        }
    }
}
