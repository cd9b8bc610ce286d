//! The blocking servers of the seeds: iterative (one client at a time, in accept order) and
//! threaded (a thread per client). Both read a whole request of --size bytes, then write it back.
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

pub fn start_iterative(
    listener: TcpListener,
    size: usize,
    stats: &Arc<ServerStats>,
) -> io::Result<()> {
    let shared = Arc::clone(stats);
    super::spawn_server_thread("server-0", stats, move || loop {
        let (stream, _) = listener.accept()?;
        shared.accepted();
        echo_until_closed(stream, size);
    })
}

pub fn start_threaded(
    listener: TcpListener,
    size: usize,
    stats: &Arc<ServerStats>,
) -> io::Result<()> {
    let shared = Arc::clone(stats);
    super::spawn_server_thread("acceptor", stats, move || loop {
        let (stream, _) = listener.accept()?;
        shared.accepted();
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
    })
}
