//! The blocking servers of the seeds: iterative (one client at a time, in accept order) and
//! threaded (a thread per client). Both read a whole request of --size bytes, then write it back.
//! Each accepted connection passes the point's door first: one turned away is closed before a
//! buffer or a thread is made for it, and once the door's count is in the listener is closed.
use super::door::{Doorkeeper, Entry};
use super::ServerStats;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

/// A stack per client thread: the echo loop needs little, and 10,000 default 2 MiB stacks
/// would reserve 20 GiB of address space.
const CLIENT_THREAD_STACK: usize = 64 << 10;

/// Echoes whole requests until the client closes or fails.
fn echo_until_closed(mut stream: TcpStream, size: usize) {
    let _ = stream.set_nodelay(true);
    let mut buffer = vec![0u8; size];
    while stream.read_exact(&mut buffer).is_ok() {
        if stream.write_all(&buffer).is_err() {
            return;
        }
    }
}

/// The next connection the door lets in, counted, and whether it was the last one (the
/// listener is to be closed); those turned away are dropped (closed) here.
fn next_client(
    listener: &TcpListener,
    door: &Doorkeeper,
    stats: &ServerStats,
) -> io::Result<(TcpStream, bool)> {
    loop {
        let (stream, from) = listener.accept()?;
        match door.entry(from.ip()) {
            Entry::Away => drop(stream),
            entry => {
                stats.accepted();
                return Ok((stream, entry == Entry::Last));
            }
        }
    }
}

pub fn start_iterative(
    (listener, door): (TcpListener, Arc<Doorkeeper>),
    size: usize,
    stats: &Arc<ServerStats>,
) -> io::Result<()> {
    let shared = Arc::clone(stats);
    super::spawn_server_thread("server-0", stats, move || loop {
        let (stream, last) = next_client(&listener, &door, &shared)?;
        if last {
            drop(listener);
            echo_until_closed(stream, size);
            return Ok(());
        }
        echo_until_closed(stream, size);
    })
}

pub fn start_threaded(
    (listener, door): (TcpListener, Arc<Doorkeeper>),
    size: usize,
    stats: &Arc<ServerStats>,
) -> io::Result<()> {
    let shared = Arc::clone(stats);
    super::spawn_server_thread("acceptor", stats, move || loop {
        let (stream, last) = next_client(&listener, &door, &shared)?;
        let counted = Arc::clone(&shared);
        counted.thread_started();
        let spawned = std::thread::Builder::new()
            .stack_size(CLIENT_THREAD_STACK)
            .spawn(move || {
                echo_until_closed(stream, size);
                counted.thread_ended();
            });
        if let Err(e) = spawned {
            shared.thread_ended();
            shared.error(format!("a client thread could not start: {e}"));
        }
        if last {
            // The acceptor ends and its listener closes with it.
            return Ok(());
        }
    })
}
